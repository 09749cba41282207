package engine

// Bulk cohort cycles: the k-step advance (sim/cohortrun.go) takes many
// cycles of a cohort that is the whole running list in one call when no
// step record is asked for (CohortCycle serves it cycle by cycle when
// one is).

// cohortWhole tells whether the cohort is the whole schedule a cycle
// would make: it has members, they are the whole running list and all
// active, their one token each fits the token budget, and no waiting
// request could be admitted beside them (a seat is free only below
// max_num_seqs). CohortCycle and CohortSpan start from it.
func (s *Scheduler) cohortWhole() bool {
	n := s.co.n
	return n > 0 && n == len(s.running) && s.co.active == n && n <= s.cfg.MaxNumBatchedTokens &&
		(s.numWaiting == 0 || n >= s.cfg.MaxNumSeqs)
}

// CohortSpan is how many cycles after the latest scheduled the cohort
// can be advanced in bulk (AdvanceCohort) with each cycle's schedule
// exactly what Schedule would make of it: the members are the whole
// running list and all scheduled, two steps are in flight (async
// scheduling), no waiting request could be admitted (events from
// outside, which could change that, end the caller's advance), every
// member stays scheduled through them (none leaves or has its finish
// noted), and the free pool holds every block their tokens could start
// (at most one per member per BlockSize cycles, and one more). 0 when
// none.
func (s *Scheduler) CohortSpan() int {
	co := &s.co
	if !s.cohortWhole() || co.nsteps != 2 || co.lag != 1 {
		return 0
	}
	n := co.n
	last := s.running[0].coLast
	for _, r := range s.running[1:] {
		last = min(last, r.coLast)
	}
	// The schedule of cycle coLast + 1 leaves a member out (lag 1).
	span := last - co.cycle
	bs := s.cfg.BlockSize
	if free := s.Pool.NumFree(); n*(span/bs+1) > free {
		span = min(span, (free/n-1)*bs)
	}
	return max(span, 0)
}

// AdvanceCohort runs k cohort cycles (1 ≤ k ≤ CohortSpan()) as k times
// the sample of the oldest step in flight (SampleCohort: nobody
// finishes) and the schedule of the next cycle (Schedule: CohortCycle's
// step) would, the due members' block work in cycle order, and returns
// the two steps then in flight, oldest first: the last two cycles
// scheduled, written whole but for ScheduledNs (the caller's clock).
func (s *Scheduler) AdvanceCohort(k int) (oldest, newest *Step) {
	co := &s.co
	last := co.cycle + k
	for j := co.cycle + 1; j < last; j++ {
		s.dueCycle(j)
	}
	held := s.Pool.NumUsed() // as the schedule of cycle last − 1 left it
	s.dueCycle(last)
	co.cycle, co.sampled = last, last-2
	if k&1 == 1 { // each cycle's schedule reuses its sampled step
		co.steps[0], co.steps[1] = co.steps[1], co.steps[0]
	}
	oldest, newest = co.steps[0], co.steps[1]
	s.cohortStep(newest, last, s.Pool.NumUsed())
	if k > 1 {
		s.cohortStep(oldest, last-1, held)
	}
	return oldest, newest
}

// cohortStep writes st as the schedule of cohort cycle j made it, with
// kv blocks held then.
func (s *Scheduler) cohortStep(st *Step, j, kv int) {
	co := &s.co
	n := co.active
	*st = Step{Items: st.Items[:0], Cohort: n, cycle: j, NumTokens: n, NumDecode: n, NumSampled: n,
		DecodeCtxSum: int64(co.sumBase) + int64(n)*int64(j),
		KVBlocksUsed: kv, NumRunning: len(s.running), NumWaiting: s.numWaiting}
}

// dueCycle is the bulk schedule of cycle j's due members (their counts
// written as of the sample of cycle j − 2 and the schedule of j − 1).
func (s *Scheduler) dueCycle(j int) {
	co := &s.co
	slot := &co.due[j&co.dueMask]
	list := *slot
	if len(list) == 0 {
		return
	}
	co.cycle, co.sampled = j-1, j-2
	*slot = nil
	for _, r := range list {
		s.materialize(r)
	}
	s.dueWork(slot, list, j)
}
