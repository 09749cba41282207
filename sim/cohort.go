package sim

import (
	"math"

	"frontier/sim/engine"
)

// The client side of the decode cohort (engine/cohort.go). Each step
// streams one token of every cohort member through the members' API
// server, in running order (rank k: the member's index among the step's
// members). Stepping one by one, a member whose latest chunk has not
// started being served when the step ends merges the token into it;
// every other member's token is a new chunk, queued in rank order: the
// i-th starts at base + i·svc, base = max(the server's free time, the
// step's end), and reaches the client svc + delay later.
//
// stream keeps the members' latest chunk starts as segments of ranks on
// lines of slope svc: ranks [from, to) start at a + rank·svc. A step
// keeps that form: in a segment the members that merge are those whose
// start is after the step's end, a suffix; the others get new chunks
// whose starts are again a line over their ranks, so each gains the same
// gap (the new line's a minus the old), which the histogram takes as one
// weighted add (Histogram.AddN), in rank order as the tokens would have
// come. A member that finishes leaves its segment and the ranks after it
// shift down. So a step costs O(segments + members that merge), not
// O(members). A member's own counts (tokens, the sum of its gaps, its
// last token and chunk, its chunks in the current second of bench
// serve's peak throughput) are written when it finishes or the cohort
// dissolves (stream.apply). A member's first step, and a step whose
// tokens could reach a new second for the peak (or with many segments),
// take every token one by one (streamEach); on one line, only the
// members whose chunk starts a new second do (streamCross). Runs with an
// observer do not use the cohort: it is shown every request of every
// step.

// stream is a core's client-side state of its cohort.
type stream struct {
	api       *apiServer // the API server every member streams through
	cycle     int        // the latest cohort cycle streamed
	segs      []seg      // the members' latest chunk starts, by rank, as of cycle
	spare     []seg
	minRunEnd int64 // the earliest end of a member's current peak second, ns
}

// seg is a run of member ranks [from, to) whose latest chunks started at
// a + rank·svc, ns.
type seg struct {
	from, to int
	a        int64
}

// maxSegs bounds the segments a step takes in bulk.
const maxSegs = 64

// enableCohort turns the decode cohort on for c (no observer, not
// pipelined, not in a lockstep group).
func (c *Core) enableCohort(s *Sim) {
	lag := 0
	if c.Async {
		lag = 1 // the next step is scheduled before this one is sampled
	}
	c.Sched.EnableCohort(lag,
		func(q *engine.Request) bool { return s.canStream(c, q) },
		func(members []*engine.Request) { s.unstream(c, members) })
}

// canStream is the client's consent to q joining c's cohort: it streams
// its tokens to the client (not a prefill instance's, not one the client
// gave up), its peak chunks are counted per second, and it streams
// through the members' API server. Its first token has come, or comes
// with the step in flight: a request joins at the schedule of the step
// after its last prefill chunk's (async scheduling: one placeholder, no
// output token yet), that step's sample streams its first token
// (Sim.tokens, firstToken) before the cohort streams any of its tokens,
// and once the peak's origin is known (final, never undone) its chunks
// are counted per second from the first (peakTokens.start). A client
// timeout before then aborts it, which dissolves the cohort.
func (s *Sim) canStream(c *Core, q *engine.Request) bool {
	r := q.Data.(*record)
	if r.done || r.phase == phasePrefill || r.api == nil {
		return false
	}
	if r.out.FirstTokenNs < 0 {
		if q.NumOutput != 0 || q.Pending != 1 || !s.peak.final {
			return false
		}
		s.kSeams.early++
	} else if r.runs == nil {
		return false
	}
	if len(c.Sched.Cohort()) == 0 {
		c.stream.api = r.api
	}
	return r.api == c.stream.api
}

// cohortTokens streams the tokens of step st's cohort members (its first
// st.Cohort running requests) at s.now, then has the scheduler sample
// them, appending those that finish to done.
func (s *Sim) cohortTokens(c *Core, st *engine.Step, done []*engine.Request) []*engine.Request {
	sc := &c.stream
	j := st.CohortCycle()
	svc, delay := s.tokSvc, s.tokDelay
	s.streamCycle(c, j, st.Cohort)
	if fins := c.Sched.Finishing(st); len(fins) > 0 { // most cycles: none
		for _, q := range fins {
			sc.apply(q.Data.(*record), j, q.CohortIndex(), svc, delay)
		}
		for i := len(fins) - 1; i >= 0; i-- {
			q := fins[i]
			q.Data.(*record).coFrom = 0
			sc.remove(q.CohortIndex(), svc)
		}
	}
	return c.Sched.SampleCohort(st, done)
}

// streamCycle streams the tokens of cohort cycle j's n members at s.now,
// segment by segment (streamBulk) or, when they could reach a new peak
// second or lie on too many lines, one by one (streamEach).
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Sim) streamCycle(c *Core, j, n int) {
	sc := &c.stream
	members := c.Sched.Cohort()[:n]
	now, svc, delay := s.now, s.tokSvc, s.tokDelay
	// Members that joined for this step come last.
	kept := n
	for kept > 0 && members[kept-1].Data.(*record).coFrom == 0 {
		kept--
	}
	if kept == 0 {
		sc.segs, sc.minRunEnd = sc.segs[:0], math.MaxInt64
	} else if sc.cycle != j-1 || sc.segs[len(sc.segs)-1].to != kept {
		panic("sim: cohort steps streamed out of order") // a bug, not input
	}
	base := now
	if svc > 0 {
		base = max(sc.api.free, now)
	}
	if base+int64(n)*svc+delay < sc.minRunEnd && len(sc.segs) <= maxSegs {
		s.macroSteps++
		if !s.streamLine(sc, members, kept, j, base) {
			s.streamBulk(c, members, kept, j, base)
		}
	} else if !s.streamCross(sc, members, kept, j, base) {
		s.streamEach(c, members, kept, j)
	}
	sc.cycle = j
}

// streamCross is streamEach for a cycle that may reach a new peak second
// whose kept members lie on one line, every chunk started by now (as
// streamLine takes them): each gets a new chunk, in order from base, and
// gains the same gap, one weighted ITL add as in streamLine. A member
// whose chunk comes in its current peak second keeps its counts kept
// back (the token counts there as apply1 will count it), so only one
// whose chunk starts a new second (peakTokens.chunk's test) has its
// counts written through the cycle before (apply1) and its token
// streamed as streamOne would (no merge: its chunk has started); the
// members that joined follow one by one. The same counts, chunks, API
// server time and segments as streamEach; ~10 instructions a member
// that stays in its second where streamEach took ~200. False, doing
// nothing, for any other cycle.
func (s *Sim) streamCross(sc *stream, members []*engine.Request, kept, j int, base int64) bool {
	if len(sc.segs) != 1 || kept == 0 {
		return false
	}
	g := &sc.segs[0]
	svc, delay := s.tokSvc, s.tokDelay
	if g.from != 0 || (svc > 0 && s.now-g.a < int64(kept-1)*svc) {
		return false
	}
	gap := base - g.a
	if !s.itl.addLast(gap, int64(kept)) {
		s.itl.AddN(gap, int64(kept))
	}
	runEnd := int64(math.MaxInt64)
	at := base + svc + delay // rank 0's chunk reaches the client
	for _, q := range members[:kept] {
		if r := q.Data.(*record); uint64(r.runEnd-1-at) < 1e9 {
			runEnd = min(runEnd, r.runEnd) // (in its second: kept back)
		} else {
			sc.apply1(r, j-1, at-gap, delay) // (its latest chunk came gap before)
			if svc > 0 {
				r.chunkAt = at - delay
			}
			r.out.ITLSumNs += gap
			r.lastTok = at
			s.peak.chunk(r, at)
			r.out.OutputTokens++
			r.coFrom = j + 1
			runEnd = min(runEnd, r.runEnd)
		}
		at += svc
	}
	g.a = base
	if svc > 0 {
		sc.api.free = base + int64(kept)*svc
	}
	sc.minRunEnd = runEnd
	if kept < len(members) {
		sc.segs = s.streamJoiners(sc, sc.segs, members, kept, j)
	}
	return true
}

// streamLine is streamBulk for the common cycle (most of a steady
// cohort's): its kept members on one line whose chunks have all started
// by now, so that every one gets a new chunk, in order from base, and
// gains the same gap (base − the line's a); the members that joined
// follow one by one (streamJoiners). False, doing nothing, for any other
// cycle.
func (s *Sim) streamLine(sc *stream, members []*engine.Request, kept, j int, base int64) bool {
	if len(sc.segs) != 1 {
		return false
	}
	g := &sc.segs[0]
	svc := s.tokSvc
	if g.from != 0 || (svc > 0 && s.now-g.a < int64(kept-1)*svc) {
		return false
	}
	gap, k := base-g.a, int64(kept)
	if !s.itl.addLast(gap, k) {
		s.itl.AddN(gap, k)
	}
	g.a = base
	if svc > 0 {
		sc.api.free = base + k*svc
	}
	if kept < len(members) {
		sc.segs = s.streamJoiners(sc, sc.segs, members, kept, j)
	}
	return true
}

// streamBulk streams cycle j's tokens segment by segment: in each, the
// ranks whose chunk started by now get new chunks in order from base,
// the rest merge; members that joined go one by one.
func (s *Sim) streamBulk(c *Core, members []*engine.Request, kept, j int, base int64) {
	sc := &c.stream
	now, svc := s.now, s.tokSvc
	next := sc.spare[:0]
	served := int64(0)
	for _, g := range sc.segs {
		cut := g.to // ranks [g.from, cut) get new chunks
		if svc > 0 {
			switch t := now - g.a; {
			case t < int64(g.from)*svc:
				cut = g.from
			case t < int64(g.to-1)*svc: // else t/svc + 1 ≥ to: no division
				cut = int(t/svc) + 1
			}
		}
		if cut > g.from {
			a := base + (served-int64(g.from))*svc
			s.itl.AddN(a-g.a, int64(cut-g.from))
			next = appendSeg(next, seg{g.from, cut, a})
			served += int64(cut - g.from)
		}
		if cut < g.to {
			for _, q := range members[cut:g.to] {
				q.Data.(*record).merges++
			}
			next = appendSeg(next, seg{cut, g.to, g.a})
		}
	}
	if served > 0 && svc > 0 { // free streaming (svc 0) never occupies the server
		sc.api.free = base + served*svc // the joiners' tokens follow one by one
	}
	next = s.streamJoiners(sc, next, members, kept, j)
	sc.segs, sc.spare = next, sc.segs
}

// streamJoiners streams the tokens of cycle j's members that joined for
// it (ranks kept on) one by one, after the kept members' (the API server
// already busy with theirs), appending their segments to segs.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Sim) streamJoiners(sc *stream, segs []seg, members []*engine.Request, kept, j int) []seg {
	now, svc, delay := s.now, s.tokSvc, s.tokDelay
	for k := kept; k < len(members); k++ {
		r := members[k].Data.(*record)
		s.streamOne(r, now, svc, delay)
		r.coFrom = j + 1
		segs = appendSeg(segs, seg{k, k + 1, r.lastTok - delay - svc - int64(k)*svc})
		sc.minRunEnd = min(sc.minRunEnd, r.runEnd)
	}
	return segs
}

// streamEach streams cycle j's member tokens one by one, as Sim.tokens
// would (streamOne), after writing the kept members' counts (the first
// kept) through the last cycle, and rebuilds the segments.
func (s *Sim) streamEach(c *Core, members []*engine.Request, kept, j int) {
	sc := &c.stream
	now, svc, delay := s.now, s.tokSvc, s.tokDelay
	next := sc.spare[:0]
	runEnd := int64(math.MaxInt64)
	g := 0
	for k, q := range members {
		r := q.Data.(*record)
		if k < kept {
			for sc.segs[g].to <= k {
				g++
			}
			sc.apply1(r, j-1, sc.segs[g].a+int64(k+1)*svc+delay, delay)
		}
		s.streamOne(r, now, svc, delay)
		r.coFrom = j + 1
		next = appendSeg(next, seg{k, k + 1, r.lastTok - delay - svc - int64(k)*svc})
		runEnd = min(runEnd, r.runEnd)
	}
	sc.segs, sc.spare, sc.minRunEnd = next, sc.segs, runEnd
}

// appendSeg appends g to segs, joining it to the last segment when it
// continues its line.
func appendSeg(segs []seg, g seg) []seg {
	if n := len(segs); n > 0 && segs[n-1].to == g.from && segs[n-1].a == g.a {
		segs[n-1].to = g.to
		return segs
	}
	return append(segs, g)
}

// remove takes rank k out of the segments: the ranks after it shift
// down, their starts unchanged.
func (sc *stream) remove(k int, svc int64) {
	out := sc.spare[:0]
	for _, g := range sc.segs {
		switch {
		case g.to <= k:
			out = appendSeg(out, g)
		case g.from > k:
			out = appendSeg(out, seg{g.from - 1, g.to - 1, g.a + svc})
		default:
			if g.from < k {
				out = appendSeg(out, seg{g.from, k, g.a})
			}
			if k+1 < g.to {
				out = appendSeg(out, seg{k, g.to - 1, g.a + svc})
			}
		}
	}
	sc.segs, sc.spare = out, sc.segs
}

// streamOne streams one token of r (not its first) at now, ns, as
// Sim.tokens does: merged into its latest chunk while that is still
// queued, else a new chunk.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Sim) streamOne(r *record, now, svc, delay int64) {
	if svc > 0 && r.chunkAt-svc > now {
		r.out.OutputTokens++
		return
	}
	at := now
	if svc > 0 {
		at = r.api.serve(at, svc)
		r.chunkAt = at
	}
	at += delay
	if gap := at - r.lastTok; !s.itl.addLast(gap, 1) {
		s.itl.AddN(gap, 1)
	}
	r.out.ITLSumNs += at - r.lastTok
	r.lastTok = at
	s.peak.chunk(r, at)
	r.out.OutputTokens++
}

// apply writes the counts of member r, of rank k in the segments, through
// cycle j (the latest streamed).
func (sc *stream) apply(r *record, j, k int, svc, delay int64) {
	g := 0
	for sc.segs[g].to <= k {
		g++
	}
	sc.apply1(r, j, sc.segs[g].a+int64(k+1)*svc+delay, delay)
}

// apply1 writes member r's tokens of the cycles from r.coFrom through j,
// its latest chunk reaching the client at at, ns (started at at − svc −
// delay): every token was streamed, merged ones (r.merges) into the
// chunk before, all in its current peak second.
func (sc *stream) apply1(r *record, j int, at, delay int64) {
	n := j - r.coFrom + 1
	if r.coFrom == 0 || n <= 0 {
		return
	}
	r.out.OutputTokens += int32(n)
	r.out.ITLSumNs += at - r.lastTok
	r.lastTok = at
	r.chunkAt = at - delay // read only when svc > 0: no branch, so that apply1 inlines
	r.runN += int64(n - r.merges)
	r.merges = 0
	r.coFrom = j + 1
}

// unstream is the end of c's cohort (engine.Scheduler.Dissolve): every
// member's counts are written, and its later tokens go one by one.
func (s *Sim) unstream(c *Core, members []*engine.Request) {
	sc := &c.stream
	for k, q := range members {
		r := q.Data.(*record)
		if r.coFrom != 0 { // not a member that joined since the last cycle
			sc.apply(r, sc.cycle, k, s.tokSvc, s.tokDelay)
			r.coFrom = 0
		}
	}
	sc.segs = sc.segs[:0]
}
