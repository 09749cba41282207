package sim

import (
	"frontier/predictor"
	"frontier/sim/engine"
)

// The k-step advance of the decode cohort. Between two events a serving
// run takes many steps that are all the same decode cycle of the same
// cohort (engine/cohort.go): every running request a member, nothing to
// admit, no member finishing, each member's token a new chunk of one
// API server line (cohort.go's stream as one segment). launch runs them
// here in one loop (cohortRun), each cycle doing only what differs from
// the one before, in the order stepping one by one does it:
//
//   - the step's end, strictly before every queued event and the next
//     replica scrape, taken once (nothing in the loop queues one), and
//     its record when a step sink is set;
//   - its tokens: the segment's line moves to the step's end (or the API
//     server's free time), every member's gap the same, added to the ITL
//     histogram as one weighted add a step (Histogram.addLast or AddN,
//     whose n adds equal n single ones; a run of equal gaps stays
//     pending there), while no member's chunk reaches its next
//     peak-throughput second; each
//     member's own counts stay kept back (stream.apply1 writes them);
//   - the scheduler's sample (engine.Scheduler.SampleCohort, nobody
//     finishing) and the schedule of the cycle after next
//     (engine.Scheduler.CohortCycle: a due member's block work, in cycle
//     order; or Schedule, which ends the run);
//   - the price of the next step: asked of the predictor only when its
//     decode context sum leaves the range its latest memoized price
//     covers (predictor.Predictor.StepRange), about one step in four.
//
// Without a step sink (no record to write per step) the cycles are
// taken in bulk instead (cohortBulk): ends, tokens and prices first, in
// closed form while a price holds, then the scheduler's cycles in one
// call (engine.Scheduler.AdvanceCohort).
//
// Its seams (counted in seams for the tests): the first cycle after
// members left or joined (their chunks on several lines, or joiners not
// yet on one) streams as cohortTokens does (streamCycle), the line's
// form going on after it, and in bulk so does a cycle whose chunks reach
// a new peak second or merge; a request joins before its first token
// comes (canStream); the last cycle scheduled may leave a finishing
// member out (engine.Scheduler.CohortSpan), so only the finishing step
// itself ends on the general path; client deadlines that find their
// request completed, client sends and engine admissions are handled
// where Sim.Run would (pastEvents, cohortevents.go); the step before an
// admission's prefill step ends here too (endBefore).
//
// Async scheduling only (the next step is scheduled when a step starts);
// the caller (launch) has just begun a step. Step by step
// (Options.StepByStep) it does not run; TestCohortRunEquivalence,
// TestStepByStepSameBytes and TestMacroStepEquivalence compare every
// output byte of the two.
func (c *Core) cohortRun(s *Sim) {
	cur, next, sc := c.cur, c.next, &c.stream
	n := cur.Cohort
	// The batch changed since reprice's latest price (c.stepHint), for
	// the cycles here and cohortBulk's.
	c.stepHint = predictor.StepHint{}
	// cur may count one running request more than the rest (NumRunning):
	// a member whose last token the step before samples, scheduled before
	// that sample (async); its record keeps that count, the price of
	// every later step has n (reprice).
	if !c.Async || !c.hasNext || n == 0 || len(cur.Items) != 0 || next.Cohort != n || len(next.Items) != 0 ||
		next.NumRunning != n || len(c.Sched.Cohort()) != n || s.err != nil || sc.cycle != cur.CohortCycle()-1 {
		c.endBefore(s)
		return
	}
	if s.stepSink == nil {
		c.cohortBulk(s)
		return
	}
	var lo, hi int64 // the current price's context sums (none yet)
	svc, delay := s.tokSvc, s.tokDelay
	span := int64(n) * svc
	horizon := min(s.queue.next(), s.scrapeAt, MaxClockNs+1)
	for firstCycle := true; ; firstCycle = false {
		end := c.stepStart + c.cost.WallNs
		// The members' latest chunks started at a + rank × svc (one line)
		// unless a member left or joined since the last cycle streamed.
		line := len(sc.segs) == 1 && sc.segs[0].to == n
		endFirst := end < horizon // the step ends before every event
		if !endFirst {
			// (An admission to this core ends the loop below: CohortCycle
			// refuses the next cycle, Schedule admits it.)
			horizon, endFirst = s.pastEvents(c, c.stepStart, end, horizon)
			c.admitted = false
		}
		if !endFirst || len(c.Sched.Finishing(cur)) > 0 || (!line && !firstCycle) {
			break // an event first, or a finish
		}
		var a, base int64
		if line {
			a, base = sc.segs[0].a, end
			if svc > 0 {
				base = max(sc.api.free, end)
			}
			if base+span+delay >= sc.minRunEnd || end-a < span-svc {
				break // a new peak second, or a merge
			}
		}
		// The step ends (when not on the line: the first cycle after a
		// leave or join).
		c.endCycle(s, cur, n, end, line, a, base, span)
		// The next step starts: priced, and the one after scheduled.
		c.cur, c.next = next, cur
		cur, next = c.cur, c.next
		c.stepStart = end
		if ctx := cur.DecodeCtxSum; ctx < lo || ctx >= hi {
			c.cost, lo, hi = c.reprice(s, ctx, n)
		}
		c.Steps++
		ok := c.Sched.CohortCycle(next)
		if !ok {
			c.Sched.Schedule(next)
		}
		next.ScheduledNs = end
		c.hasNext = next.NumItems() > 0
		if !ok || s.err != nil {
			break
		}
	}
	c.endBefore(s)
}

// endBefore ends the step begun, a decode cycle of the cohort alone
// whose next step is more (an admission's prefill, most often: the
// advance stopped for it), where launch would end it, when nobody
// finishes in it: the events before its end that the advance handles
// (pastEvents; the schedule after it is a full one anyway), its record,
// tokens (in the line's form, as streamBulk would make of one segment,
// else as cohortTokens: streamCycle) and sample; then it begins the next
// step as launch would (begin), for launch to go on with.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (c *Core) endBefore(s *Sim) {
	cur, sc := c.cur, &c.stream
	n := cur.Cohort
	if !c.Async || !c.hasNext || n == 0 || len(cur.Items) != 0 || len(c.next.Items) == 0 || s.err != nil ||
		sc.cycle != cur.CohortCycle()-1 || len(c.Sched.Finishing(cur)) > 0 {
		return
	}
	end := c.stepStart + c.cost.WallNs
	if horizon := min(s.queue.next(), s.scrapeAt, MaxClockNs+1); end >= horizon {
		_, ok := s.pastEvents(c, c.stepStart, end, horizon)
		c.admitted = false // (begin's schedule below admits it)
		if !ok {
			return // an event first
		}
	}
	svc, delay := s.tokSvc, s.tokDelay
	line := len(sc.segs) == 1 && sc.segs[0].to == n
	var a, base, span int64
	if line {
		a, base, span = sc.segs[0].a, end, int64(n)*svc
		if svc > 0 {
			base = max(sc.api.free, end)
		}
		line = base+span+delay < sc.minRunEnd && end-a >= span-svc // (no new peak second, no merge)
	}
	c.endCycle(s, cur, n, end, line, a, base, span)
	s.kSeams.before++
	c.begin(s) // (the next step has items: it begins)
}

// endCycle ends the step begun, cycle cur of the cohort's n members alone,
// at end, ns: its record, its members' tokens and its sample. When line,
// their chunks lie on one line that started at a and stream from base,
// span ns wide (no new peak second, no merge): one weighted ITL add and
// the line's closed form; else they stream as cohortTokens would
// (streamCycle). The stream's segment start is written before the sample
// (a schedule after it may dissolve the cohort: unstream reads it).
func (c *Core) endCycle(s *Sim, cur *engine.Step, n int, end int64, line bool, a, base, span int64) {
	if len(s.retired) > 0 {
		s.reuseOut()
	}
	s.now = end
	c.record(s, cur, c.stepStart, false)
	if sc := &c.stream; line {
		if g := base - a; !s.itl.addLast(g, int64(n)) {
			s.itl.AddN(g, int64(n))
		}
		sc.segs[0].a = base
		if s.tokSvc > 0 {
			sc.api.free = base + span
		}
		s.macroSteps++
		sc.cycle = cur.CohortCycle()
	} else {
		s.streamCycle(c, cur.CohortCycle(), n)
		s.kSeams.streamed++
	}
	s.kSteps++
	c.Sched.SampleCohort(cur, nil)
}

// cohortBulk is cohortRun without a step sink: the cycles' ends, tokens
// and prices are worked out first, as far as they go within the cycles
// the scheduler can take in bulk (engine.Scheduler.CohortSpan), then the
// scheduler takes them in one call (AdvanceCohort: the due members'
// block work, cycle by cycle) and the core and its stream are left as
// the last cycle leaves them. The first cycle after a member left or
// joined, and a cycle whose chunks reach a new peak second or merge,
// stream as cohortTokens would (streamCycle); the cycles after go on in
// the line's closed form while the members' chunks lie on one line.
func (c *Core) cohortBulk(s *Sim) {
	span := c.Sched.CohortSpan()
	cur, next, sc := c.cur, c.next, &c.stream
	if span == 0 || len(c.Sched.Finishing(cur)) > 0 {
		return
	}
	n := int64(cur.Cohort)
	// (cohortRun, its only caller, has cleared c.stepHint.)
	var lo, hi int64 // the current price's context sums (none yet)
	svc, delay := s.tokSvc, s.tokDelay
	width := n * svc
	horizon := min(s.queue.next(), s.scrapeAt, MaxClockNs+1)
	// c.cost is the price of the step begun (start), w its wall time.
	start, w, prevStart := c.stepStart, c.cost.WallNs, c.stepStart
	ctx := next.DecodeCtxSum // the next step's, then n more a step
	k := 0
	line := len(sc.segs) == 1 && sc.segs[0].to == int(n)
	if !line {
		// A member left or joined since the last cycle streamed.
		end := start + w
		if end >= horizon {
			ok := false
			if horizon, ok = s.pastEvents(c, start, end, horizon); !ok || c.admitted {
				c.admitted = false
				return // (launch ends the step, the next schedule admits)
			}
		}
		s.now = end
		s.streamCycle(c, cur.CohortCycle(), int(n))
		s.kSeams.streamed++
		prevStart, start = start, end
		c.cost, lo, hi = c.reprice(s, ctx, int(n))
		w = c.cost.WallNs
		ctx += n
		k = 1
		line = len(sc.segs) == 1 && sc.segs[0].to == int(n) && s.err == nil
	}
	var a, free int64
	if line {
		a = sc.segs[0].a
		if svc > 0 {
			free = sc.api.free
		}
	}
	wmin := max(width, 1)
loop:
	for line && k < span {
		if a == start && w >= wmin && (svc == 0 || free <= start+w) {
			// In closed form, the steps of a price: the one begun and
			// those after it whose context sum ctx, ctx + n, … stays in
			// [lo, hi). Each lasts w, its chunks start at its end, each
			// gap is w. (A price holds for at most four steps: w·m cannot
			// overflow.) The step begun after them is priced anew, and
			// the next price's steps go on so while they last at least
			// the chunks' width (then free ≤ start + w again). No step
			// ends at or after stop: the next event, or the tokens'
			// next peak second.
			stop := min(horizon, sc.minRunEnd-width-delay) - 1
			m := int64(0)
			for {
				m = 1
				if ctx >= lo && ctx < hi {
					m += (hi-1-ctx)/n + 1
				}
				m = min(m, int64(span-k))
				if t := stop - start; t < w*m {
					m = max(t, 0) / w
				}
				if m <= 0 {
					break
				}
				if !s.itl.addLast(w, m*n) {
					s.itl.AddN(w, m*n)
				}
				prevStart, start = start+(m-1)*w, start+m*w
				a, free = start, start+width
				ctx += m * n
				k += int(m)
				if begun := ctx - n; begun < lo || begun >= hi {
					s.now = start // (checkStep's message)
					c.cost, lo, hi = c.reprice(s, begun, int(n))
					w = c.cost.WallNs
					if s.err != nil {
						break loop
					}
				}
				if k >= span || w < wmin {
					break
				}
			}
			if m > 0 {
				continue
			}
		}
		end := start + w
		if end >= horizon {
			if svc > 0 {
				sc.api.free = free // (as the events before end find it)
			}
			ok := false
			horizon, ok = s.pastEvents(c, start, end, horizon)
			if svc > 0 {
				free = sc.api.free
			}
			if !ok {
				c.admitted = false // (the step ends on the general path)
				break              // an event first
			}
			if c.admitted && k == 0 { // (ended as the general path would: by launch)
				c.admitted = false
				return
			}
		}
		base := end
		if svc > 0 {
			base = max(free, end)
		}
		if base+width+delay < sc.minRunEnd && end-a >= width-svc {
			if g := base - a; !s.itl.addLast(g, n) {
				s.itl.AddN(g, n)
			}
			a, free = base, base+width
		} else {
			// A member's chunk reaches a new peak second, or merges: the
			// cycle streams as cohortTokens would (streamCycle: one by
			// one, or segment by segment), the line's form going on after
			// it when the members' chunks lie on one line again.
			sc.segs[0].a, sc.cycle = a, cur.CohortCycle()+k-1
			if svc > 0 {
				sc.api.free = free
			}
			s.now = end
			s.streamCycle(c, cur.CohortCycle()+k, int(n))
			s.kSeams.streamed++
			if line = len(sc.segs) == 1 && sc.segs[0].to == int(n); line {
				a = sc.segs[0].a
				if svc > 0 {
					free = sc.api.free
				}
			}
		}
		prevStart, start = start, end
		if ctx < lo || ctx >= hi {
			s.now = end // (checkStep's message)
			c.cost, lo, hi = c.reprice(s, ctx, int(n))
			w = c.cost.WallNs
		}
		ctx += n
		k++
		if s.err != nil || c.admitted {
			break
		}
	}
	if k == 0 {
		return
	}
	if len(s.retired) > 0 {
		s.reuseOut()
	}
	s.now = max(s.now, start) // (after any event handled in the step begun)
	if line {
		sc.segs[0].a = a
		if svc > 0 {
			sc.api.free = free
		}
	}
	sc.cycle = cur.CohortCycle() + k - 1
	s.macroSteps += int64(k)
	s.kSteps += int64(k)
	c.Steps += int64(k)
	if c.admitted {
		c.bulkAdmitted(k)
	} else {
		c.cur, c.next = c.Sched.AdvanceCohort(k)
		if c.next.Cohort < c.cur.Cohort {
			s.kSeams.leaves++
		}
		c.hasNext = true
	}
	c.cur.ScheduledNs, c.next.ScheduledNs = prevStart, start
	c.stepStart = start
	c.batch.DecodeCtxSum = c.cur.DecodeCtxSum
	c.endBefore(s) // (after an admission, the step after it)
}

// bulkAdmitted is cohortBulk's end when the last of its k steps ended
// admitted a request: the schedule at its end is a full one (Schedule),
// as launch's would be. (Out of line: rare, issue 10.)
//
//go:noinline
func (c *Core) bulkAdmitted(k int) {
	c.admitted = false
	ended := c.cur
	if k > 1 {
		ended, c.cur = c.Sched.AdvanceCohort(k - 1)
	} else {
		c.cur = c.next
	}
	c.Sched.SampleCohort(ended, nil) // (nobody finishes: CohortSpan)
	c.next = ended
	c.Sched.Schedule(c.next)
	c.hasNext = c.next.NumItems() > 0
}

// seams counts the k-step advance's ways past what used to end it (the
// equivalence tests require each taken): cycles streamed as cohortTokens
// would, the first after members left or joined (streamCycle); bulk
// advances whose last cycle's schedule leaves members out; consents to
// a request joining the cohort before its first token came (canStream);
// client deadlines, sends and admissions handled inside it (pastEvents);
// steps ended before a step that is more than a cohort cycle (endBefore).
type seams struct {
	streamed, leaves, early, deadlines, sends, admits, before int64
}

// reprice prices the cohort's decode step (c.batch) at decode context
// sum ctx, tokens, with running requests running (the cohort's members;
// the step begun before may have counted one that finished since), and
// checks its wall time (Sim.checkStep): the price and the context sums
// [lo, hi) over which it holds, lo = hi = 0 from a pricer that cannot
// tell (every step is priced then).
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (c *Core) reprice(s *Sim, ctx int64, running int) (cost predictor.StepTime, lo, hi int64) {
	c.batch.DecodeCtxSum, c.batch.NumRunning = ctx, running
	// The concrete predictor first: comparing the type word is a few
	// instructions, where asserting an interface type costs ~20 a call
	// (~40 k calls a codegen run).
	if p, ok := c.Pred.(*predictor.Predictor); ok {
		cost, lo, hi = p.StepRangeNext(&c.batch, true, &c.stepHint)
	} else if pr, ok := c.Pred.(rangePricer); ok {
		cost, lo, hi = pr.StepRange(&c.batch, true)
	} else {
		cost = c.Pred.Step(&c.batch, true)
	}
	s.checkStep(c, cost.WallNs)
	return cost, lo, hi
}

// rangePricer is a Pricer that also tells over which decode context sums
// its price holds (predictor.Predictor.StepRange).
type rangePricer interface {
	StepRange(b *predictor.Batch, async bool) (st predictor.StepTime, lo, hi int64)
}
