"""Measurement grids and per-rank model shapes. Pure Python: no torch here.

Everything the collector measures is decided in this file, so a reader can see
the grid without a GPU and the tests can check it on a machine without torch.
"""

import json
import math
import random
from dataclasses import dataclass, field

# GEMM rows (tokens). The aiconfigurator tables hold every one of these m values.
M_GRID = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]

# (n, k) points measured in addition to the model shapes, so that our GEMM table
# can be compared with the imported aiconfigurator table at identical (m, n, k).
AIC_NK = [(n, k) for n in (4096, 8192) for k in (4096, 8192)]

# Decode attention: batch x context length (tokens of KV per sequence).
DECODE_BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256]
DECODE_CTX = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
DECODE_MAX_TOKENS = 1 << 20  # batch * context cap: 16 GiB of bf16 KV at 32 KV heads

# Prefill attention without cached prefix: batch x isl.
PREFILL_BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256]
PREFILL_ISL = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
PREFILL_MAX_TOKENS = 65536  # batch * isl cap

# Prefill with a cached prefix (query shorter than key): batch x new tokens x prefix.
PREFIX_BATCH = [1, 4, 16]
PREFIX_ISL = [128, 512, 2048]
PREFIX_LEN = [512, 2048, 8192]
PREFIX_MAX_TOKENS = 131072  # batch * (isl + prefix) cap

MOE_TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
MOE_DISTRIBUTIONS = ["balanced", "power_law_1.01", "power_law_1.2"]

# Collective message sizes in ELEMENTS of bf16: 256 .. 512 Mi, the imported NCCL grid.
COMM_SIZES = [1 << i for i in range(8, 30)]
COMM_OPS = ["all_reduce", "all_gather", "reduce_scatter", "alltoall"]

OPS_TOKENS = M_GRID + [16384]
SAMPLER_TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
LAUNCH_COUNTS = [1, 10, 100, 1000]

L2_BYTES = 60 * 1024 * 1024  # H200 L2 (PyTorch reports 60 MB)
ROTATE_TARGET_BYTES = 4 * L2_BYTES  # rotated input sets together exceed L2 by 4x
MAX_ROTATE = 32


def rotation_count(bytes_per_set, target=ROTATE_TARGET_BYTES, max_sets=MAX_ROTATE):
    """How many distinct input sets to cycle through so repeats do not hit in L2."""
    if bytes_per_set <= 0:
        return max_sets
    return max(1, min(max_sets, math.ceil(target / bytes_per_set)))


def pow2_ceil(x):
    return 1 << max(0, (int(x) - 1).bit_length())


@dataclass(frozen=True)
class MoESpec:
    hidden: int
    inter: int  # before the TP split (the imported table's convention)
    num_experts: int
    topk: int
    tp: int

    @property
    def inter_per_rank(self):
        return self.inter // self.tp


@dataclass(frozen=True)
class GemmShape:
    label: str  # qkv | o | gate_up | down | lm_head | router | aic_grid
    n: int
    k: int


@dataclass
class ModelShapes:
    """Per-rank operator shapes of one model at one tensor-parallel size (vLLM layout)."""

    name: str
    tp: int
    hidden: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    inter: int
    vocab: int
    num_experts: int = 0
    topk: int = 0
    gemms: list = field(default_factory=list)

    @property
    def heads_per_rank(self):
        return self.num_heads // self.tp

    @property
    def kv_heads_per_rank(self):
        # vLLM replicates KV heads when tp exceeds their number.
        return max(1, self.num_kv_heads // self.tp)

    @property
    def attention(self):
        return (self.heads_per_rank, self.kv_heads_per_rank, self.head_dim)

    @property
    def is_moe(self):
        return self.num_experts > 0

    @property
    def moe(self):
        if not self.is_moe:
            return None
        return MoESpec(self.hidden, self.inter, self.num_experts, self.topk, self.tp)

    @property
    def rotary_width(self):
        """Elements rotated per token on this rank: q and k heads times head_dim."""
        return (self.heads_per_rank + self.kv_heads_per_rank) * self.head_dim

    @property
    def act_width(self):
        """SiLU-and-mul output width on this rank (dense MLP or one expert)."""
        return self.inter // self.tp

    @property
    def padded_vocab(self):
        # vLLM pads the vocabulary to a multiple of 64 before splitting it over ranks.
        return ((self.vocab + 63) // 64) * 64


def model_shapes(config, tp, name=""):
    """Derives per-rank GEMM and attention shapes from a HF config dict."""
    if tp < 1:
        raise ValueError(f"tp must be >= 1, got {tp}")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    kv_heads = int(config.get("num_key_value_heads") or heads)
    head_dim = int(config.get("head_dim") or hidden // heads)
    inter = int(config["intermediate_size"])
    vocab = int(config["vocab_size"])
    experts = int(config.get("num_local_experts") or config.get("num_experts") or 0)
    topk = int(config.get("num_experts_per_tok") or 0) if experts else 0
    if heads % tp:
        raise ValueError(f"{name}: {heads} attention heads do not split over tp={tp}")
    if inter % tp:
        raise ValueError(f"{name}: intermediate_size {inter} does not split over tp={tp}")
    m = ModelShapes(name, tp, hidden, heads, kv_heads, head_dim, inter, vocab, experts, topk)
    q, kv = m.heads_per_rank, m.kv_heads_per_rank
    gemms = [
        GemmShape("qkv", (q + 2 * kv) * head_dim, hidden),
        GemmShape("o", hidden, q * head_dim),
    ]
    if m.is_moe:
        gemms.append(GemmShape("router", experts, hidden))  # replicated, not split
    else:
        gemms.append(GemmShape("gate_up", 2 * inter // tp, hidden))
        gemms.append(GemmShape("down", hidden, inter // tp))
    gemms.append(GemmShape("lm_head", m.padded_vocab // tp, hidden))
    m.gemms = gemms
    return m


def load_model(path, tp):
    with open(path) as f:
        config = json.load(f)
    name = path.replace("\\", "/").rstrip("/").split("/")
    name = name[-2] if name[-1] == "config.json" and len(name) > 1 else name[-1]
    return model_shapes(config, tp, name)


def gemm_points(models, include_aic=True):
    """Unique (n, k) pairs to measure, model shapes first, with their labels."""
    seen = {}
    for m in models:
        for g in m.gemms:
            seen.setdefault((g.n, g.k), set()).add(f"{m.name}/tp{m.tp}/{g.label}")
    if include_aic:
        for nk in AIC_NK:
            seen.setdefault(nk, set()).add("aic_grid")
    return sorted(seen.items())


def attention_configs(models):
    return sorted({m.attention for m in models})


def moe_specs(models):
    return sorted({m.moe for m in models if m.is_moe}, key=lambda s: (s.hidden, s.inter, s.tp))


def decode_points(batches=DECODE_BATCH, ctxs=DECODE_CTX, max_tokens=DECODE_MAX_TOKENS):
    return [(b, c) for c in ctxs for b in batches if b * c <= max_tokens]


def prefill_points(batches=PREFILL_BATCH, isls=PREFILL_ISL, max_tokens=PREFILL_MAX_TOKENS):
    return [(b, s, 0) for s in isls for b in batches if b * s <= max_tokens]


def prefix_points(batches=PREFIX_BATCH, isls=PREFIX_ISL, prefixes=PREFIX_LEN,
                  max_tokens=PREFIX_MAX_TOKENS):
    return [(b, s, p) for p in prefixes for s in isls for b in batches
            if b * (s + p) <= max_tokens]


def ops_points(models):
    """(op_name, width, extra) rows of the elementwise-op table, one per (op, width).

    extra: rotary (q heads, kv heads, head_dim) per rank; embedding the largest
    per-rank vocabulary among the models with that hidden size (the lookup cost
    does not depend on it, only the table's size does).
    """
    pts = {}
    for m in models:
        pts.setdefault(("rmsnorm", m.hidden), None)
        pts.setdefault(("rotary", m.rotary_width), m.attention)
        pts.setdefault(("silu_and_mul", m.act_width), None)
        vocab = m.padded_vocab // m.tp
        pts[("embedding", m.hidden)] = max(vocab, pts.get(("embedding", m.hidden)) or 0)
        pts.setdefault(("sampler", m.vocab), None)
        pts.setdefault(("sampler_greedy", m.vocab), None)
    return [(op, w, e) for (op, w), e in sorted(pts.items())]


# ---------------------------------------------------------------- MoE routing


def _power_law_sample(rng, alpha, xmin, xmax):
    u = rng.random()
    a = 1.0 - alpha
    return ((xmax ** a - xmin ** a) * u + xmin ** a) ** (1.0 / a)


def expert_counts(num_tokens, num_experts, topk, distribution, seed=0):
    """Tokens routed to each expert (sum = num_tokens * topk, each <= num_tokens).

    balanced: round robin, counts differ by at most one.
    power_law_<alpha>: per-expert loads drawn from a power law on [1, 0.8 T]
    (aiconfigurator's power_law_logits_v3 rule), scaled to the total, largest first.
    """
    if topk > num_experts:
        raise ValueError(f"topk {topk} > experts {num_experts}")
    total = num_tokens * topk
    if distribution == "balanced":
        base, extra = divmod(total, num_experts)
        return [base + (1 if e < extra else 0) for e in range(num_experts)]
    if not distribution.startswith("power_law_"):
        raise ValueError(f"unknown distribution {distribution!r}")
    alpha = float(distribution[len("power_law_"):])
    rng = random.Random(seed)
    if total > num_experts:
        raw = [_power_law_sample(rng, alpha, 1.0, max(2.0, num_tokens * 0.8))
               for _ in range(num_experts)]
    else:
        raw = [_power_law_sample(rng, alpha, 0.01, 2.0) for _ in range(num_experts)]
    s = sum(raw)
    counts = [int(round(r / s * total)) for r in raw]
    order = sorted(range(num_experts), key=lambda e: -counts[e])
    delta = total - sum(counts)
    i = 0
    while delta != 0:
        e = order[i % num_experts] if delta > 0 else order[-1 - (i % num_experts)]
        if delta > 0:
            counts[e] += 1
            delta -= 1
        elif counts[e] > 0:
            counts[e] -= 1
            delta += 1
        i += 1
    # A token cannot pick one expert twice: cap at num_tokens, spill to the least loaded.
    spill = 0
    for e in range(num_experts):
        if counts[e] > num_tokens:
            spill += counts[e] - num_tokens
            counts[e] = num_tokens
    while spill:
        e = min(range(num_experts), key=lambda x: counts[x])
        counts[e] += 1
        spill -= 1
    return sorted(counts, reverse=True)


def routing_from_counts(counts, num_tokens, topk):
    """Assigns distinct experts to tokens matching counts: list of topk-lists.

    Expert ids laid out largest load first, then dealt so token t takes slots
    t, T+t, 2T+t...; a block of <= T equal ids covers each token at most once.
    """
    flat = []
    for e in sorted(range(len(counts)), key=lambda x: -counts[x]):
        flat.extend([e] * counts[e])
    if len(flat) != num_tokens * topk:
        raise ValueError("counts do not sum to tokens * topk")
    return [[flat[j * num_tokens + t] for j in range(topk)] for t in range(num_tokens)]


def sorted_layout(routing, num_experts):
    """Rows of the permuted activation: token id per row sorted by expert, and counts."""
    rows = sorted(((e, t, j) for t, es in enumerate(routing) for j, e in enumerate(es)))
    counts = [0] * num_experts
    for e, _, _ in rows:
        counts[e] += 1
    return [t for _, t, _ in rows], [j for _, _, j in rows], counts
