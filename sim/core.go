package sim

import (
	"frontier/predictor"
	"frontier/sim/engine"
)

// Core is one vLLM engine core: a scheduler, the model runner priced by a
// predictor, and its step loop. It steps in one of three ways:
//
//   - One batch at a time (PP = 1). Without async scheduling a step is
//     scheduled when the previous one ends and lasts device + host time.
//     With async scheduling (vLLM's default) the engine core keeps two
//     batches in its queue: as soon as step k is submitted it schedules
//     step k+1 (placeholders for step k's tokens), so a request arriving
//     while step k runs joins step k+2 at the earliest, and host work
//     overlaps the device (vllm/v1/engine/core.py step_with_batch_queue,
//     vllm/v1/core/sched/async_scheduler.py).
//   - Pipelined (PP > 1): up to PP batches in flight, each passing the PP
//     stages in order; a request in flight is not scheduled again until
//     its batch returns (pipeline.go).
//   - In lockstep with the other DP ranks of a MoE model (dpgroup.go).
type Core struct {
	ID     int
	DPRank int
	Pool   string // "" co-located | prefill | decode
	Sched  *engine.Scheduler
	Pred   Pricer
	Pad    engine.PadTable
	Async  bool
	PP     int

	group     *dpGroup
	busy      bool
	kicking   bool // a kick event is queued
	stepStart int64
	cur, next *engine.Step
	hasNext   bool
	batch     predictor.Batch
	cost      predictor.StepTime
	// stepHint is reprice's latest price (predictor.StepHint), cleared
	// where the k-step advance begins (cohortRun, cohortBulk): within one
	// advance the batch changes only in its context sum.
	stepHint predictor.StepHint
	done     []*engine.Request
	pipe     pipeline
	stream   stream // the client side of the decode cohort
	admitted bool   // the k-step advance admitted a request to this core (cohortevents.go)
	// endMark, when set, is the event queue's sequence number when the
	// step begun at markStart and ending at markEnd began, for a step
	// inside which the k-step advance handled events (pastEvents): launch
	// queues that step's end as if queued then, before the events those
	// queued, as stepping one by one does.
	endMark            uint64
	markStart, markEnd int64
	marked             bool
	Steps              int64
}

// Pricer prices one step (predictor.Predictor; tests use fixed prices).
type Pricer interface {
	Step(b *predictor.Batch, async bool) predictor.StepTime
}

// stageSender is a Pricer that also prices pipeline-stage sends.
type stageSender interface {
	StageSendNs(tokens int) int64
}

// Load is the router's score: 4 × waiting + running requests (vLLM's
// DPLBAsyncMPClient weighs waiting requests four times).
func (c *Core) Load() int { return 4*c.Sched.NumWaiting() + c.Sched.NumRunning() }

// wake queues a kick at the current time, after every event already due
// now, so requests arriving together join the same first step (the engine
// core drains its input queue before it schedules).
func (c *Core) wake(s *Sim) {
	if c.group != nil {
		c.group.wake(s)
		return
	}
	if !c.busy && !c.kicking {
		c.kicking = true
		s.queue.push(s.now, kick{c})
	}
}

// kick starts work if the core is idle (or, pipelined, has room).
func (c *Core) kick(s *Sim) {
	c.kicking = false
	if c.PP > 1 {
		c.fillPipeline(s)
		return
	}
	if !c.busy && c.Sched.HasWork() {
		c.launch(s)
	}
}

// launch starts the next step at s.now: the pre-scheduled batch when
// there is one, else a batch scheduled now. The decode macro-step may
// then run the steps that follow inline (macro.go), or the cohort's
// k-step advance (cohortrun.go); when it ends one of them and the next
// needs a full schedule, launch starts that one.
//
// A step that ends before every queued event is ended here, not queued:
// the event loop would pop its end next and do nothing else first
// (endsNext), so launch does what that event would (endStep) and goes on
// with the step after it, sparing a push and a pop per step. Launch is
// the last thing its callers (endStep, kick) do, so nothing runs between.
func (c *Core) launch(s *Sim) {
	for c.begin(s) {
		if s.obs != nil && c.macroStep(s) { // macroStep serves observed runs only
			c.busy = false
			continue
		}
		if c.stream.api != nil && !s.stepByStep {
			c.cohortRun(s) // the k-step advance (cohortrun.go)
		}
		end := c.stepStart + c.cost.WallNs
		if !c.endsNext(s, end) {
			if c.marked && c.markStart == c.stepStart && c.markEnd == end {
				s.queue.pushAfter(end, stepEnd{c}, c.endMark)
			} else {
				s.queue.push(end, stepEnd{c})
			}
			c.marked = false
			return
		}
		// As Sim.Run would: the retired records of the event just
		// handled are reused, then the step's end is handled.
		if len(s.retired) > 0 {
			s.reuse()
		}
		s.now = end
		c.record(s, c.cur, c.stepStart, false)
		c.complete(s, c.cur)
		c.stepDone(s, c.cur)
		c.busy = false
	}
}

// endsNext reports whether Sim.Run would pop the end of the step ending
// at end, ns, as its very next event and handle it with nothing else
// first: it is strictly before every queued event (one at the same
// instant was queued earlier and goes first), within the clock's range,
// before the next replica scrape, and the run has not failed. Off in
// the step-by-step reference run, for pipelined cores and lockstep DP
// groups.
func (c *Core) endsNext(s *Sim, end int64) bool {
	return !s.stepByStep && c.PP == 1 && c.group == nil && s.err == nil &&
		end >= s.now && end <= MaxClockNs && end < s.scrapeAt && end < s.queue.next()
}

// begin schedules and prices the step starting at s.now; false when
// there is nothing to run.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (c *Core) begin(s *Sim) bool {
	if c.cur == nil {
		c.cur, c.next = &engine.Step{}, &engine.Step{}
	}
	if c.hasNext {
		c.cur, c.next = c.next, c.cur
		c.hasNext = false
	} else {
		c.Sched.Schedule(c.cur)
		c.cur.ScheduledNs = s.now
	}
	if c.cur.NumItems() == 0 {
		c.busy = false
		return false
	}
	c.busy = true
	c.stepStart = s.now
	fillBatch(&c.batch, c.cur, c.Pad, 0)
	c.cost = c.Pred.Step(&c.batch, c.Async)
	c.Steps++
	if c.Async {
		c.Sched.Schedule(c.next)
		c.next.ScheduledNs = s.now
		c.hasNext = c.next.NumItems() > 0
	}
	s.checkStep(c, c.cost.WallNs)
	return true
}

// fillBatch describes step st for the predictor. padTo > 0 forces the
// padded token count (DP ranks pad to the largest rank's count).
func fillBatch(b *predictor.Batch, st *engine.Step, pad engine.PadTable, padTo int) {
	n := max(st.NumTokens, padTo)
	b.NumTokens = st.NumTokens
	b.PaddedTokens, b.Graph = pad.Pad(n)
	if !b.Graph {
		b.PaddedTokens = n
	}
	b.Prefills = b.Prefills[:0]
	for i := 0; i < len(st.Items) && len(b.Prefills) < st.PrefillReqs; i++ {
		it := &st.Items[i]
		if !it.Decode {
			b.Prefills = append(b.Prefills, predictor.Chunk{NewTokens: it.NumNew, PrefixTokens: it.Computed})
		}
	}
	b.NumDecodes = st.NumDecode
	b.DecodeCtxSum = st.DecodeCtxSum
	b.NumSampled = st.NumSampled
	b.NumRequests = st.NumItems()
	b.NumRunning = st.NumRunning
}

func (c *Core) endStep(s *Sim) {
	c.record(s, c.cur, c.stepStart, false)
	c.complete(s, c.cur)
	c.stepDone(s, c.cur)
	c.busy = false
	c.launch(s)
}

// record sends a step record to the sink and the observer, if any (a
// check inlined at every step; the record is built only when one is set).
func (c *Core) record(s *Sim, st *engine.Step, start int64, dummy bool) {
	if s.stepSink != nil || s.obs != nil {
		c.emitRecord(s, st, start, dummy)
	}
}

// emitRecord is record's work when a sink or an observer is set.
func (c *Core) emitRecord(s *Sim, st *engine.Step, start int64, dummy bool) {
	s.emitStep(c.stepRecord(st, start, s.now, -1, dummy))
}

func (s *Sim) emitStep(rec StepRecord) {
	if s.stepSink != nil {
		s.stepSink(rec)
	}
	if s.obs != nil {
		s.obsRec = rec // no allocation per step: the observer borrows it
		s.obs.StepRecord(&s.obsRec)
	}
}

// stepRecord describes step st on this core from start to end (ns);
// stage is the pipeline stage, -1 for a whole step without PP.
func (c *Core) stepRecord(st *engine.Step, start, end int64, stage int, dummy bool) StepRecord {
	return StepRecord{
		Engine: c.ID, DPRank: c.DPRank, PPStage: stage, Pool: c.Pool, Dummy: dummy,
		StartNs: start, DurationNs: end - start,
		PrefillTokens: st.NumPrefill, DecodeTokens: st.NumDecode,
		PaddedTokens: c.batch.PaddedTokens, Graph: c.batch.Graph,
		Running: st.NumRunning, Waiting: st.NumWaiting,
		KVBlocksUsed: st.KVBlocksUsed, Preempted: st.NumPreempted,
		DeviceNs: c.cost.DeviceNs, HostNs: c.cost.HostNs,
		ScheduledNs: st.ScheduledNs, PrefixQueries: st.PrefixQueries, PrefixHits: st.PrefixHits,
	}
}

// complete applies a finished step: tokens to the client, then the
// scheduler's update, then finished requests.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (c *Core) complete(s *Sim, st *engine.Step) {
	c.done = s.tokens(c, st, c.done[:0])
	if len(c.done) > 0 {
		c.Sched.Compact()
	}
	for _, r := range c.done {
		s.requestDone(r.Data.(*record))
	}
}
