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
			if !s.allocDecode(r, c) {
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

// allocDecode is allocate(r, c, 1, nil) for a one-token decode past
// allocate's fast path (its token starts a block, or a block is newly
// full), without the general case's work: with c = len(r.Blocks) × bs
// the token needs exactly one block. Anything else goes to allocate.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) allocDecode(r *Request, c int) bool {
	bs := s.cfg.BlockSize
	if held := len(r.Blocks) * bs; c+1 > held {
		if c != held || r.Blocks == nil {
			return s.allocate(r, c, 1, nil)
		}
		p := s.Pool
		if p.numFree < 1 {
			return false
		}
		p.numFree--
		b := p.takeLazy()
		if b < 0 {
			b = p.take1()
		}
		r.Blocks = append(r.Blocks, b)
	}
	// cacheFull's rule, kept inline: this is every decode's block path,
	// where the call cost 1.8M of BenchmarkSimulateCodegen's 310M
	// instructions (callgrind). Unlike cacheFull it tests shareable per
	// block instead of bounding the loop by numShareable: a decode hashes
	// about one block, and numShareable's division cost more than it saves
	// (+0.5M measured). Blocks numHashed … min(c+1, NumTokens)/bs − 1
	// are newly full, counted without the division: a decode fills at
	// most one.
	t := min(c+1, r.NumTokens())
	for j := r.numHashed; (j+1)*bs <= t; j++ {
		if r.shareable(j, bs) {
			s.Pool.cacheHeld(r.Blocks[j], r.blockHash(j, bs))
		}
		r.numHashed = j + 1
	}
	return true
}
