"""Fused elementwise kernels in Triton, shaped like vLLM's CUDA ones (one pass
over the data each): fused residual-add + RMSNorm, SiLU-and-mul, NeoX rotary
on q and k in place. Imported only on a GPU machine; each is checked against a
torch reference before it is timed (ops.py), and torch is used if it fails.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_add_rmsnorm_kernel(x_ptr, res_ptr, w_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    x = x + r
    tl.store(res_ptr + row * N + cols, x.to(res_ptr.dtype.element_ty), mask=mask)
    var = tl.sum(x * x, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * N + cols, (x * rstd * w).to(x_ptr.dtype.element_ty), mask=mask)


def fused_add_rmsnorm(x, residual, weight, eps=1e-5):
    """residual += x; x = rmsnorm(residual) * weight (both in place, like vLLM)."""
    t, n = x.shape
    block = triton.next_power_of_2(n)
    _fused_add_rmsnorm_kernel[(t,)](x, residual, weight, n, eps, BLOCK=block,
                                    num_warps=8 if block >= 4096 else 4)


@triton.jit
def _silu_and_mul_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < D
    g = tl.load(x_ptr + row * 2 * D + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + row * 2 * D + D + cols, mask=mask, other=0.0).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(out_ptr + row * D + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x, out=None):
    t, two_d = x.shape
    d = two_d // 2
    if out is None:
        out = torch.empty((t, d), dtype=x.dtype, device=x.device)
    block = 1024
    _silu_and_mul_kernel[(t, triton.cdiv(d, block))](x, out, d, BLOCK=block, num_warps=4)
    return out


@triton.jit
def _rotary_neox_kernel(q_ptr, k_ptr, pos_ptr, cache_ptr, HQ, HK,
                        HEAD: tl.constexpr, HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + t).to(tl.int64)
    offs = tl.arange(0, HALF)
    cos = tl.load(cache_ptr + pos * HEAD + offs).to(tl.float32)[None, :]
    sin = tl.load(cache_ptr + pos * HEAD + HALF + offs).to(tl.float32)[None, :]
    h = tl.arange(0, BLOCK_H)
    mq = (h < HQ)[:, None]
    qb = q_ptr + t * HQ * HEAD + h[:, None] * HEAD + offs[None, :]
    x1 = tl.load(qb, mask=mq, other=0.0).to(tl.float32)
    x2 = tl.load(qb + HALF, mask=mq, other=0.0).to(tl.float32)
    tl.store(qb, (x1 * cos - x2 * sin).to(q_ptr.dtype.element_ty), mask=mq)
    tl.store(qb + HALF, (x2 * cos + x1 * sin).to(q_ptr.dtype.element_ty), mask=mq)
    mk = (h < HK)[:, None]
    kb = k_ptr + t * HK * HEAD + h[:, None] * HEAD + offs[None, :]
    y1 = tl.load(kb, mask=mk, other=0.0).to(tl.float32)
    y2 = tl.load(kb + HALF, mask=mk, other=0.0).to(tl.float32)
    tl.store(kb, (y1 * cos - y2 * sin).to(k_ptr.dtype.element_ty), mask=mk)
    tl.store(kb + HALF, (y2 * cos + y1 * sin).to(k_ptr.dtype.element_ty), mask=mk)


def rotary_neox(positions, q, k, cos_sin_cache, num_q_heads, num_kv_heads, head_dim):
    """q [T, HQ*D], k [T, HK*D] rotated in place; cache [max_pos, D] = cos | sin."""
    t = q.shape[0]
    block_h = triton.next_power_of_2(max(num_q_heads, num_kv_heads))
    _rotary_neox_kernel[(t,)](q, k, positions, cos_sin_cache, num_q_heads, num_kv_heads,
                              HEAD=head_dim, HALF=head_dim // 2, BLOCK_H=block_h, num_warps=4)
