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

// Release clears p's memo tables and hands them to the predictors built
// after it. Call it when p will price no more steps (its run is over);
// were it to price again, it would start from empty tables of its own,
// as a new predictor does.
func (p *Predictor) Release() {
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
