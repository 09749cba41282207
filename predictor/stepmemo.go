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
//
// The key is packed into three words, so that building it and comparing
// it with a slot's are a few instructions (field by field they were ~110
// instructions a Step on BenchmarkSimulateCodegen): a holds the GEMM
// tokens t, the scheduled tokens, the requests and the sampled requests,
// 16 bits each (stepKeyOf keeps them below 2^16); b the decodes (16
// bits), the running requests (30 bits) and the graph, async and past
// flags; attn the attention key. A real key has decodes ≥ 1, so an empty
// slot (all zero) matches none.
type stepKey struct {
	a, b uint64
	attn int32
}

// Bits of stepKey.b.
const (
	keyRunningShift = 16
	keyGraph        = 1 << 46
	keyAsync        = 1 << 47
	keyPast         = 1 << 48
)

func (k *stepKey) decodes() int64 { return int64(k.b & 0xffff) }

// stepSlot is a memo entry: the key (stepKey's words a, b and attn), its
// price, and the decode context sums [lo, lo + width) its price holds for
// (keyRange, worked out once when the price is kept: StepRange asks on
// every hit). 64 bytes, a cache line of the page-aligned table: with the
// key's padding and hi as fields (72 bytes) six slots in eight straddled
// two lines, and a hit read both (cachegrind, 1 MiB LL: ~3,300 LL misses
// of the codegen run's ~50,000 in priced).
type stepSlot struct {
	a, b uint64
	attn int32
	// width is hi − lo: keyRange's range holds the sum of the batch
	// priced, so it is not empty, and it spans at most 4 × decodes < 2^18.
	width uint32
	lo    int64
	val   StepTime
}

// key is the slot's key.
func (s *stepSlot) key() stepKey { return stepKey{a: s.a, b: s.b, attn: s.attn} }

// holds reports whether the slot's key is k.
func (s *stepSlot) holds(k *stepKey) bool { return s.a == k.a && s.b == k.b && s.attn == k.attn }

// hi is the end of the slot's range of decode context sums.
func (s *stepSlot) hi() int64 { return s.lo + int64(s.width) }

// stepMemoBits sizes the table (4,096 slots of 64 bytes, 256 KiB: the
// 9,000-request codegen run priced 11,700 decode steps again with 1,024
// slots, 5,500 with 4,096).
const stepMemoBits = 12

// stepKeyOf is b's memo key; false when b is not memoized (prefill
// chunks, or counts past the key's fields).
func (p *Predictor) stepKeyOf(b *Batch, async bool) (stepKey, bool) {
	t, n := max(b.PaddedTokens, b.NumTokens), b.NumDecodes
	if len(b.Prefills) > 0 || n <= 0 || uint(t|b.NumTokens|b.NumRequests|b.NumSampled|n) >= 1<<16 ||
		uint(b.NumRunning) >= 1<<30 {
		return stepKey{}, false
	}
	k := p.packKey(b, t, n, async)
	k.attn = int32(math.Round(float64(b.DecodeCtxSum) / float64(n) / 4))
	return k, true
}

// packKey is b's key but for the attention key (t its GEMM tokens, n its
// decodes: both below 2^16, as its other counts, and NumRunning below
// 2^30).
func (p *Predictor) packKey(b *Batch, t, n int, async bool) stepKey {
	k := stepKey{
		a: uint64(t) | uint64(b.NumTokens)<<16 | uint64(b.NumRequests)<<32 | uint64(b.NumSampled)<<48,
		b: uint64(n) | uint64(b.NumRunning)<<keyRunningShift,
	}
	if b.Graph {
		k.b |= keyGraph
	}
	if async {
		k.b |= keyAsync
	}
	if p.chunked > 0 && b.DecodeCtxSum > int64(n)*int64(p.cfg.Model.AttentionChunkSize) {
		k.b |= keyPast
	}
	return k
}

// slot is k's place in the table: a hash of everything but the attention
// key, plus the key, so that a batch's successive keys (its context grows
// by a token a step) lie in neighbouring slots, in cache together.
func (k *stepKey) slot() uint64 {
	h := k.a*0x9e3779b97f4a7c15 + k.b*0xc2b2ae3d27d4eb4f
	return (h>>(64-stepMemoBits) + uint64(k.attn)) & (1<<stepMemoBits - 1)
}

// priced is Step: b's price, and its memo slot when the slot holds it
// (the slot's key is b's), else nil. A price not held is priced afresh
// and kept when every part of it is remembered (its slot then returned).
// The slot, not the key, comes back: a pointer in one register, where
// the key and a flag cost the hit path spills.
func (p *Predictor) priced(b *Batch, async bool) (StepTime, *stepSlot) {
	key, memo := p.stepKeyOf(b, async)
	if !memo {
		return p.prefillPriced(b, async), nil // stepmemo_prefill.go
	}
	if p.stepMemo == nil {
		p.stepMemo = newStepMemo()
	}
	i := key.slot()
	slot := &p.stepMemo[i]
	if slot.holds(&key) {
		return slot.val, slot
	}
	st := p.step(b, async)
	if p.remembered(b, int(key.a&0xffff)) {
		lo, hi := p.keyRange(&key)
		*slot = stepSlot{a: key.a, b: key.b, attn: key.attn, width: uint32(hi - lo), lo: lo, val: st}
		if p.stepPager.n < pagerStores {
			noteStore(&p.stepPager, p.stepMemo[:], int(i))
		}
		return st, slot
	}
	return st, nil
}

// keyRange is the decode context sums [lo, hi) (tokens) whose batches
// have key's attention key, and its side of the attention chunk: with n
// decodes, round(fl(sum/n)/4) = a ⟺ 4na − 2n ≤ sum < 4na + 2n (for
// n < 2^29 and sums below 2^40 the float quotient never crosses the
// half-way point the exact one does not, as the distance to it is at
// least 1/n). 0, 0 past those bounds.
func (p *Predictor) keyRange(key *stepKey) (lo, hi int64) {
	n, a := key.decodes(), int64(key.attn)
	if n >= 1<<20 || a >= 1<<36/n {
		return 0, 0
	}
	lo, hi = 4*n*a-2*n, 4*n*a+2*n
	if p.chunked > 0 {
		w := n * int64(p.cfg.Model.AttentionChunkSize)
		if key.b&keyPast != 0 {
			lo = max(lo, w+1)
		} else {
			hi = min(hi, w+1)
		}
	}
	return lo, hi
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
	if n := b.NumDecodes; p.mla && (n >= len(p.mlaDecode) || p.mlaDecode[n] <= 0) {
		return false
	}
	return true
}

// StepRange is Step, and the decode context sums [lo, hi) (tokens) over
// which a batch equal to b in everything else is priced the same by Step
// with nothing else done (its memo slot holds the price; keyRange);
// lo = hi = 0 when the price is not held. The k-step advance
// (sim/cohortrun.go) asks once per range instead of once per step.
func (p *Predictor) StepRange(b *Batch, async bool) (st StepTime, lo, hi int64) {
	st, slot := p.priced(b, async)
	if slot != nil {
		return st, slot.lo, slot.hi()
	}
	return st, 0, 0
}

// StepHint is StepRangeNext's memory of its caller's latest price: the
// memo slot holding it and its key's words but the attention key and the
// attention-chunk side (keyPast). The zero value holds none.
type StepHint struct {
	i, a, b uint64
	ok      bool
}

// StepRangeNext is StepRange for a batch that, when h holds a price, is
// the batch of that price but for its decode context sum (the caller
// keeps that promise, else clears h): its key's words are then h's but
// for the attention key and chunk side, and its slot is h's slot plus
// its attention key's distance from h's. So when the slot after h's (the
// next attention key: the k-step advance's next price) holds a price
// with h's key words whose range holds b's context sum, that is b's
// price, with b's key (the range is exactly the sums of the slot's
// attention key and chunk side, keyRange), as StepRange would find it;
// it comes back in ~20 instructions without building or hashing the key
// (StepRange takes ~100 on a hit). Otherwise it is StepRange, h set to
// the price it found (cleared when not kept). The same prices, ranges,
// memo contents and coverage counts as StepRange: a memo hit does
// nothing else there either.
func (p *Predictor) StepRangeNext(b *Batch, async bool, h *StepHint) (st StepTime, lo, hi int64) {
	if h.ok {
		i := (h.i + 1) & (1<<stepMemoBits - 1)
		slot := &p.stepMemo[i]
		// lo ≤ ctx < lo + width, in one comparison (sums are far below 2^63).
		if ctx := b.DecodeCtxSum; slot.a == h.a && slot.b&^keyPast == h.b && uint64(ctx-slot.lo) < uint64(slot.width) {
			h.i = i
			return slot.val, slot.lo, slot.hi()
		}
	}
	st, slot := p.priced(b, async)
	if slot != nil {
		k := slot.key()
		*h = StepHint{i: k.slot(), a: slot.a, b: slot.b &^ keyPast, ok: true}
		return st, slot.lo, slot.hi()
	}
	h.ok = false
	return st, 0, 0
}
