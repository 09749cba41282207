"""Single-GPU operator measurements (needs torch + CUDA; imported lazily).

Each `measure_*` returns table rows (dicts in the schema of schema.py) and
records, in `ctx.kernels`, the CUDA kernel names torch.profiler saw for a
representative shape and, in `ctx.notes`, what implementation was used.
"""

import math
import time

import grids
from timing import kernel_names

BF16 = "bfloat16"


class Context:
    """Shared state of one collection run: timer, device, deadline, meta notes."""

    def __init__(self, timer, deadline, log):
        import torch

        self.torch = torch
        self.dev = torch.device("cuda", torch.cuda.current_device())
        self.timer = timer
        self.deadline = deadline  # time.monotonic() value after which sections stop
        self.log = log
        self.kernels = {}  # op -> {shape: [kernel names]}
        self.notes = {}  # op -> implementation / method text
        self.skipped = []  # "op shape: reason"
        self.gen = torch.Generator(device=self.dev)
        self.gen.manual_seed(1234)

    def out_of_time(self):
        return time.monotonic() > self.deadline

    def randn(self, *shape, dtype=None):
        t = self.torch
        return t.randn(*shape, device=self.dev, dtype=dtype or t.bfloat16, generator=self.gen)

    def record_kernels(self, op, shape, fn):
        self.kernels.setdefault(op, {})[shape] = kernel_names(fn)


def _timed_row(ctx, key, fns, kernel):
    res = ctx.timer.measure(fns)
    row = dict(key)
    row.update({k: v for k, v in res.items() if not k.startswith("_")})
    row["kernel"] = kernel
    return row


def _run_points(ctx, op, points, build):
    """Calls build(point) -> row for each point; skips on error or deadline."""
    rows = []
    for p in points:
        if ctx.out_of_time():
            ctx.skipped.append(f"{op} {p}: time budget spent")
            continue
        try:
            row = build(p)
            if row is not None:
                rows.append(row)
        except Exception as ex:
            ctx.skipped.append(f"{op} {p}: {type(ex).__name__}: {str(ex)[:200]}")
            ctx.log(f"  ! {op} {p}: {type(ex).__name__}: {str(ex)[:200]}")
            ctx.torch.cuda.synchronize()
        finally:
            pass
    ctx.torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------- GEMM


def measure_gemm(ctx, nk_points, dtypes=("bfloat16", "fp8")):
    torch = ctx.torch
    rows = []
    fp8_ok = hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")
    ctx.notes["gemm_bfloat16"] = ("torch.mm(x[m,k], W[n,k].t(), out=) -> cuBLAS/cuBLASLt "
                                  "(what F.linear in vLLM's unquantized path calls)")
    ctx.notes["gemm_fp8"] = ("torch._scaled_mm(x_fp8[m,k], W_fp8[n,k].t(), per-tensor scales, "
                             "out bf16) -> cuBLASLt fp8; input quantization NOT included"
                             if fp8_ok else "not available in this torch")
    for dtype in dtypes:
        if dtype == "fp8" and not fp8_ok:
            continue

        def build(p, dtype=dtype):
            m, (n, k) = p
            if dtype == "fp8" and (k % 16 or n % 16):
                return None
            per_set = (m * k + n * k) * (1 if dtype == "fp8" else 2) + m * n * 2
            sets = []
            for _ in range(grids.rotation_count(per_set)):
                a = ctx.randn(m, k)
                w = ctx.randn(n, k)
                if dtype == "fp8":
                    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
                    one = torch.ones((), device=ctx.dev, dtype=torch.float32)
                    sets.append((a8, w8.t(), one, one.clone()))
                else:
                    sets.append((a, w.t(), torch.empty(m, n, device=ctx.dev, dtype=torch.bfloat16)))
                del a, w
            if dtype == "fp8":
                fns = [lambda s=s: torch._scaled_mm(s[0], s[1], scale_a=s[2], scale_b=s[3],
                                                    out_dtype=torch.bfloat16) for s in sets]
                kernel = "cublaslt_fp8_scaled_mm"
            else:
                fns = [lambda s=s: torch.mm(s[0], s[1], out=s[2]) for s in sets]
                kernel = "cublas"
            if (n, k) == (4096, 4096) and m in (1, 128, 8192):
                ctx.record_kernels(f"gemm_{dtype}", f"m={m},n={n},k={k}", fns[0])
            row = _timed_row(ctx, dict(gemm_dtype=dtype, m=m, n=n, k=k), fns, kernel)
            del sets, fns
            return row

        points = [(m, nk) for nk in nk_points for m in grids.M_GRID]
        t0 = time.monotonic()
        got = _run_points(ctx, f"gemm_{dtype}", points, build)
        ctx.log(f"gemm {dtype}: {len(got)}/{len(points)} points in {time.monotonic() - t0:.1f}s")
        rows += got
    return rows


# ---------------------------------------------------------------- attention


def _sdpa_variants(ctx):
    """Candidate ways to run (prefill, prefix, decode) attention, best first."""
    torch = ctx.torch
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel

    try:
        from torch.nn.attention.bias import causal_lower_right
    except ImportError:
        causal_lower_right = None

    def flash(q, k, v, causal, prefix, gqa):
        kw = {"enable_gqa": True} if gqa else {}
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            if prefix and causal:
                mask = causal_lower_right(q.shape[2], k.shape[2])
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **kw)

    def explicit_mask(q, k, v, causal, prefix, gqa):
        L, S = q.shape[2], k.shape[2]
        mask = None
        if causal:
            i = torch.arange(L, device=q.device)[:, None]
            j = torch.arange(S, device=q.device)[None, :]
            mask = j <= i + (S - L)
        kw = {"enable_gqa": True} if gqa else {}
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)

    variants = [("torch_sdpa_flash", flash, False)]
    variants.append(("torch_sdpa_flash_kv_expanded", flash, True))
    variants.append(("torch_sdpa_explicit_mask_kv_expanded", explicit_mask, True))
    return variants, causal_lower_right is not None


def _attn_reference(torch, q, k, v, causal):
    """float64 math reference; q [B,H,L,D], k/v [B,Hkv,S,D]; bottom-right causal."""
    g = q.shape[1] // k.shape[1]
    k = k.double().repeat_interleave(g, dim=1)
    v = v.double().repeat_interleave(g, dim=1)
    s = q.double() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        L, S = q.shape[2], k.shape[2]
        i = torch.arange(L, device=q.device)[:, None]
        j = torch.arange(S, device=q.device)[None, :]
        s = s.masked_fill(~(j <= i + (S - L)), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def choose_attention(ctx):
    """Picks, per kind, the first variant that matches the float64 reference."""
    torch = ctx.torch
    variants, have_lr = _sdpa_variants(ctx)
    chosen = {}
    cases = {"prefill": (64, 0, True), "prefix": (48, 80, True), "decode": (1, 200, False)}
    for kind, (L, P, causal) in cases.items():
        for name, fn, expand in variants:
            if kind == "prefix" and name == "torch_sdpa_flash" and not have_lr:
                continue
            try:
                q = ctx.randn(2, L, 8, 128).transpose(1, 2)
                k = ctx.randn(2, L + P, 2, 128).transpose(1, 2)
                v = ctx.randn(2, L + P, 2, 128).transpose(1, 2)
                kk, vv = (k.repeat_interleave(4, 1), v.repeat_interleave(4, 1)) if expand else (k, v)
                out = fn(q, kk, vv, causal, P > 0, not expand)
                ref = _attn_reference(torch, q, k, v, causal)
                err = ((out.double() - ref).norm() / ref.norm()).item()
                if err < 2e-2:
                    chosen[kind] = (name, fn, expand)
                    ctx.notes[f"attention_{kind}_check"] = f"{name}: rel err {err:.2e} vs float64"
                    break
                ctx.notes[f"attention_{kind}_{name}"] = f"rejected: rel err {err:.2e}"
            except Exception as ex:
                ctx.notes[f"attention_{kind}_{name}"] = f"rejected: {type(ex).__name__}: {str(ex)[:160]}"
    return chosen


def measure_attention(ctx, head_configs):
    torch = ctx.torch
    chosen = choose_attention(ctx)
    ctx.log(f"attention variants: { {k: v[0] for k, v in chosen.items()} }")
    ctx_rows, gen_rows = [], []

    def tensors(b, L, S, hq, hkv, d, expand):
        per_set = 2 * (b * L * hq * d + 2 * b * S * hkv * d * (hq // hkv if expand else 1))
        sets = []
        for _ in range(grids.rotation_count(per_set)):
            q = ctx.randn(b, L, hq, d).transpose(1, 2)
            k = ctx.randn(b, S, hkv, d).transpose(1, 2)
            v = ctx.randn(b, S, hkv, d).transpose(1, 2)
            if expand and hq != hkv:
                k, v = k.repeat_interleave(hq // hkv, 1), v.repeat_interleave(hq // hkv, 1)
            sets.append((q, k, v))
        return sets

    def key(b, isl, step, hq, hkv, d):
        return dict(batch_size=b, isl=isl, step=step, num_heads=hq, num_key_value_heads=hkv,
                    head_dim=d, attn_dtype=BF16, kv_cache_dtype=BF16, window_size=0)

    for hq, hkv, d in head_configs:
        gqa = hq != hkv
        if "decode" in chosen:
            name, fn, expand = chosen["decode"]

            def build_decode(p, name=name, fn=fn, expand=expand):
                b, c = p
                sets = tensors(b, 1, c, hq, hkv, d, expand)
                fns = [lambda s=s: fn(s[0], s[1], s[2], False, False, gqa and not expand) for s in sets]
                if (b, c) in ((1, 4096), (64, 4096)):
                    ctx.record_kernels("generation_attention", f"b={b},ctx={c},h={hq}/{hkv}", fns[0])
                return _timed_row(ctx, key(b, 1, c, hq, hkv, d), fns, name)

            gen_rows += _run_points(ctx, "generation_attention", grids.decode_points(), build_decode)
        for kind, points in (("prefill", grids.prefill_points()), ("prefix", grids.prefix_points())):
            if kind not in chosen:
                ctx.skipped.append(f"context_attention {kind} h={hq}/{hkv}: no working variant")
                continue
            name, fn, expand = chosen[kind]

            def build_ctx(p, name=name, fn=fn, expand=expand, kind=kind):
                b, s, pre = p
                sets = tensors(b, s, s + pre, hq, hkv, d, expand)
                fns = [lambda t=t: fn(t[0], t[1], t[2], True, pre > 0, gqa and not expand) for t in sets]
                if (b, s) in ((1, 4096), (16, 512), (4, 512)):
                    ctx.record_kernels(f"context_attention_{kind}", f"b={b},isl={s},prefix={pre},h={hq}/{hkv}", fns[0])
                return _timed_row(ctx, key(b, s, pre, hq, hkv, d), fns, name)

            ctx_rows += _run_points(ctx, f"context_attention_{kind}", points, build_ctx)
        ctx.log(f"attention h={hq}/{hkv}/{d}: ctx rows {len(ctx_rows)}, gen rows {len(gen_rows)}")
    ctx.notes["attention_layout"] = ("q/k/v allocated [B, L, H, D] (vLLM token-major) and passed to "
                                     "F.scaled_dot_product_attention as [B, H, L, D] views; dense, not paged")
    ctx.notes["attention_prefix"] = ("cached prefix: key/value length = isl + step, query = isl new tokens, "
                                     "bottom-right causal via torch.nn.attention.bias.causal_lower_right "
                                     "(flash kernel's causal mode is bottom-right aligned)")
    ctx.notes["attention_decode"] = ("decode: one query token per sequence against `step` keys, no mask, "
                                     "SDPA flash backend with enable_gqa (its split-KV path)")
    return ctx_rows, gen_rows
