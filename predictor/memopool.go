package predictor

import "sync"

// The memo tables' pools. A predictor allocates its direct-mapped memo
// tables (the step memo 256 KiB, the prefill memo 128 KiB, the decode
// cache 24 KiB) at its first price, zeroed, and a planning command builds
// a predictor per engine for every probe of 50–400 requests: ~400 KiB of
// the ~1.3 MB a 100-request probe allocated, pages faulted in afresh or
// cleared by the allocator, and garbage that brings the next collection
// closer. Release hands a finished run's tables back, cleared, and the
// next predictor takes them: the same zeroed tables, so the same prices,
// memo hits and Coverage.
var (
	stepMemos    = sync.Pool{New: func() any { return new([1 << stepMemoBits]stepSlot) }}
	prefillMemos = sync.Pool{New: func() any { return new([1 << prefillMemoBits]prefillSlot) }}
	decodeHots   = sync.Pool{New: func() any { return new([decodeHotSize]decodeSlot) }}
)

// floatMemos holds the by-count memo slices (dense layers, embedding and
// norm, LM head, MLA decode: float64 by tokens, rows or decodes; 0 =
// not priced) of released predictors, emptied: a slice grows by
// appending zeros, so one taken from here reads as a fresh one whatever
// its backing array held. ~0.2 MB of a DeepSeek-V2-Lite capacity probe.
var floatMemos sync.Pool // *[]float64

// takeFloats is an empty memo slice, with room from a released
// predictor's when there is one (nil otherwise, as before).
func takeFloats() []float64 {
	if v, _ := floatMemos.Get().(*[]float64); v != nil {
		return (*v)[:0]
	}
	return nil
}

// putFloats hands s's backing array to takeFloats.
func putFloats(s []float64) {
	if cap(s) > 0 {
		s = s[:0]
		floatMemos.Put(&s)
	}
}

// newStepMemo is a zeroed step memo table.
func newStepMemo() *[1 << stepMemoBits]stepSlot {
	return stepMemos.Get().(*[1 << stepMemoBits]stepSlot)
}

// newPrefillMemo is a zeroed prefill memo table.
func newPrefillMemo() *[1 << prefillMemoBits]prefillSlot {
	return prefillMemos.Get().(*[1 << prefillMemoBits]prefillSlot)
}

// newDecodeHot is a zeroed decode cache.
func newDecodeHot() *[decodeHotSize]decodeSlot {
	return decodeHots.Get().(*[decodeHotSize]decodeSlot)
}

// Release clears p's memo tables and slices and hands them to the
// predictors built after it. Call it when p will price no more steps (its run is over);
// were it to price again, it would start from empty tables of its own,
// as a new predictor does.
func (p *Predictor) Release() {
	for _, s := range []*[]float64{&p.dense, &p.denseE, &p.ends, &p.head, &p.mlaDecode} {
		putFloats(*s)
		*s = nil
	}
	if t := p.stepMemo; t != nil {
		p.stepMemo, p.stepPager = nil, pager{}
		*t = [1 << stepMemoBits]stepSlot{}
		stepMemos.Put(t)
	}
	if t := p.prefillMemo; t != nil {
		p.prefillMemo, p.prefillPager = nil, pager{}
		*t = [1 << prefillMemoBits]prefillSlot{}
		prefillMemos.Put(t)
	}
	if t := p.decodeHot; t != nil {
		p.decodeHot, p.decodePager = nil, pager{}
		*t = [decodeHotSize]decodeSlot{}
		decodeHots.Put(t)
	}
}
