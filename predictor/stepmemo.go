package predictor

import "math"

// The step memo. A decode-only step's price depends on a few counts,
// and a serving run repeats them step after step (the decode context's
// mean moves by one token a step, its attention key by one in four), so
// Step remembers the prices of decode-only batches in a direct-mapped
// table by everything they depend on: the token count the GEMMs run on,
// the scheduled tokens, CUDA graph or eager, the decodes and their
// attention key (decodeAttnMs's, and for chunked local attention whether
// the mean context passes the chunk), the sampled and scheduled requests,
// the running requests and async scheduling. A price is remembered only
// when every part of it is remembered by its own memo (the dense layers,
// embedding and norm, LM head, MLA's projections), so a hit skips
// exactly the work that would only have hit those memos: the same
// prices, and the same lookups counted in Coverage.
type stepKey struct {
	t, tokens, decodes, sampled, requests, running int32
	attn                                           int32
	graph, async, past                             bool
}

type stepSlot struct {
	key  stepKey
	val  StepTime
	used bool
}

// stepLast is the latest memoized price in front of the table: the next
// step usually differs only in its decode context sum, within the range
// [lo, hi) that keeps its attention key (and its side of the chunk).
type stepLast struct {
	key    stepKey
	lo, hi int64
	val    StepTime
	used   bool
}

// lastHit is Step's fast path: b is the latest memoized batch but for a
// context sum in the same key's range.
func (p *Predictor) lastHit(b *Batch, async bool) (StepTime, bool) {
	l := &p.stepLast
	k := &l.key
	if !l.used || b.DecodeCtxSum < l.lo || b.DecodeCtxSum >= l.hi || len(b.Prefills) > 0 ||
		int(k.decodes) != b.NumDecodes || int(k.running) != b.NumRunning || int(k.requests) != b.NumRequests ||
		int(k.tokens) != b.NumTokens || int(k.sampled) != b.NumSampled || int(k.t) != max(b.PaddedTokens, b.NumTokens) ||
		k.graph != b.Graph || k.async != async {
		return StepTime{}, false
	}
	return l.val, true
}

// setLast makes key (val) the latest memoized price: its context sums
// are those n decodes' sums whose attention key is key.attn:
// round(fl(sum/n)/4) = a ⟺ 4na − 2n ≤ sum < 4na + 2n (for n < 2^29 and
// sums below 2^40 the float quotient never crosses the half-way point the
// exact one does not, as the distance to it is at least 1/n), and on the
// same side of n × the attention chunk.
func (p *Predictor) setLast(key stepKey, val StepTime) {
	n, a := int64(key.decodes), int64(key.attn)
	if n >= 1<<20 || a >= 1<<36/n {
		p.stepLast.used = false
		return
	}
	lo, hi := 4*n*a-2*n, 4*n*a+2*n
	if p.chunked > 0 {
		w := n * int64(p.cfg.Model.AttentionChunkSize)
		if key.past {
			lo = max(lo, w+1)
		} else {
			hi = min(hi, w+1)
		}
	}
	p.stepLast = stepLast{key: key, lo: lo, hi: hi, val: val, used: true}
}

// stepMemoBits sizes the table (4,096 slots, 288 KiB: the 9,000-request
// codegen run priced 11,700 decode steps again with 1,024 slots, 5,500
// with 4,096).
const stepMemoBits = 12

// stepKeyOf is b's memo key; false when b is not memoized (prefill
// chunks, or counts past the memos' ranges).
func (p *Predictor) stepKeyOf(b *Batch, async bool) (stepKey, bool) {
	t := max(b.PaddedTokens, b.NumTokens)
	if len(b.Prefills) > 0 || t >= 1<<16 || b.NumRequests >= 1<<16 || b.NumRunning >= 1<<30 || b.NumDecodes <= 0 {
		return stepKey{}, false
	}
	n := b.NumDecodes
	k := stepKey{t: int32(t), tokens: int32(b.NumTokens), decodes: int32(n), sampled: int32(b.NumSampled),
		requests: int32(b.NumRequests), running: int32(b.NumRunning), graph: b.Graph, async: async,
		attn: int32(math.Round(float64(b.DecodeCtxSum) / float64(n) / 4))}
	if p.chunked > 0 {
		k.past = b.DecodeCtxSum > int64(n)*int64(p.cfg.Model.AttentionChunkSize)
	}
	return k, true
}

// slot is k's place in the table: a hash of everything but the attention
// key, plus the key, so that a batch's successive keys (its context grows
// by a token a step) lie in neighbouring slots, in cache together.
func (k *stepKey) slot() uint64 {
	h := uint64(k.t)<<48 ^ uint64(k.decodes)<<32 ^ uint64(k.running)<<20 ^
		uint64(k.requests)<<40 ^ uint64(k.sampled)<<28 ^ uint64(k.tokens)<<8
	if k.graph {
		h ^= 1
	}
	if k.async {
		h ^= 2
	}
	if k.past {
		h ^= 4
	}
	return ((h * 0x9e3779b97f4a7c15 >> (64 - stepMemoBits)) + uint64(k.attn)) & (1<<stepMemoBits - 1)
}

// remembered reports whether every memoized part of decode-only batch
// b's price is in its memo (t its GEMM tokens).
func (p *Predictor) remembered(b *Batch, t int) bool {
	dense := p.dense
	if !b.Graph {
		dense = p.denseE
	}
	if t >= len(dense) || dense[t] <= 0 || t >= len(p.ends) || p.ends[t] <= 0 {
		return false
	}
	if r := b.NumRequests; r > 0 && (r >= len(p.head) || p.head[r] <= 0) {
		return false
	}
	if n := b.NumDecodes; p.cfg.Model.IsMLA() && (n >= len(p.mlaDecode) || p.mlaDecode[n] <= 0) {
		return false
	}
	return true
}

// StepRange is Step, and the decode context sums [lo, hi) (tokens) over which a
// batch equal to b in everything else is priced the same by Step with
// nothing else done (the latest memoized price's range, while no other
// batch is priced); lo = hi = 0 when none. The k-step advance
// (sim/cohortrun.go) asks once per range instead of once per step.
func (p *Predictor) StepRange(b *Batch, async bool) (st StepTime, lo, hi int64) {
	st = p.Step(b, async)
	if _, ok := p.lastHit(b, async); ok {
		return st, p.stepLast.lo, p.stepLast.hi
	}
	return st, 0, 0
}
