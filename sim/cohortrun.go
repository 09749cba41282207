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
//     histogram as one weighted add per run of equal gaps
//     (Histogram.AddN, whose n adds equal n single ones), while no
//     member's chunk reaches its next peak-throughput second; each
//     member's own counts stay kept back (stream.apply1 writes them);
//   - the scheduler's sample (engine.Scheduler.SampleCohort, nobody
//     finishing) and the schedule of the cycle after next
//     (engine.Scheduler.CohortCycle: a due member's block work, in cycle
//     order; or Schedule, which ends the run);
//   - the price of the next step: asked of the predictor only when its
//     decode context sum leaves the range its latest memoized price
//     covers (predictor.Predictor.StepRange), about one step in four.
//
// Async scheduling only (the next step is scheduled when a step starts);
// the caller (launch) has just begun a step. Step by step
// (Options.StepByStep) it does not run; TestStepByStepSameBytes and
// TestMacroStepEquivalence compare every output byte of the two.
func (c *Core) cohortRun(s *Sim) {
	cur, next, sc := c.cur, c.next, &c.stream
	n := cur.Cohort
	if !c.Async || !c.hasNext || n == 0 || len(cur.Items) != 0 || next.Cohort != n || len(next.Items) != 0 ||
		cur.NumRunning != n || next.NumRunning != n || len(c.Sched.Cohort()) != n || s.err != nil ||
		len(sc.segs) != 1 || sc.segs[0].to != n || sc.cycle != cur.CohortCycle()-1 {
		return
	}
	pr, ranged := c.Pred.(rangePricer)
	var lo, hi int64 // the current price's context sums (none yet)
	svc, delay := s.tokSvc, s.tokDelay
	span := int64(n) * svc
	horizon := min(s.queue.next(), s.scrapeAt, MaxClockNs+1)
	a := sc.segs[0].a // the latest chunks started at a + rank × svc
	var free int64
	if svc > 0 {
		free = sc.api.free
	}
	var gap, gaps int64 // the run of equal gaps not yet in the histogram
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
		if g := base - a; g != gap {
			s.itl.AddN(gap, gaps)
			gap, gaps = g, 0
		}
		gaps += int64(n)
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
			c.batch.DecodeCtxSum = ctx
			if ranged {
				c.cost, lo, hi = pr.StepRange(&c.batch, true)
			} else {
				c.cost = c.Pred.Step(&c.batch, true)
			}
			s.checkStep(c, c.cost.WallNs)
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
	s.itl.AddN(gap, gaps)
}

// rangePricer is a Pricer that also tells over which decode context sums
// its price holds (predictor.Predictor.StepRange).
type rangePricer interface {
	StepRange(b *predictor.Batch, async bool) (st predictor.StepTime, lo, hi int64)
}
