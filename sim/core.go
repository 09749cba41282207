package sim

import (
	"frontier/predictor"
	"frontier/sim/engine"
)

// Core is one vLLM engine core: a scheduler, the model runner priced by a
// predictor, and its step loop.
//
// Without async scheduling a step is scheduled when the previous one ends
// and lasts device + host time. With async scheduling (vLLM's default) the
// engine core keeps two batches in its queue: as soon as step k is
// submitted it schedules step k+1 (with placeholders for step k's tokens),
// so a request that arrives while step k runs joins step k+2 at the
// earliest, and the host work overlaps the device (vllm/v1/engine/core.py
// step_with_batch_queue; vllm/v1/core/sched/async_scheduler.py).
type Core struct {
	ID    int
	Sched *engine.Scheduler
	Pred  Pricer
	Pad   engine.PadTable
	Async bool

	busy      bool
	kicking   bool // a kick event is queued
	stepStart int64
	cur, next *engine.Step
	hasNext   bool
	batch     predictor.Batch
	cost      predictor.StepTime
	done      []*engine.Request
	Steps     int64
}

// Load is the router's measure of how busy the core is (requests held).
func (c *Core) Load() int { return c.Sched.NumRunning() + c.Sched.NumWaiting() }

// Pricer prices one step (predictor.Predictor; tests use fixed prices).
type Pricer interface {
	Step(b *predictor.Batch, async bool) predictor.StepTime
}

// wake queues a kick at the current time, after every event already due
// now, so requests arriving together join the same first step (the engine
// core drains its input queue before it schedules).
func (c *Core) wake(s *Sim) {
	if !c.busy && !c.kicking {
		c.kicking = true
		s.queue.push(s.now, kick{c})
	}
}

// kick starts a step if the core is idle and has work.
func (c *Core) kick(s *Sim) {
	c.kicking = false
	if !c.busy && c.Sched.HasWork() {
		c.launch(s)
	}
}

// launch starts the next step at s.now: the pre-scheduled batch when
// there is one, else a batch scheduled now.
func (c *Core) launch(s *Sim) {
	if c.cur == nil {
		c.cur, c.next = &engine.Step{}, &engine.Step{}
	}
	if c.hasNext {
		c.cur, c.next = c.next, c.cur
		c.hasNext = false
	} else {
		c.Sched.Schedule(c.cur)
	}
	if len(c.cur.Items) == 0 {
		c.busy = false
		return
	}
	c.busy = true
	c.stepStart = s.now
	c.price()
	c.Steps++
	if c.Async {
		c.Sched.Schedule(c.next)
		c.hasNext = len(c.next.Items) > 0
	}
	s.queue.push(s.now+c.cost.WallNs, stepEnd{c})
}

// price fills the batch description of the current step and prices it.
func (c *Core) price() {
	st, b := c.cur, &c.batch
	b.NumTokens = st.NumTokens
	b.PaddedTokens, b.Graph = c.Pad.Pad(st.NumTokens)
	if !b.Graph {
		b.PaddedTokens = st.NumTokens
	}
	b.Prefills = b.Prefills[:0]
	for i := range st.Items {
		it := &st.Items[i]
		if !it.Decode {
			b.Prefills = append(b.Prefills, predictor.Chunk{NewTokens: it.NumNew, PrefixTokens: it.Computed})
		}
	}
	b.NumDecodes = st.NumDecode
	b.DecodeCtxSum = st.DecodeCtxSum
	b.NumSampled = st.NumSampled
	b.NumRequests = len(st.Items)
	b.NumRunning = st.NumRunning
	c.cost = c.Pred.Step(b, c.Async)
}

func (c *Core) endStep(s *Sim) {
	st := c.cur
	if s.stepSink != nil {
		s.stepSink(StepRecord{
			Engine: c.ID, StartNs: c.stepStart, DurationNs: s.now - c.stepStart,
			PrefillTokens: st.NumPrefill, DecodeTokens: st.NumDecode,
			PaddedTokens: c.batch.PaddedTokens, Graph: c.batch.Graph,
			Running: st.NumRunning, Waiting: st.NumWaiting,
			KVBlocksUsed: st.KVBlocksUsed, Preempted: st.NumPreempted,
			DeviceNs: c.cost.DeviceNs, HostNs: c.cost.HostNs,
		})
	}
	for i := range st.Items {
		it := &st.Items[i]
		if it.Samples && it.Req.Status == engine.Running {
			s.token(it.Req.Data.(*record))
		}
	}
	c.done = c.Sched.Update(st, c.done[:0])
	for _, r := range c.done {
		s.finish(r.Data.(*record), false)
	}
	c.busy = false
	c.launch(s)
}
