#!/usr/bin/env python3
"""Frontier's GPU operator collector: measures the operator tables the simulator
prices vLLM steps with, for one or more models (HF config.json) and TP sizes,
and merges them into flat CSVs + meta.yaml in --out.

  python3 profiles/collect/collect.py --model profiles/collect/models/llama-2-7b-hf/config.json \
      --tp 2 --out profiles/measured/h200-sxm
  python3 profiles/collect/collect.py --ops comm --out profiles/measured/h200-sxm   # >= 2 GPUs
  python3 profiles/collect/collect.py --merge DIR_A DIR_B --out profiles/measured/h200-sxm

This file and grids.py/schema.py import without torch; measuring imports torch lazily.
"""

import argparse
import datetime
import os
import platform
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import grids  # noqa: E402
import schema  # noqa: E402

ALL_OPS = ["launch", "gemm", "attention", "moe", "ops", "comm"]
HEADER_NOTE = ("operator tables measured by profiles/collect with PyTorch kernels (cuBLAS GEMM, torch SDPA "
               "flash-attention 2, torch._grouped_mm MoE, Triton elementwise, NCCL), not vLLM's own kernels")
SMI_FIELDS = ["index", "name", "driver_version", "pstate", "clocks.sm", "clocks.mem",
              "clocks.max.sm", "clocks.max.mem", "power.draw", "power.limit", "temperature.gpu"]


def hardware_name(gpu_name):
    n = gpu_name.lower()
    if "h200" in n:
        return "h200-nvl" if "nvl" in n else "h200-sxm"
    if "h100" in n:
        return "h100-pcie" if "pcie" in n else ("h100-nvl" if "nvl" in n else "h100-sxm")
    return "".join(c if c.isalnum() else "-" for c in n).strip("-") or "unknown"


def parse_list(text, allowed=None, cast=str):
    items = [cast(x.strip()) for x in text.split(",") if x.strip()]
    if allowed is not None:
        bad = [x for x in items if x not in allowed]
        if bad:
            raise SystemExit(f"unknown value(s) {bad}; allowed: {allowed}")
    return items


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", default=[], help="HF config.json path (repeatable)")
    p.add_argument("--tp", action="append", type=int, default=[], help="tensor-parallel size (repeatable)")
    p.add_argument("--out", required=True, help="output directory (tables merge into it)")
    p.add_argument("--ops", default=",".join(ALL_OPS), help=f"subset of {ALL_OPS}")
    p.add_argument("--gemm-dtypes", default="bfloat16,fp8", help="bfloat16,fp8")
    p.add_argument("--no-aic-grid", action="store_true", help="skip the n,k in {4096,8192} grid points")
    p.add_argument("--num-gpus", type=int, default=0,
                   help="GPUs for collectives (default: all; 1 only as a smoke test of the code path)")
    p.add_argument("--comm-max-elems", type=int, default=grids.COMM_SIZES[-1],
                   help="largest collective message, elements")
    p.add_argument("--budget-s", type=float, default=480.0, help="stop measuring after this many seconds")
    p.add_argument("--hardware", default="auto", help="hardware name for meta.yaml (default from GPU name)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="merge these output dirs into --out, no GPU")
    return p


def models_from_args(args):
    if not args.model:
        return []
    tps = args.tp or [1]
    return [grids.load_model(path, tp) for path in args.model for tp in tps]


def smi_query():
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        return [dict(zip(SMI_FIELDS, [v.strip() for v in line.split(",")]))
                for line in out.stdout.strip().splitlines()] or [{"error": out.stderr.strip()[:200]}]
    except Exception as ex:
        return [{"error": f"{type(ex).__name__}: {ex}"}]


def smi_topology():
    try:
        out = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=30)
        text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout)  # drop the terminal underline codes
        return text.strip().splitlines()[:12]
    except Exception as ex:
        return [f"{type(ex).__name__}: {ex}"]


def versions():
    import torch

    v = {"python": platform.python_version(), "torch": torch.__version__,
         "cuda": str(torch.version.cuda), "cudnn": str(torch.backends.cudnn.version())}
    try:
        v["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:
        v["nccl"] = "unavailable"
    try:
        import triton

        v["triton"] = triton.__version__
    except Exception:
        v["triton"] = "unavailable"
    return v


def run(args, log):
    import torch

    from timing import Timer

    ops = parse_list(args.ops, ALL_OPS)
    models = models_from_args(args)
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: the collector measures on a GPU")
    gpu = torch.cuda.get_device_name(0)
    hw = hardware_name(gpu) if args.hardware == "auto" else args.hardware
    start = time.monotonic()
    deadline = start + args.budget_s
    timer = Timer()
    meta_run = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "gpu_count": torch.cuda.device_count(),
        "nvidia_smi_before": smi_query(),
        "versions": versions(),
        "models": [f"{m.name} tp={m.tp}" for m in models],
        "ops": ops,
    }
    log(f"collector on {gpu} x{torch.cuda.device_count()} ({hw}); ops={ops}; models={meta_run['models']}")
    section_s, counts = {}, {}
    ctx = None
    single = [o for o in ops if o != "comm"]
    if single and (models or "launch" in single):
        from measure import Context

        ctx = Context(timer, deadline, log)

    def save(table, rows):
        if rows:
            counts[table] = schema.write_table(args.out, table, rows)

    try:
        if ctx and "launch" in ops:
            t0 = time.monotonic()
            from moe_ops import measure_launch

            save("ops", measure_launch(ctx))
            section_s["launch"] = time.monotonic() - t0
        gemm_dtypes = parse_list(args.gemm_dtypes, ["bfloat16", "fp8"])
        nk = [p for p, _ in grids.gemm_points(models, include_aic=not args.no_aic_grid)]
        if ctx and "gemm" in ops and models and "bfloat16" in gemm_dtypes:
            from measure import measure_gemm

            t0 = time.monotonic()
            save("gemm", measure_gemm(ctx, nk, ["bfloat16"]))
            section_s["gemm_bfloat16"] = time.monotonic() - t0
        if ctx and "attention" in ops and models:
            from measure import measure_attention

            t0 = time.monotonic()
            c_rows, g_rows = measure_attention(ctx, grids.attention_configs(models))
            save("context_attention", c_rows)
            save("generation_attention", g_rows)
            section_s["attention"] = time.monotonic() - t0
        if ctx and "moe" in ops and grids.moe_specs(models):
            from moe_ops import measure_moe

            t0 = time.monotonic()
            save("moe", measure_moe(ctx, grids.moe_specs(models)))
            section_s["moe"] = time.monotonic() - t0
        if ctx and "ops" in ops and models:
            from moe_ops import measure_ops

            t0 = time.monotonic()
            save("ops", measure_ops(ctx, grids.ops_points(models)))
            section_s["ops"] = time.monotonic() - t0
        if ctx and "gemm" in ops and models and "fp8" in gemm_dtypes:
            from measure import measure_gemm

            t0 = time.monotonic()
            save("gemm", measure_gemm(ctx, nk, ["fp8"]))
            section_s["gemm_fp8"] = time.monotonic() - t0
        if "comm" in ops:
            n = args.num_gpus or torch.cuda.device_count()
            if n < 2 and not args.num_gpus:
                meta_run["comm"] = f"skipped: {torch.cuda.device_count()} GPU(s) on this machine"
                log(meta_run["comm"])
            else:
                from comm import SAFE_ENV, measure_comm

                t0 = time.monotonic()
                budget = max(30.0, deadline - time.monotonic())
                rows, skipped, nccl = measure_comm(n, [x for x in grids.COMM_SIZES if x <= args.comm_max_elems],
                                                      grids.COMM_OPS, budget_s=budget)
                save("comm", rows)
                meta_run["comm"] = {
                    "num_gpus": n, "nccl_version": nccl, "env": SAFE_ENV, "topology": smi_topology(),
                    "method": ("torch.distributed NCCL, one process per GPU (torch.multiprocessing.spawn); "
                               "kernel = n back-to-back collectives between CUDA events after a barrier, "
                               "median of 10 repeats; eager = barrier, one collective + synchronize on the "
                               "host clock, median of 10; max over ranks. message_size = elements of the full "
                               "bf16 tensor (all-reduce buffer, all-gather output, reduce-scatter input, "
                               "all-to-all send buffer)"),
                    "skipped": skipped,
                }
                section_s["comm"] = time.monotonic() - t0
    finally:
        meta_run["nvidia_smi_after"] = smi_query()
        meta_run["section_seconds"] = {k: round(v, 1) for k, v in section_s.items()}
        meta_run["rows_in_tables"] = counts
        meta_run["timing"] = {
            "kernel": ("CUDA graph of N launches cycling over rotated input sets (sets together >= 4x "
                       "the 60 MB L2 when one set is smaller), replayed 10 times after 2 warm-up "
                       "replays, CUDA events per replay, per-launch = replay / N; N chosen for ~2 ms per "
                       "replay (max 256); median with p10/p90"),
            "eager": "one launch + torch.cuda.synchronize on time.perf_counter, 10 repeats after 1 warm-up; median with eager_p10/eager_p90",
            "methods_used": timer.methods,
            "capture_failures": timer.failures[:20],
            "inputs": "torch.randn (bf16) on the GPU, never zeros; weights random",
        }
        if ctx is not None:
            meta_run["kernels"] = ctx.kernels
            meta_run["implementation"] = ctx.notes
            meta_run["skipped"] = ctx.skipped[:200]
            meta_run["skipped_count"] = len(ctx.skipped)
        header = {"hardware": hw, "gpu_name": gpu, "notes": [HEADER_NOTE]}
        schema.write_meta(args.out, header, meta_run)
        log(f"done in {time.monotonic() - start:.1f}s: {counts}")


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.merge:
        counts = schema.merge_dirs(args.out, args.merge)
        print(f"merged {len(args.merge)} dir(s) into {args.out}: {counts}")
        return 0
    if not args.model and set(parse_list(args.ops, ALL_OPS)) - {"comm", "launch"}:
        raise SystemExit("--model is required for gemm/attention/moe/ops")
    os.makedirs(args.out, exist_ok=True)

    def log(msg):
        print(msg, flush=True)

    from comm import set_safe_env

    set_safe_env()
    run(args, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
