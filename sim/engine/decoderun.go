package engine

// This file lets the simulator advance an engine core through a run of
// decode steps without scheduling each one from scratch (the decode
// macro-step, sim/macro.go): it says how many upcoming steps are certain
// to decode the same requests again, and applies each step's update and
// the next schedule in one pass over the step's items. Outputs are those
// of stepping one by one (sim's TestMacroStepEquivalence).

// PlainDecodeCycles is how many engine cycles (the update from a step's
// sampled tokens, then the next Schedule) are certain to leave the
// scheduler decoding the same requests again, one token each, if nothing
// else happens meanwhile (no arrival, abort or other change from
// outside): last, the step Schedule made last, decodes one token for
// every running request, in running order, each sampling; within the
// cycles no request finishes or is skipped (its last token already
// scheduled), and Schedule admits nothing (no waiting request, or
// max_num_seqs or the token budget used up by the decodes). 0 when last
// is not such a step. The KV blocks the decodes need are not counted
// here: ScheduleDecodes takes them, or says when the pool is short.
// Cost: one pass over the running requests.
//
// A request with c computed, o output and P pending (scheduled, not yet
// sampled) tokens, in cycle j samples its o+j-th token (it finishes when
// o+j reaches max_tokens, or prompt+o+j max_model_len), then is scheduled
// with o+j output, P−1 pending and c+j−1 computed tokens: skipped once
// o+j+P−1 reaches max_tokens; one new token (known − computed stays
// prompt+o+P−c = 1) while c+j−1 < max_model_len.
func (s *Scheduler) PlainDecodeCycles(last *Step) int {
	n := len(s.running)
	if n == 0 || len(last.Items) != n || last.NumDecode != n || last.NumSampled != n ||
		last.NumPrefill != 0 || last.NumPreempted != 0 {
		return 0
	}
	if s.numWaiting > 0 && n < s.cfg.MaxNumSeqs && s.cfg.MaxNumBatchedTokens-n > 0 {
		return 0 // Schedule would try to admit a waiting request
	}
	maxLen := s.cfg.MaxModelLen
	m := int(^uint(0) >> 1)
	for i, r := range s.running {
		it := &last.Items[i]
		if it.Req != r || !it.Decode || !it.Samples || it.NumNew != 1 || r.Status != Running || r.InFlight {
			return 0
		}
		c, o, p, pr := r.NumComputed, r.NumOutput, r.Pending, r.PromptTokens
		if pr+o+p-c != 1 || p < 1 {
			return 0
		}
		m = min(m,
			r.MaxTokens-o-1, // the j-th sample finishes at max_tokens
			maxLen-pr-o-1,   // ... or at max_model_len
			r.MaxTokens-o-p, // the j-th schedule skips it
			maxLen-c)        // no room under max_model_len
		if m <= 0 {
			return 0
		}
	}
	return m
}

// SampleDecodes is the update from a plain decode step's sampled tokens
// (Sample on each item) when PlainDecodeCycles said none finishes.
func (s *Scheduler) SampleDecodes(st *Step) {
	for i := range st.Items {
		r := st.Items[i].Req
		r.Pending--
		r.NumOutput++
	}
}

// DecodeBlocks is how many KV blocks the next plain decode schedule of
// the running requests takes from the pool (a request's next token
// starting a block it does not hold). When more than Pool.NumFree,
// Schedule would preempt: ScheduleDecodes must not be used.
func (s *Scheduler) DecodeBlocks() int {
	bs, need := s.cfg.BlockSize, 0
	for _, r := range s.running {
		if r.NumComputed+1 > len(r.Blocks)*bs {
			need++
		}
	}
	return need
}

// ScheduleDecodes makes next, a plain decode step of the running
// requests scheduled by steps earlier (1 without async scheduling, 2 with
// it: the buffer two steps back), the step Schedule would make now, when
// PlainDecodeCycles said it would decode the same requests again and the
// pool holds DecodeBlocks: each request schedules one more token, taking
// a block when the token starts one and hashing a block it fills, as
// Schedule does (allocate), in the same order.
func (s *Scheduler) ScheduleDecodes(next *Step, by int) {
	bs := s.cfg.BlockSize
	for i := range next.Items {
		it := &next.Items[i]
		r := it.Req
		if c := r.NumComputed; c+1 > len(r.Blocks)*bs || r.NumTokens() >= (r.numHashed+1)*bs {
			// allocate's slow path: a new block, or a block now full.
			if !s.allocate(r, c, 1, nil) {
				panic("engine: ScheduleDecodes without the blocks DecodeBlocks counted") // a bug, not input
			}
		}
		r.NumComputed++
		r.Pending++
		it.Computed += by
	}
	n := len(next.Items)
	*next = Step{Items: next.Items, NumTokens: n, NumDecode: n, NumSampled: n,
		DecodeCtxSum: next.DecodeCtxSum + int64(by*n), KVBlocksUsed: s.Pool.NumUsed(),
		NumRunning: len(s.running), NumWaiting: s.numWaiting}
}

// Decodes is a run of plain decode cycles whose per-request state is
// kept back: between BeginDecodes and End the scheduler's requests are
// not advanced cycle by cycle; each request's counts follow from the
// cycles sampled (D) and scheduled (S) since the start, and it is touched
// only when a token of its starts or fills a KV block (allocate, in the
// order Schedule would call it). End writes the counts (and the steps'
// items) as cycle-by-cycle updates would have left them. Nothing may
// read the requests or the steps' items in between: a caller that shows
// them (an observer) uses SampleDecodes and ScheduleDecodes instead.
type Decodes struct {
	s          *Scheduler
	reqs       []*Request
	c0, o0, p0 []int
	// due holds, by cycle modulo its length, the indices (in running
	// order) of the requests whose next token starts or fills a block in
	// that cycle's schedule.
	due  [][]int32
	S, D int
}

// BeginDecodes starts a run over the running requests, as
// PlainDecodeCycles found them; false (use SampleDecodes and
// ScheduleDecodes) when a request holds blocks further ahead than a run
// tracks.
func (s *Scheduler) BeginDecodes(d *Decodes) bool {
	d.s, d.S, d.D = s, 0, 0
	d.reqs = append(d.reqs[:0], s.running...)
	n := len(d.reqs)
	d.c0, d.o0, d.p0 = grow(d.c0, n), grow(d.o0, n), grow(d.p0, n)
	if w := s.cfg.BlockSize + 2; len(d.due) != w {
		d.due = make([][]int32, w)
	}
	for i := range d.due {
		d.due[i] = d.due[i][:0]
	}
	for i, r := range d.reqs {
		d.c0[i], d.o0[i], d.p0[i] = r.NumComputed, r.NumOutput, r.Pending
		if !d.plan(i) {
			return false
		}
	}
	return true
}

func grow(v []int, n int) []int {
	if cap(v) < n {
		return make([]int, n)
	}
	return v[:n]
}

// plan files request i under the cycle whose schedule next calls
// allocate for it (its slow path: a token that starts a block it does
// not hold, computed+1 > blocks × block_size, or a block newly full,
// prompt+output ≥ (hashed+1) × block_size). Cycle j (from 1) schedules
// with c0+j−1 computed and o0+j output tokens.
//
// A block is allocated just in time, so the cycle is at most a block's
// tokens ahead (and after one due cycle, at most bs cycles later): due's
// bs+2 slots never wrap onto a cycle not yet run.
func (d *Decodes) plan(i int) bool {
	r, bs := d.reqs[i], d.s.cfg.BlockSize
	j := min(len(r.Blocks)*bs-d.c0[i]+1, (r.numHashed+1)*bs-r.PromptTokens-d.o0[i])
	j = max(j, d.S+1) // due now at the latest
	if j-d.S >= len(d.due) {
		return false
	}
	d.due[j%len(d.due)] = append(d.due[j%len(d.due)], int32(i))
	return true
}

// Sample is SampleDecodes, kept back.
func (d *Decodes) Sample() { d.D++ }

// Blocks is DecodeBlocks for the next schedule.
func (d *Decodes) Blocks() int {
	j, bs, need := d.S+1, d.s.cfg.BlockSize, 0
	for _, i := range d.due[j%len(d.due)] {
		if d.c0[i]+j-1+1 > len(d.reqs[i].Blocks)*bs {
			need++
		}
	}
	return need
}

// Schedule is ScheduleDecodes, kept back: only the requests due in this
// cycle are brought up to date and allocated for, in running order.
func (d *Decodes) Schedule(next *Step, by int) {
	j := d.S + 1
	slot := &d.due[j%len(d.due)]
	list := *slot
	*slot = nil // plan may file into this slot again only for a later cycle
	if len(list) > 1 {
		sortInt32(list)
	}
	for _, i := range list {
		r := d.reqs[i]
		r.NumOutput, r.Pending, r.NumComputed = d.o0[i]+d.D, d.p0[i]+d.S-d.D, d.c0[i]+d.S
		if !d.s.allocate(r, r.NumComputed, 1, nil) {
			panic("engine: Decodes.Schedule without the blocks Blocks counted") // a bug, not input
		}
	}
	d.S = j
	for _, i := range list {
		if !d.plan(int(i)) {
			panic("engine: Decodes: a block boundary beyond the due ring") // a bug, not input
		}
	}
	if *slot == nil {
		*slot = list[:0] // keep the slice for reuse
	}
	n := len(next.Items)
	*next = Step{Items: next.Items, NumTokens: n, NumDecode: n, NumSampled: n,
		DecodeCtxSum: next.DecodeCtxSum + int64(by*n), KVBlocksUsed: d.s.Pool.NumUsed(),
		NumRunning: len(d.s.running), NumWaiting: d.s.numWaiting}
}

// End writes the requests' counts and the items of last (the step
// scheduled last) and, with async scheduling, of before (the one before
// it; nil without) as the cycles run so far leave them.
func (d *Decodes) End(last, before *Step) {
	for i, r := range d.reqs {
		r.NumComputed, r.NumOutput, r.Pending = d.c0[i]+d.S, d.o0[i]+d.D, d.p0[i]+d.S-d.D
	}
	for i := range last.Items {
		it := &last.Items[i]
		it.Computed = it.Req.NumComputed - 1
	}
	if before != nil {
		for i := range before.Items {
			it := &before.Items[i]
			it.Computed = it.Req.NumComputed - 2
		}
	}
}

// sortInt32 sorts a short list in place (insertion sort: a cycle's due
// requests are few).
func sortInt32(v []int32) {
	for i := 1; i < len(v); i++ {
		for k := i; k > 0 && v[k] < v[k-1]; k-- {
			v[k], v[k-1] = v[k-1], v[k]
		}
	}
}
