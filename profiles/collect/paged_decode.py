"""Paged decode attention over 16-token KV blocks: contiguous against scattered
block tables (issue 16, "decode attention at long context with paged blocks").

Question: is a real server's decode step slower than the operator tables say
because its KV blocks are scattered over the whole cache (vLLM's free-block
queue hands out blocks in whatever order requests freed them), while a table
is timed on a fresh cache whose blocks lie in order? The script times one
decode step's attention over every layer of one rank, each layer its own KV
tensor as in vLLM ([num_blocks, 16, kv_heads, head_dim] for K and for V), the
pool sized as vLLM sized it for the shared H100 runs, with three block tables:

  contig       sequence i holds blocks i*n … i*n+n-1 (a table's layout)
  interleaved  prompt blocks in order, decode blocks handed out round-robin
               across sequences (a server shortly after start)
  random       every block drawn from a random permutation of the whole pool
               (a server after the free queue has mixed; the worst case)

The kernel is our own split-KV ("flash-decoding") Triton kernel, not vLLM's
FlashAttention: the ratios between layouts are the measurement; the absolute
times are compared with the tables only as a sanity check. Correctness is
checked against a float32 torch reference first.

Run on a GPU machine:  python3 profiles/collect/paged_decode.py --out DIR
Prints a table and writes DIR/paged_decode.csv (latency per layer, ms).
"""

import argparse
import csv
import math
import os
import sys

BLOCK = 16  # vLLM's default block_size

# Per-rank shapes of the gate's deployments: (name, q heads, kv heads,
# layers, vLLM's KV blocks for the run (replay files' kv_blocks_total_gpu + 1)).
SHAPES = [
    ("mixtral-8x7b-tp2", 16, 4, 32, 27511),
    ("codellama-34b-tp2", 32, 4, 48, 26603),
    ("llama-2-7b-tp1", 32, 32, 32, 7463),
]
BATCHES = [32, 64, 128, 256]
CONTEXTS = [1024, 1792, 2048, 4096]
# ragged: the random layout with lengths uniform in [0.6, 1.4] × context
# (the same mean), as a saturated server's mix of young and old requests.
LAYOUTS = ["contig", "interleaved", "random", "ragged"]

_KERNELS = []


def kernels():
    if not _KERNELS:
        _KERNELS.extend(_build_kernels())
    return _KERNELS


def _build_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def split_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, part_ptr, ml_ptr,
                     stride_tb, stride_kb, stride_kt, scale,
                     HKV: tl.constexpr, G: tl.constexpr, GP: tl.constexpr, D: tl.constexpr,
                     N: tl.constexpr, SPLITS: tl.constexpr, BLOCKS_PER_SPLIT: tl.constexpr):
        b = tl.program_id(0)
        h = tl.program_id(1)
        s = tl.program_id(2)
        seq_len = tl.load(lens_ptr + b)
        g = tl.arange(0, GP)
        d = tl.arange(0, D)
        gmask = g < G
        # q: [B, HKV*G, D]
        q = tl.load(q_ptr + (b * HKV * G + h * G + g)[:, None] * D + d[None, :], mask=gmask[:, None], other=0.0)
        m_i = tl.full([GP], -float("inf"), tl.float32)
        l_i = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        t = tl.arange(0, N)
        start = s * BLOCKS_PER_SPLIT * 16
        end = tl.minimum(seq_len, start + BLOCKS_PER_SPLIT * 16)
        for off in range(start, end, N):
            tok = off + t
            tmask = tok < end
            blk = tl.load(table_ptr + b * stride_tb + tok // 16, mask=tmask, other=0)
            row = blk.to(tl.int64) * stride_kb + (tok % 16) * stride_kt + h * D
            k = tl.load(k_ptr + row[:, None] + d[None, :], mask=tmask[:, None], other=0.0)
            sc = tl.dot(q, tl.trans(k)) * scale
            sc = tl.where(tmask[None, :], sc, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(sc, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(sc - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + row[:, None] + d[None, :], mask=tmask[:, None], other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        base = (b * HKV + h) * SPLITS + s
        tl.store(part_ptr + (base * GP + g)[:, None] * D + d[None, :], acc)
        tl.store(ml_ptr + (base * GP + g) * 2, m_i)
        tl.store(ml_ptr + (base * GP + g) * 2 + 1, l_i)

    @triton.jit
    def reduce_kernel(part_ptr, ml_ptr, out_ptr, HKV: tl.constexpr, G: tl.constexpr, GP: tl.constexpr,
                      D: tl.constexpr, SPLITS: tl.constexpr):
        b = tl.program_id(0)
        h = tl.program_id(1)
        g = tl.arange(0, GP)
        d = tl.arange(0, D)
        m = tl.full([GP], -float("inf"), tl.float32)
        for s in range(SPLITS):
            base = (b * HKV + h) * SPLITS + s
            m = tl.maximum(m, tl.load(ml_ptr + (base * GP + g) * 2))
        l = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        for s in range(SPLITS):
            base = (b * HKV + h) * SPLITS + s
            ms = tl.load(ml_ptr + (base * GP + g) * 2)
            w = tl.where(ms == -float("inf"), 0.0, tl.exp(ms - m))
            l += tl.load(ml_ptr + (base * GP + g) * 2 + 1) * w
            acc += tl.load(part_ptr + (base * GP + g)[:, None] * D + d[None, :]) * w[:, None]
        out = acc / l[:, None]
        tl.store(out_ptr + (b * HKV * G + h * G + g)[:, None] * D + d[None, :], out.to(tl.bfloat16),
                 mask=(g < G)[:, None])

    return split_kernel, reduce_kernel


class Decoder:
    """One decode attention call: q [B, Hq, D] against paged K/V."""

    def __init__(self, batch, hq, hkv, d, max_blocks, sms):
        import torch
        import triton

        self.hkv, self.g, self.d = hkv, hq // hkv, d
        self.gp = max(16, triton.next_power_of_2(self.g))
        # enough programs to fill the chip about four times over
        self.splits = max(1, min(64, math.ceil(4 * sms / (batch * hkv)), max_blocks // 4))
        self.bps = math.ceil(max_blocks / self.splits)
        self.part = torch.empty(batch * hkv * self.splits * self.gp * d, device="cuda", dtype=torch.float32)
        self.ml = torch.empty(batch * hkv * self.splits * self.gp * 2, device="cuda", dtype=torch.float32)
        self.split_k, self.reduce_k = kernels()
        self.batch = batch

    def __call__(self, q, k, v, table, lens, out):
        self.split_k[(self.batch, self.hkv, self.splits)](
            q, k, v, table, lens, self.part, self.ml, table.stride(0), k.stride(0), k.stride(1),
            1.0 / math.sqrt(self.d), HKV=self.hkv, G=self.g, GP=self.gp, D=self.d, N=64,
            SPLITS=self.splits, BLOCKS_PER_SPLIT=self.bps, num_warps=4)
        self.reduce_k[(self.batch, self.hkv)](self.part, self.ml, out, HKV=self.hkv, G=self.g, GP=self.gp,
                                              D=self.d, SPLITS=self.splits, num_warps=4)


def block_table(layout, batch, nblk, pool, gen):
    """[batch, nblk] int32 physical block ids in [0, pool)."""
    import torch

    if layout == "contig":
        return torch.arange(batch * nblk, dtype=torch.int32).view(batch, nblk)
    if layout == "random":
        return torch.randperm(pool, generator=gen)[: batch * nblk].to(torch.int32).view(batch, nblk)
    # interleaved: the first 67 blocks (a 1,076-token prompt) of each sequence in
    # order, then decode blocks round-robin across the batch.
    prompt = min(nblk, 67)
    t = torch.empty(batch, nblk, dtype=torch.int32)
    t[:, :prompt] = torch.arange(batch * prompt, dtype=torch.int32).view(batch, prompt)
    rest = nblk - prompt
    if rest > 0:
        ids = batch * prompt + torch.arange(batch * rest, dtype=torch.int32).view(rest, batch).t()
        t[:, prompt:] = ids
    return t


def reference(q, k, v, table, lens, hkv):
    import torch

    out = torch.empty_like(q)
    g = q.shape[1] // hkv
    for b in range(q.shape[0]):
        n = int(lens[b])
        blocks = table[b, : (n + BLOCK - 1) // BLOCK].long()
        kk = k[blocks].reshape(-1, hkv, q.shape[2])[:n].float()
        vv = v[blocks].reshape(-1, hkv, q.shape[2])[:n].float()
        qq = q[b].float().view(hkv, g, -1)
        sc = torch.einsum("hgd,thd->hgt", qq, kk) / math.sqrt(q.shape[2])
        p = sc.softmax(-1)
        out[b] = torch.einsum("hgt,thd->hgd", p, vv).reshape(-1, q.shape[2]).to(q.dtype)
    return out


def check(sms):
    """Fresh random inputs, random tables, ragged lengths: rel. error vs fp32."""
    import torch

    gen = torch.Generator().manual_seed(1)
    worst = 0.0
    for hq, hkv in [(16, 4), (32, 4), (32, 32), (8, 1)]:
        batch, pool, d = 5, 400, 128
        lens = torch.tensor([1, 15, 16, 17 + 64 * 3, 1000], dtype=torch.int32)
        nblk = (int(lens.max()) + BLOCK - 1) // BLOCK
        table = block_table("random", batch, nblk, pool, gen).cuda()
        k = torch.randn(pool, BLOCK, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(pool, BLOCK, hkv, d, device="cuda", dtype=torch.bfloat16)
        q = torch.randn(batch, hq, d, device="cuda", dtype=torch.bfloat16)
        out = torch.full_like(q, float("nan"))
        Decoder(batch, hq, hkv, d, nblk, sms)(q, k, v, table, lens.cuda(), out)
        ref = reference(q, k, v, table.cpu(), lens, hkv)
        err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
        if not math.isfinite(err) or err > 2e-2:
            sys.exit(f"check failed for heads {hq}/{hkv}: rel err {err}")
        worst = max(worst, err)
    print(f"correctness: worst relative error vs fp32 reference {worst:.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default=",".join(s[0] for s in SHAPES))
    args = ap.parse_args()
    import torch
    from triton.testing import do_bench

    os.makedirs(args.out, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    print(f"device {props.name}, {sms} SMs, torch {torch.__version__}")
    check(sms)
    gen = torch.Generator().manual_seed(0)
    rows = []
    d = 128
    for name, hq, hkv, layers, blocks in SHAPES:
        if name not in args.shapes.split(","):
            continue
        pool = blocks  # vLLM's own pool for the run; larger steps do not fit it
        # One K and one V tensor per layer, as vLLM allocates them.
        ks = [torch.randn(pool, BLOCK, hkv, d, device="cuda", dtype=torch.bfloat16) for _ in range(layers)]
        vs = [torch.randn(pool, BLOCK, hkv, d, device="cuda", dtype=torch.bfloat16) for _ in range(layers)]
        gb = 2 * layers * pool * BLOCK * hkv * d * 2 / 1e9
        print(f"{name}: {layers} layers, pool {pool} blocks ({gb:.1f} GB of KV)")
        for batch in BATCHES:
            for ctx in CONTEXTS:
                nblk = ctx // BLOCK
                rblk = (int(1.4 * ctx) + BLOCK - 1) // BLOCK
                if batch * rblk > pool:
                    continue
                full = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")
                ragged = torch.randint(int(0.6 * ctx), int(1.4 * ctx) + 1, (batch,), generator=gen, dtype=torch.int32)
                ragged += ctx - int(ragged.float().mean().round())  # exactly the same mean
                ragged = ragged.clamp(1, rblk * BLOCK).cuda()
                q = torch.randn(batch, hq, d, device="cuda", dtype=torch.bfloat16)
                out = torch.empty_like(q)
                kv_bytes = 2 * batch * ctx * hkv * d * 2
                res = {}
                for layout in LAYOUTS:
                    lens = ragged if layout == "ragged" else full
                    width = rblk if layout == "ragged" else nblk
                    dec = Decoder(batch, hq, hkv, d, width, sms)
                    table = block_table("random" if layout == "ragged" else layout, batch, width, pool, gen).cuda()

                    def step():
                        for i in range(layers):
                            dec(q, ks[i], vs[i], table, lens, out)

                    ms = do_bench(step, warmup=50, rep=300, return_mode="median") / layers
                    res[layout] = ms
                    rows.append({"shape": name, "q_heads": hq, "kv_heads": hkv, "layers": layers, "pool_blocks": pool,
                                 "batch": batch, "context": ctx, "layout": layout, "latency_ms": f"{ms:.5f}",
                                 "tb_per_s": f"{kv_bytes / ms / 1e9:.3f}"})
                print(f"  b={batch:3d} ctx={ctx:5d}  " + "  ".join(
                    f"{l} {res[l] * 1e3:7.1f} us ({kv_bytes / res[l] / 1e9:4.2f} TB/s)" for l in LAYOUTS) +
                      f"  random/contig {res['random'] / res['contig']:.3f} ragged/random {res['ragged'] / res['random']:.3f}")
        del ks, vs
        torch.cuda.empty_cache()
    with open(os.path.join(args.out, "paged_decode.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
