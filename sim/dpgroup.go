package sim

import (
	"frontier/sim/engine"
)

// dpGroup steps the DP engine cores of a MoE model together. Every MoE
// layer gathers the tokens of all DP ranks, so the ranks run each step in
// lockstep: a rank with no work runs a dummy forward pass, every rank's
// batch is padded to the largest rank's token count (and to its CUDA-graph
// size), and the step lasts as long as the slowest rank
// (vllm/v1/worker/gpu_model_runner.py, coordinate_batch_across_dp and
// execute_dummy_batch). The group steps only while some rank has work.
// Lockstep steps are scheduled synchronously (no async pre-scheduling).
type dpGroup struct {
	cores   []*Core
	busy    bool
	kicking bool
	start   int64
	dummy   []bool
}

type groupKick struct{ g *dpGroup }
type groupEnd struct{ g *dpGroup }

func (e groupKick) handle(s *Sim) { e.g.kicking = false; e.g.step(s) }
func (e groupEnd) handle(s *Sim)  { e.g.end(s) }

func (g *dpGroup) wake(s *Sim) {
	if !g.busy && !g.kicking {
		g.kicking = true
		s.queue.push(s.now, groupKick{g})
	}
}

func (g *dpGroup) step(s *Sim) {
	if g.busy {
		return
	}
	padTo, work := 0, false
	for _, c := range g.cores {
		if c.cur == nil {
			c.cur = &engine.Step{}
		}
		c.Sched.Schedule(c.cur)
		c.cur.ScheduledNs = s.now
		if c.cur.NumItems() > 0 {
			work = true
		}
		padTo = max(padTo, c.cur.NumTokens)
	}
	if !work {
		return
	}
	if len(g.dummy) != len(g.cores) {
		g.dummy = make([]bool, len(g.cores))
	}
	var wall int64
	for i, c := range g.cores {
		g.dummy[i] = c.cur.NumItems() == 0
		fillBatch(&c.batch, c.cur, c.Pad, padTo)
		c.cost = c.Pred.Step(&c.batch, false)
		wall = max(wall, c.cost.WallNs)
		c.Steps++
	}
	g.busy, g.start = true, s.now
	s.checkStep(g.cores[0], wall)
	s.queue.push(s.now+wall, groupEnd{g})
}

func (g *dpGroup) end(s *Sim) {
	for i, c := range g.cores {
		c.record(s, c.cur, g.start, g.dummy[i])
		c.complete(s, c.cur)
		c.stepDone(s, c.cur)
	}
	g.busy = false
	g.step(s)
}
