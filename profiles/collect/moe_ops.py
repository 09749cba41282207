"""MoE grouped GEMM, elementwise operators and host launch cost (torch + CUDA;
imported lazily). See measure.py for the shared Context and row helpers.
"""

import math
import time

import grids
from measure import BF16, _run_points, _timed_row


def _act_impl(ctx):
    """silu_and_mul: the Triton kernel if it matches torch, else torch (2 kernels)."""
    torch = ctx.torch
    F = torch.nn.functional

    def torch_act(h, out=None):
        d = h.shape[1] // 2
        y = F.silu(h[:, :d]) * h[:, d:]
        if out is not None:
            out.copy_(y)
            return out
        return y

    try:
        import kernels_triton as kt

        h = ctx.randn(37, 2 * 1000)
        err = ((kt.silu_and_mul(h).float() - torch_act(h.float())).norm()
               / torch_act(h.float()).norm()).item()
        if err < 1e-2:
            return kt.silu_and_mul, "triton_silu_and_mul"
        ctx.notes["silu_and_mul_triton"] = f"rejected: rel err {err:.2e}"
    except Exception as ex:
        ctx.notes["silu_and_mul_triton"] = f"rejected: {type(ex).__name__}: {str(ex)[:160]}"
    return torch_act, "torch_silu_mul"


# ---------------------------------------------------------------- MoE


def _grouped_ok(ctx):
    torch = ctx.torch
    if not hasattr(torch, "_grouped_mm"):
        ctx.notes["moe_grouped_mm"] = "torch._grouped_mm absent"
        return False
    try:
        counts = [5, 0, 7, 4, 16]
        E, H, N = len(counts), 256, 384
        xs = ctx.randn(sum(counts), H)
        w = ctx.randn(E, N, H)
        offs = torch.tensor(list(_cumsum(counts)), device=ctx.dev, dtype=torch.int32)
        got = torch._grouped_mm(xs, w.transpose(1, 2), offs=offs)
        ref = torch.cat([xs[s:s + c].float() @ w[e].float().t()
                         for e, (s, c) in enumerate(_segments(counts))])
        err = ((got.float() - ref).norm() / ref.norm()).item()
        ctx.notes["moe_grouped_mm_check"] = f"rel err {err:.2e} vs per-expert float matmul"
        return err < 1e-2
    except Exception as ex:
        ctx.notes["moe_grouped_mm"] = f"rejected: {type(ex).__name__}: {str(ex)[:160]}"
        return False


def _cumsum(xs):
    s = 0
    for x in xs:
        s += x
        yield s


def _segments(counts):
    start = 0
    for c in counts:
        yield start, c
        start += c


def measure_moe(ctx, specs, distributions=grids.MOE_DISTRIBUTIONS, tokens=grids.MOE_TOKENS):
    torch = ctx.torch
    act, act_name = _act_impl(ctx)
    grouped = _grouped_ok(ctx)
    impl = "torch_grouped_mm" if grouped else "per_expert_mm_loop"
    ctx.notes["moe"] = (f"{impl}: permute tokens by expert (index_select), grouped GEMM w13 "
                        f"[E,2I,H], {act_name}, grouped GEMM w2 [E,H,I], scale by routing weight, "
                        "index_add_ back to tokens. Routing fixed on the host (counts from "
                        "grids.expert_counts); router logits/top-k NOT included")
    rows = []
    for spec in specs:
        E, H, I = spec.num_experts, spec.hidden, spec.inter_per_rank
        w13 = ctx.randn(E, 2 * I, H)
        w2 = ctx.randn(E, H, I)
        w13t, w2t = w13.transpose(1, 2), w2.transpose(1, 2)

        def build(p, spec=spec, w13=w13, w2=w2, w13t=w13t, w2t=w2t):
            dist, T = p
            counts = grids.expert_counts(T, E, spec.topk, dist, seed=T)
            routing = grids.routing_from_counts(counts, T, spec.topk)
            tok_list, _, cnt = grids.sorted_layout(routing, E)
            S = len(tok_list)
            tok = torch.tensor(tok_list, device=ctx.dev, dtype=torch.int64)
            offs = torch.tensor(list(_cumsum(cnt)), device=ctx.dev, dtype=torch.int32)
            wts = torch.rand(S, 1, device=ctx.dev, generator=ctx.gen).to(torch.bfloat16)
            x = ctx.randn(T, H)
            out = torch.empty(T, H, device=ctx.dev, dtype=torch.bfloat16)
            segs = list(_segments(cnt))

            if grouped:
                def run():
                    xs = x.index_select(0, tok)
                    h = torch._grouped_mm(xs, w13t, offs=offs)
                    y = torch._grouped_mm(act(h), w2t, offs=offs)
                    y.mul_(wts)
                    out.zero_()
                    out.index_add_(0, tok, y)
            else:
                def run():
                    xs = x.index_select(0, tok)
                    h = torch.empty(S, 2 * I, device=ctx.dev, dtype=torch.bfloat16)
                    for e, (s0, c) in enumerate(segs):
                        if c:
                            torch.mm(xs[s0:s0 + c], w13[e].t(), out=h[s0:s0 + c])
                    a = act(h)
                    y = torch.empty(S, H, device=ctx.dev, dtype=torch.bfloat16)
                    for e, (s0, c) in enumerate(segs):
                        if c:
                            torch.mm(a[s0:s0 + c], w2[e].t(), out=y[s0:s0 + c])
                    y.mul_(wts)
                    out.zero_()
                    out.index_add_(0, tok, y)

            if dist == "balanced" and T in (1, 4096):
                ctx.record_kernels("moe", f"T={T},H={H},I={I},E={E},tp={spec.tp}", run)
            key = dict(moe_dtype=BF16, num_tokens=T, hidden_size=H, inter_size=spec.inter,
                       topk=spec.topk, num_experts=E, moe_tp_size=spec.tp, moe_ep_size=1,
                       distribution=dist)
            return _timed_row(ctx, key, [run], impl)

        points = [(d, t) for d in distributions for t in tokens]
        t0 = time.monotonic()
        got = _run_points(ctx, "moe", points, build)
        ctx.log(f"moe {spec}: {len(got)}/{len(points)} in {time.monotonic() - t0:.1f}s")
        rows += got
        del w13, w2, w13t, w2t
        torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------- elementwise ops


def _triton_or_none(ctx):
    try:
        import kernels_triton as kt

        return kt
    except Exception as ex:
        ctx.notes["triton"] = f"unavailable: {type(ex).__name__}: {str(ex)[:160]}"
        return None


def _rms_torch(torch):
    def f(x, res, w, eps=1e-5):
        res.add_(x)
        r = res.float()
        y = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + eps) * w.float()
        x.copy_(y)
    return f


def _rope_torch(torch):
    def f(pos, q, k, cache, hq, hk, d):
        cs = cache.index_select(0, pos).float()
        cos, sin = cs[:, None, : d // 2], cs[:, None, d // 2:]
        for t, h in ((q, hq), (k, hk)):
            v = t.view(t.shape[0], h, d).float()
            x1, x2 = v[..., : d // 2], v[..., d // 2:]
            t.view(t.shape[0], h, d).copy_(torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1))
    return f


def _check(torch, fast, slow, make):
    """Runs fast and slow on copies of make() inputs; returns relative error of all outputs."""
    a = make()
    b = [t.clone() for t in a]
    fast(*a)
    slow(*b)
    num = sum(((x.float() - y.float()).norm() ** 2).item() for x, y in zip(a, b) if x.is_floating_point())
    den = sum((y.float().norm() ** 2).item() for y in b if y.is_floating_point())
    return math.sqrt(num / max(den, 1e-30))


def measure_ops(ctx, points, tokens=grids.OPS_TOKENS, sampler_tokens=grids.SAMPLER_TOKENS):
    torch = ctx.torch
    F = torch.nn.functional
    kt = _triton_or_none(ctx)
    act, act_name = _act_impl(ctx)
    rms, rms_name = _rms_torch(torch), "torch_rmsnorm_5_kernels"
    rope, rope_name = _rope_torch(torch), "torch_rotary"
    max_pos = 8192
    inv = 1.0 / (10000 ** (torch.arange(0, 64, device=ctx.dev, dtype=torch.float32) / 64))
    ang = torch.arange(max_pos, device=ctx.dev, dtype=torch.float32)[:, None] * inv[None, :]
    cache = torch.cat([ang.cos(), ang.sin()], -1).to(torch.bfloat16)  # head_dim 128
    if kt is not None:
        try:
            err = _check(torch, kt.fused_add_rmsnorm, _rms_torch(torch),
                         lambda: [ctx.randn(33, 4096), ctx.randn(33, 4096), ctx.randn(4096)])
            ctx.notes["rmsnorm_check"] = f"triton vs torch rel err {err:.2e}"
            if err < 1e-2:
                rms, rms_name = kt.fused_add_rmsnorm, "triton_fused_add_rmsnorm"
        except Exception as ex:
            ctx.notes["rmsnorm_check"] = f"triton failed: {type(ex).__name__}: {str(ex)[:160]}"
        try:
            pos = torch.randint(0, max_pos, (19,), device=ctx.dev, generator=ctx.gen)
            err = _check(torch, lambda q, k: kt.rotary_neox(pos, q, k, cache, 32, 8, 128),
                         lambda q, k: _rope_torch(torch)(pos, q, k, cache, 32, 8, 128),
                         lambda: [ctx.randn(19, 32 * 128), ctx.randn(19, 8 * 128)])
            ctx.notes["rotary_check"] = f"triton vs torch rel err {err:.2e}"
            if err < 1e-2:
                rope, rope_name = kt.rotary_neox, "triton_rotary_neox"
        except Exception as ex:
            ctx.notes["rotary_check"] = f"triton failed: {type(ex).__name__}: {str(ex)[:160]}"
    ctx.notes["ops"] = (f"rmsnorm={rms_name} (residual add + RMSNorm in place, vLLM fused_add_rms_norm); "
                        f"rotary={rope_name} (NeoX, q and k in place, width=(q+kv heads)*head_dim); "
                        f"silu_and_mul={act_name} (width = output width); embedding=F.embedding "
                        "(width = hidden); sampler = logits.float()/temperature, softmax, "
                        "exponential race (q.exponential_(), probs/q argmax) as vLLM's random "
                        "sampler; sampler_greedy = logits.float().argmax (width = vocab)")

    def build(p):
        op, width, extra, T = p
        if op == "rmsnorm":
            n = grids.rotation_count(4 * T * width)
            sets = [(ctx.randn(T, width), ctx.randn(T, width), ctx.randn(width)) for _ in range(n)]
            fns = [lambda s=s: rms(s[0], s[1], s[2]) for s in sets]
            kernel = rms_name
        elif op == "rotary":
            hq, hk, d = extra
            n = grids.rotation_count(4 * T * width)
            sets = [(torch.randint(0, max_pos, (T,), device=ctx.dev, generator=ctx.gen),
                     ctx.randn(T, hq * d), ctx.randn(T, hk * d)) for _ in range(n)]
            fns = [lambda s=s: rope(s[0], s[1], s[2], cache, hq, hk, d) for s in sets]
            kernel = rope_name
        elif op == "silu_and_mul":
            n = grids.rotation_count(6 * T * width)
            sets = [(ctx.randn(T, 2 * width), torch.empty(T, width, device=ctx.dev, dtype=torch.bfloat16))
                    for _ in range(n)]
            fns = [lambda s=s: act(s[0], out=s[1]) for s in sets]
            kernel = act_name
        elif op == "embedding":
            table = ctx.randn(extra, width)
            ids = [torch.randint(0, extra, (T,), device=ctx.dev, generator=ctx.gen)
                   for _ in range(grids.rotation_count(4 * T * width))]
            fns = [lambda i=i: F.embedding(i, table) for i in ids]
            kernel = "torch_embedding"
        elif op in ("sampler", "sampler_greedy"):
            if T > sampler_tokens[-1]:
                return None
            n = grids.rotation_count(6 * T * width)
            sets = [(ctx.randn(T, width), torch.full((T, 1), 0.8, device=ctx.dev)) for _ in range(n)]
            if op == "sampler":
                def samp(lg, temp):
                    p_ = torch.softmax(lg.float().div_(temp), dim=-1)
                    q_ = torch.empty_like(p_).exponential_()
                    return p_.div_(q_).argmax(dim=-1)
                fns = [lambda s=s: samp(s[0], s[1]) for s in sets]
                kernel = "torch_softmax_exponential_argmax"
            else:
                fns = [lambda s=s: s[0].float().argmax(dim=-1) for s in sets]
                kernel = "torch_argmax"
        else:
            raise ValueError(op)
        if T in (1, 1024):
            ctx.record_kernels(op, f"tokens={T},width={width}", fns[0])
        return _timed_row(ctx, dict(op_name=op, tokens=T, width=width, dtype=BF16), fns, kernel)

    pts = [(op, w, e, T) for op, w, e in points for T in tokens]
    t0 = time.monotonic()
    rows = _run_points(ctx, "ops", pts, build)
    ctx.log(f"ops: {len(rows)}/{len(pts)} in {time.monotonic() - t0:.1f}s")
    return rows


def measure_launch(ctx, counts=grids.LAUNCH_COUNTS, reps=10):
    """Host cost per tiny kernel: N eager launches vs one graph of N, host clock."""
    torch = ctx.torch
    buf = torch.ones(1, device=ctx.dev)

    def tiny():
        buf.add_(1.0)

    rows = []
    for n in counts:
        for _ in range(3):
            tiny()
        torch.cuda.synchronize()
        eager = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                tiny()
            torch.cuda.synchronize()
            eager.append((time.perf_counter() - t0) * 1e3 / n)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                tiny()
        g.replay()
        torch.cuda.synchronize()
        graph = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            g.replay()
            torch.cuda.synchronize()
            graph.append((time.perf_counter() - t0) * 1e3 / n)
        del g
        from schema import summarize

        row = dict(op_name="launch", tokens=n, width=1, dtype="float32")
        row.update(summarize(graph, eager))
        row["kernel"] = "add_ on one float (host clock: graph replay vs eager loop, per kernel)"
        rows.append(row)
    ctx.record_kernels("launch", "add_ 1 element", tiny)
    ctx.notes["launch"] = ("tokens = kernels launched N; latency = host time of one CUDA-graph replay of "
                           "N tiny kernels + sync, per kernel; eager_latency = host time of N eager "
                           "launches + sync, per kernel (N=1 is one launch + sync round trip)")
    return rows
