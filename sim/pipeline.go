package sim

import (
	"frontier/predictor"
	"frontier/sim/engine"
)

// flight is one batch inside the pipeline.
type flight struct {
	step   engine.Step
	batch  predictor.Batch
	cost   predictor.StepTime
	start  int64
	stages []int64 // each stage's start; the batch leaves stage k at stages[k] + stage time
	stage  int64
}

// pipeline is a pipeline-parallel engine's state: the batches in flight
// and when each stage is next free.
type pipeline struct {
	flights   []*flight
	spare     []*flight
	stageFree []int64
}

type flightEnd struct {
	c *Core
	f *flight
}

func (e flightEnd) handle(s *Sim) { e.c.endFlight(s, e.f) }

// fillPipeline schedules new batches while fewer than PP are in flight
// (vLLM's batch queue holds max_concurrent_batches = PP). A batch enters
// stage 0 when that stage is free and each later stage when both the
// batch has left the previous one and the stage is free; each stage costs
// the predictor's step time for its layers plus the send to the next
// stage.
func (c *Core) fillPipeline(s *Sim) {
	p := &c.pipe
	if p.stageFree == nil {
		p.stageFree = make([]int64, c.PP)
	}
	for len(p.flights) < c.PP {
		var f *flight
		if n := len(p.spare); n > 0 {
			f, p.spare = p.spare[n-1], p.spare[:n-1]
		} else {
			f = &flight{}
		}
		c.Sched.Schedule(&f.step)
		f.step.ScheduledNs = s.now
		if f.step.NumItems() == 0 {
			p.spare = append(p.spare, f)
			return
		}
		for i := range f.step.Items {
			f.step.Items[i].Req.InFlight = true
		}
		fillBatch(&f.batch, &f.step, c.Pad, 0)
		f.cost = c.Pred.Step(&f.batch, false)
		stage := f.cost.WallNs
		if ss, ok := c.Pred.(stageSender); ok {
			stage += ss.StageSendNs(f.batch.PaddedTokens)
		}
		s.checkStep(c, stage)
		f.start, f.stage = s.now, stage
		f.stages = f.stages[:0]
		t := s.now
		for k := range p.stageFree {
			begin := max(t, p.stageFree[k])
			f.stages = append(f.stages, begin)
			t = begin + stage
			p.stageFree[k] = t
		}
		c.Steps++
		p.flights = append(p.flights, f)
		s.queue.push(t, flightEnd{c, f})
	}
}

func (c *Core) endFlight(s *Sim, f *flight) {
	p := &c.pipe
	for i, g := range p.flights {
		if g == f {
			p.flights = append(p.flights[:i], p.flights[i+1:]...)
			break
		}
	}
	for i := range f.step.Items {
		f.step.Items[i].Req.InFlight = false
	}
	c.batch, c.cost = f.batch, f.cost
	if s.stepSink != nil || s.obs != nil {
		for k, begin := range f.stages {
			rec := c.stepRecord(&f.step, begin, begin+f.stage, k, false)
			if k > 0 {
				// Preemptions happen once, when the batch is scheduled:
				// the first stage's row counts them (defect 8, issue 10).
				rec.Preempted = 0
			}
			s.emitStep(rec)
		}
	}
	c.complete(s, &f.step)
	c.stepDone(s, &f.step)
	p.spare = append(p.spare, f)
	c.fillPipeline(s)
}
