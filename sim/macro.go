package sim

import "frontier/sim/engine"

// The decode macro-step. Most of a serving run's steps decode one token
// for each running request and change nothing else: no request arrives,
// finishes, is preempted or admitted, no KV block is allocated or fills.
// Stepping through them one by one schedules every request, prices the
// step, queues its end, and hands each token to the API server and the
// client. When launching a step, macroStep instead advances the core
// through the following steps inline, as long as stepping one by one
// could not differ:
//
//   - the scheduler says they are certain to be the same plain decode
//     step again (engine.Scheduler.PlainDecodeCycles: nothing finishes,
//     no block boundary, nothing to admit);
//   - each step ends before the earliest event in the queue (strictly:
//     an event at the same instant was queued earlier and goes first), so
//     nothing from outside (an arrival, a timeout, another engine's step,
//     the API server taking in a request) comes between;
//   - the API servers stream every token of a step as it ends: each one
//     finished the previous step's chunks by then, so no chunk waits or
//     merges and every request's gap between tokens is the step's length.
//
// Each step inline is what stepping gives, in the same order: its
// StepRecord to the step sink and the observer, the scheduler's update
// and next schedule (engine.Scheduler.SampleDecodes and ScheduleDecodes,
// one pass over the items), its price (the predictor is asked for every
// step, as it memoizes and counts lookups), the observer's StepDone. The
// client's work is summed: the first step's tokens one by one, then each
// later step's equal gaps as one weighted histogram add (Histogram.AddN),
// and each request's chunk times, counts and last token at the end. The
// step after the last one inline is queued as usual.
//
// The macro-step serves runs with an observer, which is shown every
// request of every step; without one, the decode cohort keeps the
// requests' decode work back instead (cohort.go), and the macro-step
// does not run. Pipelined cores (PP > 1) and lockstep DP groups step one
// by one. A feature that changes engine or client state between steps
// must either queue an event (which bounds the macro-step) or make
// PlainDecodeCycles or macroStep's checks refuse;
// TestMacroStepEquivalence runs any scenario both ways and compares every
// output byte.
func (c *Core) macroStep(s *Sim) (ended bool) {
	if s.stepByStep || s.obs == nil || c.PP > 1 || c.group != nil {
		return false
	}
	last := c.cur
	if c.Async {
		if !c.hasNext || !sameDecodes(c.cur, c.next) {
			return false
		}
		last = c.next
	}
	m := c.Sched.PlainDecodeCycles(last)
	end, horizon := c.stepStart+c.cost.WallNs, s.queue.next()
	if m == 0 || end >= horizon || end > MaxClockNs || s.err != nil {
		return false
	}
	mc := &s.macro
	if !mc.prepare(c.cur, s.tokSvc, end) {
		return false
	}
	svc, delay := s.tokSvc, s.tokDelay
	first := end
	mc.times = mc.times[:0]
	defer func() { mc.finish(s, c.cur, first, svc, delay) }()
	for cycle := 0; cycle < m && end < horizon && end <= MaxClockNs && s.err == nil; cycle++ {
		w := end - c.stepStart
		if cycle > 0 && int64(mc.busiest)*svc > w {
			return false // an API server would still be streaming the last step
		}
		// The step ends at end: its record, tokens and update.
		s.now = end
		s.macroSteps++
		c.record(s, c.cur, c.stepStart, false)
		c.Sched.SampleDecodes(c.cur)
		if cycle == 0 {
			mc.firstTokens(s, c.cur, end, svc, delay)
		} else {
			s.itl.AddN(w, int64(len(c.cur.Items)))
			mc.times = append(mc.times, end)
		}
		c.stepDone(s, c.cur)
		// The next step starts at end: as begin would start it, with its
		// schedule done by ScheduleDecodes unless the pool is short of
		// the blocks its tokens start (Schedule then preempts: begin).
		if c.Sched.DecodeBlocks() > c.Sched.Pool.NumFree() {
			return true
		}
		if c.Async {
			c.cur, c.next = c.next, c.cur
		} else {
			c.Sched.ScheduleDecodes(c.cur, 1)
			c.cur.ScheduledNs = end
		}
		c.stepStart = end
		fillBatch(&c.batch, c.cur, c.Pad, 0)
		c.cost = c.Pred.Step(&c.batch, c.Async)
		c.Steps++
		if c.Async {
			c.Sched.ScheduleDecodes(c.next, 2)
			c.next.ScheduledNs = end
		}
		s.checkStep(c, c.cost.WallNs)
		end = c.stepStart + c.cost.WallNs
	}
	return false
}

// sameDecodes reports whether cur and next (async scheduling's two
// steps) decode the same requests in the same order, every one sampling.
func sameDecodes(cur, next *engine.Step) bool {
	n := len(next.Items)
	if len(cur.Items) != n || cur.NumDecode != n || cur.NumSampled != n || cur.NumPrefill != 0 || cur.NumPreempted != 0 {
		return false
	}
	for i := range cur.Items {
		a := &cur.Items[i]
		if a.Req != next.Items[i].Req || !a.Decode || !a.Samples {
			return false
		}
	}
	return true
}

// macroState is macroStep's client-side bookkeeping, kept on the Sim so
// its slices are reused.
type macroState struct {
	off     []int64      // per item: its chunk's offset from the step's end on its API server, ns
	servers []*apiServer // the API servers the step's requests stream through
	count   []int        // tokens each streams per step
	busiest int          // the largest count
	times   []int64      // ends of the steps after the first, ns
}

// prepare checks that every request of step st streams its tokens to a
// client (not a prefill instance's discarded token, not one the client
// gave up, not a first token) and that each API server will have
// streamed everything before st ends (at end, ns), and works out each
// token's place in its server's queue.
func (mc *macroState) prepare(st *engine.Step, svc, end int64) bool {
	mc.off, mc.servers, mc.count, mc.busiest = mc.off[:0], mc.servers[:0], mc.count[:0], 0
	for i := range st.Items {
		r := st.Items[i].Req.Data.(*record)
		if r.done || r.phase == phasePrefill || r.out.FirstTokenNs < 0 {
			return false
		}
		k := 0
		for k < len(mc.servers) && mc.servers[k] != r.api {
			k++
		}
		if k == len(mc.servers) {
			if svc > 0 && r.api.free > end {
				return false // still streaming: this step's chunks would wait
			}
			mc.servers, mc.count = append(mc.servers, r.api), append(mc.count, 0)
		}
		mc.count[k]++
		mc.busiest = max(mc.busiest, mc.count[k])
		mc.off = append(mc.off, int64(mc.count[k])*svc)
	}
	return true
}

// firstTokens streams the first inline step's tokens at end, ns, one by
// one as Sim.tokens would (each request's gap since its last token is its
// own).
func (mc *macroState) firstTokens(s *Sim, st *engine.Step, end, svc, delay int64) {
	for i := range st.Items {
		r := st.Items[i].Req.Data.(*record)
		at := end + mc.off[i]
		if svc > 0 {
			r.chunkAt = at
		}
		at += delay
		s.itl.Add(at - r.lastTok)
		r.out.ITLSumNs += at - r.lastTok
		r.lastTok = at
		s.peak.chunk(r, at)
		r.out.OutputTokens++
	}
	for k, a := range mc.servers {
		if svc > 0 {
			a.free = end + int64(mc.count[k])*svc
		}
	}
}

// finish applies the later inline steps' tokens (at mc.times; the first
// inline step ended at first) to each request of st and the API servers
// (nothing when no step ended inline).
func (mc *macroState) finish(s *Sim, st *engine.Step, first, svc, delay int64) {
	if len(mc.times) == 0 {
		return
	}
	lastEnd := mc.times[len(mc.times)-1]
	for i := range st.Items {
		r := st.Items[i].Req.Data.(*record)
		off := mc.off[i]
		for _, t := range mc.times {
			s.peak.chunk(r, t+off+delay)
		}
		r.out.OutputTokens += int32(len(mc.times))
		r.out.ITLSumNs += lastEnd - first
		r.lastTok = lastEnd + off + delay
		if svc > 0 {
			r.chunkAt = lastEnd + off
		}
	}
	for k, a := range mc.servers {
		if svc > 0 {
			a.free = lastEnd + int64(mc.count[k])*svc
		}
	}
}
