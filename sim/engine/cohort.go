package engine

import "slices"

// The decode cohort. In a serving run nearly every running request takes a
// plain decode step every step: one token scheduled (NumComputed and
// Pending + 1), one token sampled (NumOutput + 1, Pending − 1), and a
// block allocated or hashed only every BlockSize tokens. The cohort keeps
// those counts back for the longest prefix of the running list in that
// steady state, its members: each schedule advances them all at once by
// one cycle, and a member is touched only when a token of its starts or
// fills a KV block (allocate, in running order, as Schedule calls it),
// when its last token is scheduled, and when it finishes. A step lists the
// members' items implicitly (Step.Cohort: the first Cohort running
// requests, each a one-token decode that samples); the rest of the step
// (prefill chunks, the other running requests, admissions) is scheduled
// after them as before, in Items.
//
// Nothing outside the scheduler may read a member's NumComputed, Pending
// or NumOutput, or an implicit item: Dissolve writes every count, and
// every scheduled step's items, as cycle-by-cycle scheduling would have
// left them, and ends the cohort (a later schedule starts a new one).
// The scheduler dissolves it itself before anything that reads or
// reorders members: a preemption, an abort of a member, a schedule whose
// members would not all fit the pool or the token budget.
//
// Cycles count the steps that have members. A member joins at the start
// of a schedule when it is the first running request after the members
// and is in the steady state the scheduler would schedule as a plain
// decode (its prompt computed, one token left to compute, Pending equal
// to the cohort's lag: 1 with async scheduling, whose next step is
// scheduled before the current one is sampled, 0 without).
type cohort struct {
	on  bool
	lag int
	// canJoin, when set, is the owner's veto on a request joining (its
	// client side must be able to follow it too).
	canJoin func(*Request) bool
	// dissolving, when set, is called with the members (counts written)
	// when the cohort ends, before the steps' items are written.
	dissolving func(members []*Request)
	n          int // members: running[:n]
	// base is what a member's coIdx exceeds its index in the running
	// list by: finished members leaving from the front of the list
	// (compactRunning) move it, not the others' coIdx.
	base    int
	active  int // members scheduled in the latest cycle
	cycle   int // the latest cycle scheduled
	sampled int // the latest cycle sampled
	// sumBase is Σ (NumComputed − coSched) over the active members: the
	// cycle-k decode context sum is sumBase + active × k.
	sumBase int
	// lasts[lastsHead:] are the members' last cycles (coLast) in
	// ascending order: members leave in that order, each when the sample
	// of its last cycle finishes it (CohortSpan reads the least).
	lasts     []int
	lastsHead int
	// due holds, by cycle modulo its length (a power of two, at least
	// BlockSize + 2), the members but the steady ones (phase) whose
	// schedule in that cycle needs them: a block to allocate or hash, the
	// last cycle passed (async), or their finishing cycle to note.
	due     [][]*Request
	dueMask int
	// phase holds, by cycle modulo BlockSize, the members in the steady
	// decode (cohortdue.go) due in those cycles, in running order;
	// phaseMask is BlockSize − 1 when that is a power of two, else −1.
	// entering collects the members a cycle's work makes steady.
	phase     [][]*Request
	phaseMask int
	entering  []*Request
	// finishing holds, by cycle modulo 2 (cycles are ≥ 0), the members
	// whose last token that cycle samples.
	finishing [2][]*Request
	// steps are the scheduled steps with members not yet sampled, in
	// order: steps[0:nsteps] (at most two: async's current and next).
	steps   [4]*Step
	nsteps  int
	scratch []*Request
}

// EnableCohort turns the decode cohort on. lag is 1 when the caller
// schedules a step before sampling the previous one (async scheduling),
// 0 when it samples each step before scheduling the next. canJoin (nil:
// any) vetoes members; dissolving (nil: none) is called when the cohort
// ends (see cohort). The caller samples steps in the order it scheduled
// them, calling SampleCohort before anything else of a step's sample.
func (s *Scheduler) EnableCohort(lag int, canJoin func(*Request) bool, dissolving func(members []*Request)) {
	ring := 4
	for ring < s.cfg.BlockSize+2 {
		ring <<= 1
	}
	bs := max(s.cfg.BlockSize, 1)
	mask := bs - 1
	if bs&mask != 0 {
		mask = -1
	}
	s.co = cohort{on: true, lag: lag, canJoin: canJoin, dissolving: dissolving, due: make([][]*Request, ring), dueMask: ring - 1,
		phase: make([][]*Request, bs), phaseMask: mask}
}

// Cohort returns the members, in running order: the implicit items of
// the latest step sampled are the first Step.Cohort of them. Their counts
// are kept back (see cohort).
func (s *Scheduler) Cohort() []*Request { return s.running[:s.co.n] }

// CohortCycle is the cohort cycle step st schedules (with Cohort > 0):
// consecutive cycles are consecutive steps of the same members, the ones
// that left excepted and those that joined (at the end) added.
func (st *Step) CohortCycle() int { return st.cycle }

// CohortIndex is member r's index in Cohort().
func (r *Request) CohortIndex() int {
	if r.coBase == nil {
		return r.coIdx
	}
	return r.coIdx - *r.coBase
}

// NumItems is the step's scheduled requests: the cohort's implicit items
// and Items.
func (st *Step) NumItems() int { return st.Cohort + len(st.Items) }

// lastCycle is the last cohort cycle of r joining at cycle j (−1 when it
// cannot join). With c computed and a = output + pending tokens before
// the schedule of j, the schedule of j + t sees c + t computed and a + t
// output and pending: it skips r once a + t reaches max_tokens or c + t
// max_model_len (newTokens ≤ 0), so the last cycle scheduled is
// j + min(max_tokens − a, max_model_len − c) − 1. After the sample of
// cycle j + t, r has a + t + 1 output tokens (with lag, the schedule of
// j + t + 1 came first) and finishes once they reach max_tokens or the
// prompt plus them max_model_len, at cycle j + max_model_len − c − 2 for
// the latter (c = prompt + a − 1). Without lag r is gone before the
// schedule after its finish, so that is its last cycle; with lag that
// schedule would still schedule it, so it joins only when max_tokens ends
// it first (as the API server's max_model_len check makes sure).
func (s *Scheduler) lastCycle(r *Request, j int) int {
	c, a := r.NumComputed, r.NumOutput+r.Pending
	if s.co.lag > 0 && r.MaxTokens-a >= s.cfg.MaxModelLen-c {
		return -1
	}
	return min(j+min(r.MaxTokens-a, s.cfg.MaxModelLen-c)-1, j+s.cfg.MaxModelLen-c-2)
}

// join makes running requests from index n members while they are in the
// steady decode state, for the schedule of cycle j.
func (s *Scheduler) join(j int) {
	co := &s.co
	for co.n < len(s.running) {
		r := s.running[co.n]
		if r.Status != Running || r.InFlight || r.NumComputed < r.PromptTokens ||
			r.known()-r.NumComputed != 1 || r.Pending != co.lag {
			return
		}
		last := s.lastCycle(r, j)
		if last < j || (co.canJoin != nil && !co.canJoin(r)) {
			return
		}
		r.coFirst, r.coLast, r.coSched, r.coSampled, r.coIdx = j, last, j-1, j-1, co.base+co.n
		r.coBase = &co.base
		if !s.plan(r, j, 0) {
			return
		}
		co.n++
		co.active++
		v := append(co.lasts, last)
		for k := len(v) - 1; k > co.lastsHead && v[k] < v[k-1]; k-- {
			v[k], v[k-1] = v[k-1], v[k]
		}
		co.lasts = v
		co.sumBase += r.NumComputed - r.coSched
	}
}

// plan files member r under the next cycle from j on (j included) whose
// schedule needs it: the next block its token starts or fills, its
// finishing cycle to note (lag cycles after its last, so before that
// cycle's sample), the cycle after its last (async: it leaves the
// schedule). Its counts are as of the schedule of cycle j. A block is
// allocated just in time, so the next block event is at most BlockSize
// cycles away: the ring never wraps onto a cycle not yet run (false,
// filing nothing, for a request whose blocks reach further). With ahead
// > 0, r's computed and output tokens are taken ahead more (as of a
// later cycle's schedule: dueOne re-plans from the next).
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) plan(r *Request, j, ahead int) bool {
	bs := s.cfg.BlockSize
	tb := len(r.Blocks)*bs - r.NumComputed - ahead                  // cycle j+tb's token starts a block
	th := (r.numHashed+1)*bs - r.PromptTokens - r.NumOutput - ahead // cycle j+th's schedule sees a full block
	k := r.coLast + s.co.lag
	if t := j + max(0, min(tb, th)); t <= r.coLast {
		k = min(k, t)
	}
	if k-j >= len(s.co.due) {
		return false
	}
	d := &s.co.due[k&s.co.dueMask]
	*d = append(*d, r)
	return true
}

// materialize writes member r's counts: the schedules and samples of its
// cohort cycles up to the latest.
func (s *Scheduler) materialize(r *Request) {
	if c := min(s.co.cycle, r.coLast); c > r.coSched {
		d := c - r.coSched
		r.NumComputed += d
		r.Pending += d
		r.coSched = c
	}
	if c := min(s.co.sampled, r.coLast); c > r.coSampled {
		d := c - r.coSampled
		r.NumOutput += d
		r.Pending -= d
		r.coSampled = c
	}
}

// cohortSchedule schedules the members' part of the next cycle into out
// (their implicit items, first) from the token budget; false when there
// are no members or they cannot all be scheduled as plain decodes (the
// caller then dissolves the cohort and schedules every request itself).
func (s *Scheduler) cohortSchedule(out *Step, budget int) (int, bool) {
	co := &s.co
	j := co.cycle + 1
	if co.n < len(s.running) { // (join's loop condition, checked before the call)
		s.join(j)
	}
	if co.n == 0 {
		return budget, false
	}
	// Every steady member's token starts a block (cohortdue.go).
	bs, need := s.cfg.BlockSize, len(co.phase[co.phaseOf(j)])
	for _, r := range co.due[j&co.dueMask] {
		s.materialize(r)
		if j == r.coLast+1 { // async: its last token is scheduled, it leaves the schedule
			co.deactivate(r)
		} else if r.NumComputed+1 > len(r.Blocks)*bs {
			need++
		}
	}
	if co.active == 0 || co.active > budget || need > s.Pool.NumFree() {
		return budget, false // (the caller dissolves the cohort)
	}
	s.dueWork(j, false)
	co.cycle = j
	n := co.active
	out.Cohort = n
	out.cycle = j
	out.NumTokens += n
	out.NumDecode += n
	out.NumSampled += n
	out.DecodeCtxSum += int64(co.sumBase) + int64(n)*int64(j)
	if co.nsteps == len(co.steps) {
		panic("engine: more cohort steps in flight than a core runs") // a bug, not input
	}
	co.steps[co.nsteps] = out
	co.nsteps++
	return budget - n, true
}

// deactivate drops member r from the cycles' schedule counts (active,
// sumBase): its last token is scheduled, or it finished.
func (co *cohort) deactivate(r *Request) {
	co.active--
	co.sumBase -= r.NumComputed - r.coSched
}

// leave drops finished member r from the counts (compactRunning): still
// active when its last cycle is the latest scheduled (no lag).
func (co *cohort) leave(r *Request) {
	co.n--
	v, h := co.lasts, co.lastsHead
	if v[h] != r.coLast { // (never seen: the least leaves first)
		lastToHead(v[h:], r.coLast)
	}
	switch h++; {
	case h == len(v):
		co.lasts, co.lastsHead = v[:0], 0
	case h > 64 && h > len(v)/2:
		co.compactLasts(h)
	default:
		co.lastsHead = h
	}
	if r.coLast >= co.cycle {
		co.deactivate(r)
	}
}

// lastToHead moves last's entry to the head of v, the rest sorted again
// (leave's case never seen; out of line, issue 10: instruction-cache
// misses).
//
//go:noinline
func lastToHead(v []int, last int) {
	k := slices.Index(v, last)
	v[0], v[k] = v[k], v[0]
	slices.Sort(v[1:])
}

// compactLasts drops co.lasts' first h entries (those left), copying the
// rest down (out of line: once in many leaves).
//
//go:noinline
func (co *cohort) compactLasts(h int) {
	v := co.lasts
	co.lasts, co.lastsHead = v[:copy(v, v[h:])], 0
}

// Finishing returns the members whose last token the sample of step st
// brings (in running order; each is at its index in Cohort()), before
// SampleCohort.
func (s *Scheduler) Finishing(st *Step) []*Request {
	if st.Cohort == 0 {
		return nil
	}
	return s.co.finishing[st.cycle&1]
}

// SampleCohort applies the sample of step st's implicit items: every
// member samples a token; the members that finish (Finishing) are
// finished, their blocks freed, and appended to done in running order,
// as Sample and Finish would for each item. The caller drops them from
// the running list (Compact) after the step's other items.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) SampleCohort(st *Step, done []*Request) []*Request {
	if st.Cohort == 0 {
		return done
	}
	co := &s.co
	if st.cycle != co.sampled+1 || co.nsteps == 0 || co.steps[0] != st {
		panic("engine: cohort steps sampled out of order") // a bug, not input
	}
	co.sampled = st.cycle
	for i := 1; i < co.nsteps; i++ {
		co.steps[i-1] = co.steps[i]
	}
	co.nsteps--
	co.steps[co.nsteps] = nil
	fin := &co.finishing[st.cycle&1]
	if len(*fin) == 0 {
		return done // most cycles: no member finishes
	}
	for _, r := range *fin {
		s.materialize(r)
		if r.NumOutput < r.MaxTokens && r.NumTokens() < s.cfg.MaxModelLen {
			panic("engine: a cohort member finished early") // a bug, not input
		}
		s.Finish(r)
		done = append(done, r)
	}
	clear(*fin)
	*fin = (*fin)[:0]
	return done
}

// Dissolve ends the cohort: every member's counts and every scheduled
// step's items are written as scheduling each request would have left
// them (the members' items first, in running order), and nothing is kept
// back until a later schedule forms a new cohort.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) Dissolve() {
	co := &s.co
	if !co.on || (co.n == 0 && co.nsteps == 0) {
		return
	}
	members := s.running[:co.n]
	for _, r := range members {
		s.materialize(r)
	}
	if co.dissolving != nil {
		co.dissolving(members)
	}
	for _, st := range co.steps[:co.nsteps] {
		k := st.cycle
		add := s.co.scratch[:0]
		for _, r := range members {
			if r.coFirst <= k && k <= r.coLast {
				add = append(add, r)
			}
		}
		if len(add) != st.Cohort {
			panic("engine: cohort step lost its members") // a bug, not input
		}
		items := make([]Scheduled, len(add), len(add)+len(st.Items))
		for i, r := range add {
			// r's schedules through min(cycle, last) are written: its
			// computed tokens before cycle k's are that many fewer.
			computed := r.NumComputed - (min(co.cycle, r.coLast) - k) - 1
			items[i] = Scheduled{Req: r, NumNew: 1, Computed: computed, Decode: true, Samples: true}
		}
		st.Items = append(items, st.Items...)
		st.Cohort = 0
		co.scratch = add[:0]
	}
	clear(co.steps[:])
	co.nsteps = 0
	for i := range co.due {
		clear(co.due[i])
		co.due[i] = co.due[i][:0]
	}
	for i := range co.phase {
		clear(co.phase[i])
		co.phase[i] = co.phase[i][:0]
	}
	for i := range co.finishing {
		clear(co.finishing[i])
		co.finishing[i] = co.finishing[i][:0]
	}
	co.n, co.active, co.sumBase = 0, 0, 0
	co.lasts, co.lastsHead = co.lasts[:0], 0
	co.sampled = co.cycle
}

// CohortCycle schedules into out the cohort's next cycle, exactly as
// Schedule would, when that cycle is all Schedule would do: the members
// are the whole running list, none leaves the schedule or has its finish
// noted in it, no waiting request could be admitted, and the blocks its
// tokens start fit the free pool. It reports false, scheduling nothing
// and changing no count a caller can see, otherwise (the caller then
// calls Schedule). The k-step advance (sim/cohortrun.go) schedules its
// steps so: a due member costs its block work, any other member nothing.
func (s *Scheduler) CohortCycle(out *Step) bool {
	co := &s.co
	if !s.cohortWhole() || co.nsteps == len(co.steps) {
		return false
	}
	j := co.cycle + 1
	bs, need := s.cfg.BlockSize, len(co.phase[co.phaseOf(j)])
	for _, r := range co.due[j&co.dueMask] {
		if j >= r.coLast+co.lag {
			return false // it leaves the schedule, or its finish is noted
		}
		s.materialize(r) // as cohortSchedule would first (idempotent)
		if r.NumComputed+1 > len(r.Blocks)*bs {
			need++
		}
	}
	if need > s.Pool.NumFree() {
		return false
	}
	*out = Step{Items: out.Items[:0]}
	if _, ok := s.cohortSchedule(out, s.cfg.MaxNumBatchedTokens); !ok {
		panic("engine: a cohort cycle refused after its checks") // a bug, not input
	}
	out.KVBlocksUsed = s.Pool.NumUsed()
	out.NumRunning = len(s.running)
	out.NumWaiting = s.numWaiting
	return true
}
