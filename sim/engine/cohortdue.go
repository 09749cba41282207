package engine

// A cohort cycle's due work (cohort.go): the members whose schedule in
// the cycle needs them, in running order.
//
// Most of it is the steady decode. With async scheduling (lag 1) a
// member's schedule sees as many tokens computed as sampled (NumComputed
// = NumTokens), so the cycle whose token starts a block is also the one
// whose schedule sees the block before it full: one visit allocates the
// new block and indexes the full one, and the next such cycle is
// BlockSize cycles on. When the full block is one no other request can
// share (Request.shareable, monotone: no later block is shareable
// either), indexing it is only counting it hashed, for every later block
// too. Such a member is steady: it sits in co.phase under its cycles
// modulo BlockSize, and each visit takes its block and counts the full
// one without reading its kept-back counts (materialize writes them when
// something reads them), until its next block would start after its last
// cycle; it is then filed in the due ring as plan would file it. (Its
// visit in its last cycle is the same work: with lag 1 that schedule is a
// plain decode.) Nothing else touches a member's blocks between visits;
// Dissolve (a preemption, an abort, a refused schedule) empties the
// lists. The rest (a member's first visits and its last, a shareable
// block, lag 0) is dueOne's.
//
// On BenchmarkSimulateCodegen (prompts of 37 blocks, 96 % cache hits,
// unique outputs) nearly every one of the 139 k decode blocks a run is a
// steady visit: a due-ring member cost about 250 instructions a block
// (materialize, plan, allocDecode and the ring's bookkeeping), a steady
// one about 45 and its cycle about 30 (callgrind), besides the block
// taken (BlockPool.take1).

// phaseOf is the index in co.phase of cycle j's steady members.
func (co *cohort) phaseOf(j int) int {
	if co.phaseMask >= 0 {
		return j & co.phaseMask
	}
	return co.phaseMod(j)
}

// phaseMod is phaseOf for a block size not a power of two (out of line:
// the division's code would sit in every hot caller; issue 10).
//
//go:noinline
func (co *cohort) phaseMod(j int) int { return j % len(co.phase) }

// dueWork does the schedule of cycle j's work for its due members: the
// steady ones (co.phase) and those filed in the due ring, merged in
// running order. A leaving member's finish is noted (and, with leave, the
// member dropped from the cycles' counts), a member whose token starts
// or fills a block gets it allocated or indexed, and each staying member
// is kept steady or filed under its next due cycle (which may be this
// slot again, a ring ahead). The counts of the ring's members are
// written first (materialize) as of the schedule of cycle j; those of
// the steady ones are not read.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) dueWork(j int, leave bool) {
	co := &s.co
	ph := co.phaseOf(j)
	slot := &co.due[j&co.dueMask]
	list := *slot
	if len(list) == 0 {
		if len(co.phase[ph]) > 0 {
			s.steadyWork(j, j+1)
		}
		return
	}
	*slot = nil
	if len(list) > 1 {
		sortByIndex(list)
	}
	steady := co.phase[ph]
	bs, p := s.cfg.BlockSize, s.Pool
	i, w := 0, 0
	for _, r := range steady {
		for i < len(list) && list[i].coIdx < r.coIdx {
			s.dueOne(list[i], j, leave)
			i++
		}
		if p.numFree < 1 {
			panic("engine: cohort allocation beyond the free blocks counted") // a bug, not input
		}
		p.numFree--
		b := p.takeLazy()
		if b < 0 {
			b = p.take1()
		}
		r.Blocks = append(r.Blocks, b)
		r.numHashed++
		if r.coLast >= j+bs {
			steady[w] = r
			w++
		} else {
			co.unsteady(r)
		}
	}
	for ; i < len(list); i++ {
		s.dueOne(list[i], j, leave)
	}
	// (The entries past w keep stale pointers: members, never read.)
	steady = steady[:w]
	for _, r := range co.entering { // (in running order, into it)
		steady = append(steady, r)
		for k := len(steady) - 1; k > 0 && steady[k].coIdx < steady[k-1].coIdx; k-- {
			steady[k], steady[k-1] = steady[k-1], steady[k]
		}
	}
	co.entering = co.entering[:0]
	co.phase[ph] = steady
	if *slot == nil {
		*slot = list[:0]
	}
}

// steadyWork is dueWork for the cycles from j on, before to, while
// they have steady members only (co.phase) or none: it returns the first
// cycle it did not do (to, or one with members in the due ring, which
// may be one a member it made unsteady was filed under).
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) steadyWork(j, to int) int {
	co := &s.co
	bs, p := s.cfg.BlockSize, s.Pool
	for ph := co.phaseOf(j); j < to && len(co.due[j&co.dueMask]) == 0; j++ {
		if steady := co.phase[ph]; len(steady) > 0 {
			if p.numFree < len(steady) {
				panic("engine: cohort allocation beyond the free blocks counted") // a bug, not input
			}
			p.numFree -= len(steady) // (take1 does not read it)
			w := 0
			for i, r := range steady {
				b := p.takeLazy()
				if b < 0 {
					b = p.take1()
				}
				r.Blocks = append(r.Blocks, b)
				r.numHashed++
				if r.coLast >= j+bs {
					if w < i {
						steady[w] = r
					}
					w++
				} else {
					co.unsteady(r)
				}
			}
			if w < len(steady) {
				co.phase[ph] = steady[:w] // (the entries past w keep stale pointers: members, never read)
			}
		}
		if ph++; ph == len(co.phase) {
			ph = 0
		}
	}
	return j
}

// dueCycles is the bulk schedule of cycles from … to − 1 (dueCycle),
// runs of cycles with steady members only by steadyWork, in one call.
func (s *Scheduler) dueCycles(from, to int) {
	for j := from; j < to; j++ {
		if j = s.steadyWork(j, to); j < to {
			s.dueCycle(j)
		}
	}
}

// unsteady files steady member r, whose block cycle j took and whose
// next block would start after its last cycle, under the cycle after its
// last (lag 1: it leaves the schedule then), as plan would.
func (co *cohort) unsteady(r *Request) {
	d := &co.due[(r.coLast+co.lag)&co.dueMask]
	*d = append(*d, r)
}

// dueOne is cycle j's work for member r taken from the due ring (see
// dueWork). A member in the steady decode whose next block comes before
// its last cycle becomes steady (co.entering).
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) dueOne(r *Request, j int, leave bool) {
	co := &s.co
	bs := s.cfg.BlockSize
	s.materialize(r)
	last := r.coLast
	if c := r.NumComputed; j < last && c == len(r.Blocks)*bs && c == r.NumTokens() &&
		c == (r.numHashed+1)*bs && !r.shareable(r.numHashed, bs) {
		// The steady decode (cohortdue.go): allocDecode takes the block
		// and counts the full one hashed; the next block starts
		// BlockSize cycles on (plan's tb and th then agree).
		if !s.allocDecode(r, c) {
			panic("engine: cohort allocation beyond the free blocks counted") // a bug, not input
		}
		if j+bs <= last {
			co.entering = append(co.entering, r)
		} else {
			co.unsteady(r)
		}
		return
	}
	if j >= last { // (j ≤ last + 1: a member is due by then)
		fin := &co.finishing[last&1]
		if j == last+1 {
			if leave {
				co.deactivate(r) // its last token is scheduled: it leaves the schedule
			}
			*fin = append(*fin, r) // lag 1: it finishes at the sample of cycle j − 1
			return
		}
		if co.lag == 0 {
			*fin = append(*fin, r)
		}
	}
	if r.NumComputed+1 > len(r.Blocks)*bs || r.NumTokens() >= (r.numHashed+1)*bs {
		if !s.allocDecode(r, r.NumComputed) {
			panic("engine: cohort allocation beyond the free blocks counted") // a bug, not input
		}
	}
	if j < last+co.lag {
		// Re-plan from the next cycle: its counts then are one token on.
		if !s.plan(r, j+1, 1) {
			panic("engine: a cohort member's next block beyond the due ring") // a bug, not input
		}
	}
}

// sortByIndex sorts members by running order (insertion sort: a cycle's
// due members are few).
func sortByIndex(v []*Request) {
	for i := 1; i < len(v); i++ {
		for k := i; k > 0 && v[k].coIdx < v[k-1].coIdx; k-- {
			v[k], v[k-1] = v[k-1], v[k]
		}
	}
}
