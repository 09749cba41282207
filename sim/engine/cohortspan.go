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

// CohortWhole tells whether the cohort's next cycle would be the whole
// schedule (cohortWhole): false once a request waits that the schedule
// could admit.
func (s *Scheduler) CohortWhole() bool { return s.cohortWhole() }

// CohortSpan is how many cycles after the latest scheduled the cohort
// can be advanced in bulk (AdvanceCohort) with each cycle's schedule
// exactly what Schedule would make of it: the members are the whole
// running list and all scheduled, two steps are in flight (async
// scheduling), no waiting request could be admitted (events from
// outside, which could change that, end the caller's advance), every
// member stays scheduled through them but for the last, whose schedule
// may leave finishing members out (not all: that schedule would
// dissolve the cohort), and the free pool holds every block their
// tokens could start (at most one per member per BlockSize cycles, and
// one more). 0 when none.
func (s *Scheduler) CohortSpan() int {
	co := &s.co
	if !s.cohortWhole() || co.nsteps != 2 || co.lag != 1 {
		return 0
	}
	n := co.n
	lasts := co.lasts[co.lastsHead:] // (n, ascending)
	last := lasts[0]
	// The schedule of cycle coLast + 1 leaves a member out (lag 1): it
	// may be the last, when a member stays (with none the schedule would
	// dissolve the cohort); the sample of cycle coLast, which finishes
	// the member, comes after it.
	span := last - co.cycle
	if lasts[n-1] > last { // a member stays
		span++
	}
	bs := s.cfg.BlockSize
	if free := s.Pool.NumFree(); n*(span/bs+1) > free {
		span = min(span, (free/n-1)*bs)
	}
	return max(span, 0)
}

// AdvanceCohort runs k cohort cycles (1 ≤ k ≤ CohortSpan()) as k times
// the sample of the oldest step in flight (SampleCohort: nobody
// finishes) and the schedule of the next cycle (Schedule: CohortCycle's
// step, or for the last one that leaves members out, cohortSchedule's)
// would, the due members' block work in cycle order, and returns
// the two steps then in flight, oldest first: the last two cycles
// scheduled, written whole but for ScheduledNs (the caller's clock).
func (s *Scheduler) AdvanceCohort(k int) (oldest, newest *Step) {
	co := &s.co
	last := co.cycle + k
	s.dueCycles(co.cycle+1, last)
	// As the schedule of cycle last − 1 left them (that of last may
	// leave members out).
	held, active, sumBase := s.Pool.NumUsed(), co.active, co.sumBase
	s.dueCycle(last)
	co.cycle, co.sampled = last, last-2
	if k&1 == 1 { // each cycle's schedule reuses its sampled step
		co.steps[0], co.steps[1] = co.steps[1], co.steps[0]
	}
	oldest, newest = co.steps[0], co.steps[1]
	s.cohortStep(newest, last, s.Pool.NumUsed(), co.active, co.sumBase)
	if k > 1 {
		s.cohortStep(oldest, last-1, held, active, sumBase)
	}
	return oldest, newest
}

// cohortStep writes st as the schedule of cohort cycle j made it, with
// kv blocks held then, n members scheduled and the context sum base
// (cohort.sumBase) then.
func (s *Scheduler) cohortStep(st *Step, j, kv, n, sumBase int) {
	*st = Step{Items: st.Items[:0], Cohort: n, cycle: j, NumTokens: n, NumDecode: n, NumSampled: n,
		DecodeCtxSum: int64(sumBase) + int64(n)*int64(j),
		KVBlocksUsed: kv, NumRunning: len(s.running), NumWaiting: s.numWaiting}
}

// dueCycle is the bulk schedule of cycle j's due members (their counts
// written as of the sample of cycle j − 2 and the schedule of j − 1).
func (s *Scheduler) dueCycle(j int) {
	co := &s.co
	co.cycle, co.sampled = j-1, j-2
	s.dueWork(j, true)
}
