#!/usr/bin/env python3
"""Compares the collector's tables with reference tables (for example the
imported aiconfigurator tables dumped to CSV) at identical grid points and
prints ratio statistics (ours / reference). Pure Python.

  python3 profiles/collect/compare.py --ours profiles/measured/h200-sxm --ref /tmp/aic_h200_csv

--ref holds gemm_perf.csv, context_attention_perf.csv, generation_attention_perf.csv,
moe_perf.csv, nccl_perf.csv (and optionally custom_allreduce_perf.csv) with the
aiconfigurator column names.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import schema  # noqa: E402


def norm(v):
    try:
        f = float(v)
        return str(int(f)) if f == int(f) else repr(f)
    except (TypeError, ValueError):
        return str(v)


def match(ours, ref, keys, ours_map=None, ref_filter=None):
    """(ours latency, ref latency, our row) for rows whose keys agree.

    ours_map(row) -> dict of key values to look up in ref (default: the row itself).
    """
    index = {}
    for r in ref:
        if ref_filter and not ref_filter(r):
            continue
        index[tuple(norm(r[k]) for k in keys)] = r
    pairs = []
    for o in ours:
        want = ours_map(o) if ours_map else o
        if want is None:
            continue
        r = index.get(tuple(norm(want[k]) for k in keys))
        if r is not None and o.get("latency") and r.get("latency"):
            pairs.append((float(o["latency"]), float(r["latency"]), o))
    return pairs


def ratio_stats(pairs):
    rs = [a / b for a, b, _ in pairs if b > 0]
    if not rs:
        return {"n": 0}
    return {"n": len(rs), "median": schema.quantile(rs, 0.5), "p10": schema.quantile(rs, 0.1),
            "p90": schema.quantile(rs, 0.9), "min": min(rs), "max": max(rs)}


def fmt(name, st):
    if not st.get("n"):
        return f"{name:<44} n=0"
    return (f"{name:<44} n={st['n']:<4} median={st['median']:.3f}  p10={st['p10']:.3f}  "
            f"p90={st['p90']:.3f}  min={st['min']:.3f}  max={st['max']:.3f}")


def compare_dirs(ours_dir, ref_dir):
    def load(d, name):
        return schema.read_table(os.path.join(d, name))

    lines = []
    g = load(ours_dir, "gemm_perf.csv")
    gref = load(ref_dir, "gemm_perf.csv")
    gk = ["gemm_dtype", "m", "n", "k"]
    for dtype in ("bfloat16", "fp8"):
        pairs = match([r for r in g if r["gemm_dtype"] == dtype], gref, gk)
        lines.append(fmt(f"gemm {dtype} (all matching m,n,k)", ratio_stats(pairs)))
        for lo, hi in ((1, 16), (32, 256), (512, 8192)):
            sub = [p for p in pairs if lo <= int(p[2]["m"]) <= hi]
            lines.append(fmt(f"  m {lo}-{hi}", ratio_stats(sub)))
    ak = ["batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype",
          "window_size"]
    c = load(ours_dir, "context_attention_perf.csv")
    pairs = match([r for r in c if r["step"] == "0"], load(ref_dir, "context_attention_perf.csv"), ak)
    lines.append(fmt("context attention (no prefix)", ratio_stats(pairs)))
    for lo, hi in ((1, 1024), (2048, 16384)):
        lines.append(fmt(f"  isl {lo}-{hi}", ratio_stats([p for p in pairs if lo <= int(p[2]["isl"]) <= hi])))
    gen = load(ours_dir, "generation_attention_perf.csv")
    # The imported table's step is the KV length minus one (its grid is 2^k - 1).
    pairs = match(gen, load(ref_dir, "generation_attention_perf.csv"), ak,
                  ours_map=lambda r: dict(r, step=str(int(r["step"]) - 1)))
    lines.append(fmt("generation attention (step = ctx - 1)", ratio_stats(pairs)))
    for lo, hi in ((1, 8), (16, 256)):
        lines.append(fmt(f"  batch {lo}-{hi}", ratio_stats(
            [p for p in pairs if lo <= int(p[2]["batch_size"]) <= hi])))
    mk = ["moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size",
          "moe_ep_size", "distribution"]
    moe = load(ours_dir, "moe_perf.csv")
    mref = load(ref_dir, "moe_perf.csv")
    for dist in ("balanced", "power_law_1.01", "power_law_1.2"):
        pairs = match([r for r in moe if r["distribution"] == dist], mref, mk)
        lines.append(fmt(f"moe bf16 {dist}", ratio_stats(pairs)))
        for lo, hi in ((1, 64), (128, 16384)):
            lines.append(fmt(f"  tokens {lo}-{hi}", ratio_stats(
                [p for p in pairs if lo <= int(p[2]["num_tokens"]) <= hi])))
    comm = load(ours_dir, "comm_perf.csv")
    nccl = load(ref_dir, "nccl_perf.csv")
    ck = ["op_name", "num_gpus", "message_size"]
    for op in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
        for n in sorted({r["num_gpus"] for r in comm}):
            pairs = match([r for r in comm if r["op_name"] == op and r["num_gpus"] == n], nccl, ck,
                          ref_filter=lambda r: r.get("nccl_dtype") == "half")
            lines.append(fmt(f"nccl {op} x{n}", ratio_stats(pairs)))
            for lo, hi in ((256, 65536), (131072, 1 << 22), (1 << 23, 1 << 29)):
                lines.append(fmt(f"  elements {lo}-{hi}", ratio_stats(
                    [p for p in pairs if lo <= int(p[2]["message_size"]) <= hi])))
    car = load(ref_dir, "custom_allreduce_perf.csv")
    if car:
        for n in sorted({r["num_gpus"] for r in comm}):
            pairs = match([r for r in comm if r["op_name"] == "all_reduce" and r["num_gpus"] == n], car, ck,
                          ref_filter=lambda r: r.get("backend") == "vllm_graph")
            lines.append(fmt(f"nccl all_reduce x{n} vs vLLM custom AR (graph)", ratio_stats(pairs)))
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ours", required=True)
    p.add_argument("--ref", required=True)
    args = p.parse_args(argv)
    print("ratio = ours / reference latency at identical keys")
    for line in compare_dirs(args.ours, args.ref):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
