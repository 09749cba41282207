package sim

import "frontier/predictor"

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
// Async scheduling only (the next step is scheduled when a step starts);
// the caller (launch) has just begun a step. Step by step
// (Options.StepByStep) it does not run; TestCohortRunEquivalence,
// TestStepByStepSameBytes and TestMacroStepEquivalence compare every
// output byte of the two.
func (c *Core) cohortRun(s *Sim) {
	cur, next, sc := c.cur, c.next, &c.stream
	n := cur.Cohort
	if !c.Async || !c.hasNext || n == 0 || len(cur.Items) != 0 || next.Cohort != n || len(next.Items) != 0 ||
		cur.NumRunning != n || next.NumRunning != n || len(c.Sched.Cohort()) != n || s.err != nil ||
		len(sc.segs) != 1 || sc.segs[0].to != n || sc.cycle != cur.CohortCycle()-1 {
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
	a := sc.segs[0].a // the latest chunks started at a + rank × svc
	var free int64
	if svc > 0 {
		free = sc.api.free
	}
	for {
		end := c.stepStart + c.cost.WallNs
		base := end
		if svc > 0 {
			base = max(free, end)
		}
		if end >= horizon || base+span+delay >= sc.minRunEnd || end-a < span-svc ||
			len(c.Sched.Finishing(cur)) > 0 {
			break // an event first, a new peak second, a merge, or a finish
		}
		// The step ends: its record, tokens and sample.
		if len(s.retired) > 0 {
			s.reuse()
		}
		s.now = end
		c.record(s, cur, c.stepStart, false)
		if g := base - a; !s.itl.addLast(g, int64(n)) {
			s.itl.AddN(g, int64(n))
		}
		a, free = base, base+span
		sc.segs[0].a = a // (Schedule below may dissolve the cohort: unstream reads them)
		if svc > 0 {
			sc.api.free = free
		}
		s.macroSteps++
		s.kSteps++
		sc.cycle = cur.CohortCycle()
		c.Sched.SampleCohort(cur, nil)
		// The next step starts: priced, and the one after scheduled.
		c.cur, c.next = next, cur
		cur, next = c.cur, c.next
		c.stepStart = end
		if ctx := cur.DecodeCtxSum; ctx < lo || ctx >= hi {
			c.cost, lo, hi = c.reprice(s, ctx)
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
}

// cohortBulk is cohortRun without a step sink: the cycles' ends, tokens
// and prices are worked out first, as far as they go within the cycles
// the scheduler can take in bulk (engine.Scheduler.CohortSpan), then the
// scheduler takes them in one call (AdvanceCohort: the due members'
// block work, cycle by cycle) and the core and its stream are left as
// the last cycle leaves them.
func (c *Core) cohortBulk(s *Sim) {
	span := c.Sched.CohortSpan()
	cur, next, sc := c.cur, c.next, &c.stream
	if span == 0 || len(c.Sched.Finishing(cur)) > 0 {
		return
	}
	n := int64(cur.Cohort)
	var lo, hi int64 // the current price's context sums (none yet)
	svc, delay := s.tokSvc, s.tokDelay
	width := n * svc
	horizon := min(s.queue.next(), s.scrapeAt, MaxClockNs+1)
	a := sc.segs[0].a
	var free int64
	if svc > 0 {
		free = sc.api.free
	}
	start, cost, prevStart := c.stepStart, c.cost, c.stepStart
	ctx := next.DecodeCtxSum // the next step's, then n more a step
	k := 0
	for k < span {
		if w := cost.WallNs; a == start && ctx >= lo && ctx < hi && w >= max(width, 1) && (svc == 0 || free <= start+w) {
			// In closed form, the steps while the price holds: each lasts
			// w, its chunks start at its end, each gap is w. (A price
			// holds for at most four steps: w·m cannot overflow.)
			m := min(int64(span-k), (hi-1-ctx)/n+1)
			if t := horizon - 1 - start; t < w*m {
				m = max(t, 0) / w // (ends before the next event)
			}
			if t := sc.minRunEnd - 1 - width - delay - start; t < w*m {
				m = max(t, 0) / w // (tokens before a new peak second)
			}
			if m > 0 {
				if !s.itl.addLast(w, m*n) {
					s.itl.AddN(w, m*n)
				}
				prevStart, start = start+(m-1)*w, start+m*w
				a, free = start, start+width
				ctx += m * n
				k += int(m)
				continue
			}
		}
		end := start + cost.WallNs
		base := end
		if svc > 0 {
			base = max(free, end)
		}
		if end >= horizon || base+width+delay >= sc.minRunEnd || end-a < width-svc {
			break // an event first, a new peak second, or a merge
		}
		if g := base - a; !s.itl.addLast(g, n) {
			s.itl.AddN(g, n)
		}
		a, free = base, base+width
		prevStart, start = start, end
		if ctx < lo || ctx >= hi {
			s.now = end // (checkStep's message)
			cost, lo, hi = c.reprice(s, ctx)
		}
		ctx += n
		k++
		if s.err != nil {
			break
		}
	}
	if k == 0 {
		return
	}
	if len(s.retired) > 0 {
		s.reuse()
	}
	s.now = start
	sc.segs[0].a = a
	if svc > 0 {
		sc.api.free = free
	}
	sc.cycle = cur.CohortCycle() + k - 1
	s.macroSteps += int64(k)
	s.kSteps += int64(k)
	c.Steps += int64(k)
	c.cur, c.next = c.Sched.AdvanceCohort(k)
	c.cur.ScheduledNs, c.next.ScheduledNs = prevStart, start
	c.stepStart, c.cost = start, cost
	c.batch.DecodeCtxSum = c.cur.DecodeCtxSum
	c.hasNext = true
}

// reprice prices the cohort's decode step (c.batch) at decode context
// sum ctx, tokens, and checks its wall time (Sim.checkStep): the price
// and the context sums [lo, hi) over which it holds, lo = hi = 0 from a
// pricer that cannot tell (every step is priced then).
func (c *Core) reprice(s *Sim, ctx int64) (cost predictor.StepTime, lo, hi int64) {
	c.batch.DecodeCtxSum = ctx
	if pr, ok := c.Pred.(rangePricer); ok {
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
