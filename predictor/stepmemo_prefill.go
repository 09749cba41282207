package predictor

import "math"

// The prefill step memo. A step with one prefill chunk is priced by the
// same counts as a decode-only step (stepKey: the GEMM tokens, scheduled
// tokens, requests, sampled requests, decodes and their attention key,
// running requests, CUDA graph or eager, async scheduling, the decodes'
// side of a local attention chunk) and the chunk's shape (new tokens,
// prefix tokens): every part of step reads nothing else. A serving run
// repeats such steps: on BenchmarkSimulateCodegen every arrival is a
// step of one chunk of 16 new tokens on a 576-token cached prefix beside
// the running decodes, and 7,421 of its 8,677 such steps repeated an
// earlier one's shape (1,256 distinct), each priced afresh by step (~300
// instructions). As the decode memo, a price is kept only when every
// memoized part of it is in its own memo (the dense layers, embedding
// and norm, LM head, decode attention, and the chunk's prefill attention,
// whose map stops growing at 2^20 shapes), so a hit skips exactly the
// work that would only have hit those memos: the same prices, and the
// same lookups counted in Coverage. MLA models are not kept (their
// per-chunk projections are priced by a GEMM lookup each time).

// prefillSlot is a prefill memo entry: the step's key (stepKey's words a,
// b and attn; attn 0 without decodes), its chunk's new tokens (at least
// one, so that an empty slot matches none; below 2^31, prefillKeyOf) and
// prefix tokens, and its price. 64 bytes, a cache line of the
// page-aligned table (as stepSlot: with a stepKey and a Chunk, 72).
type prefillSlot struct {
	a, b      uint64
	attn      int32
	newTokens int32
	prefix    int64
	val       StepTime
}

// holds reports whether the slot's key and chunk are k and c.
func (s *prefillSlot) holds(k *stepKey, c *Chunk) bool {
	return s.a == k.a && s.b == k.b && s.attn == k.attn && int(s.newTokens) == c.NewTokens && int(s.prefix) == c.PrefixTokens
}

// prefillMemoBits sizes the prefill memo (2,048 slots of 64 bytes, 128
// KiB a predictor).
const prefillMemoBits = 11

// prefillPriced is Step of a batch the decode memo does not hold
// (stepKeyOf refused it): through the prefill memo when it has one
// chunk, else step.
func (p *Predictor) prefillPriced(b *Batch, async bool) StepTime {
	key, ok := p.prefillKeyOf(b, async)
	if !ok {
		return p.step(b, async)
	}
	if p.prefillMemo == nil {
		p.prefillMemo = newPrefillMemo()
	}
	c := &b.Prefills[0]
	i := prefillSlotOf(&key, c)
	slot := &p.prefillMemo[i]
	if slot.holds(&key, c) {
		return slot.val
	}
	st := p.step(b, async)
	if p.remembered(b, int(key.a&0xffff)) && p.chunkRemembered(*c) {
		*slot = prefillSlot{a: key.a, b: key.b, attn: key.attn, newTokens: int32(c.NewTokens), prefix: int64(c.PrefixTokens), val: st}
		if p.prefillPager.n < pagerStores {
			noteStore(&p.prefillPager, p.prefillMemo[:], int(i))
		}
	}
	return st
}

// prefillKeyOf is b's prefill memo key beside its chunk (b.Prefills[0]);
// false when b is not kept (not one chunk of 1 to 2^31 − 1 new tokens, an
// MLA model, or counts past the key's fields).
func (p *Predictor) prefillKeyOf(b *Batch, async bool) (stepKey, bool) {
	t, n := max(b.PaddedTokens, b.NumTokens), b.NumDecodes
	if len(b.Prefills) != 1 || uint(b.Prefills[0].NewTokens-1) >= 1<<31-1 || p.mla || n < 0 ||
		uint(t|b.NumTokens|b.NumRequests|b.NumSampled|n) >= 1<<16 || uint(b.NumRunning) >= 1<<30 {
		return stepKey{}, false
	}
	k := p.packKey(b, t, n, async)
	if n > 0 {
		k.attn = int32(math.Round(float64(b.DecodeCtxSum) / float64(n) / 4))
	}
	return k, true
}

// prefillSlotOf is the place of key and chunk c in the prefill memo.
func prefillSlotOf(k *stepKey, c *Chunk) uint64 {
	h := k.a*0x9e3779b97f4a7c15 + k.b*0xc2b2ae3d27d4eb4f + uint64(c.NewTokens)*0xd6e8feb86659fd93 +
		uint64(c.PrefixTokens)*0xa0761d6478bd642f + uint64(k.attn)*0x94d049bb133111eb
	return h >> (64 - prefillMemoBits)
}

// chunkRemembered reports whether prefill attention's memo holds chunk c
// (and, under chunked local attention, its local chunk: attentionMs).
func (p *Predictor) chunkRemembered(c Chunk) bool {
	if _, ok := p.prefill[c]; !ok {
		return false
	}
	if p.chunked > 0 {
		_, ok := p.prefill[Chunk{NewTokens: c.NewTokens, PrefixTokens: c.PrefixTokens % p.cfg.Model.AttentionChunkSize}]
		return ok
	}
	return true
}
