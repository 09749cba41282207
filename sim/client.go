package sim

import "frontier/sim/workload"

// ClientConfig is how the client sends: concurrency cap and timeout.
type ClientConfig struct {
	MaxConcurrency int   // 0 = unlimited
	TimeoutNs      int64 // 0 = none
}

// client sends the plan: stage by stage (each stage's requests at their
// offsets from the stage start; the next stage starts IntervalNs after the
// last request of this one finished or failed), holding requests while
// MaxConcurrency are in flight, and giving up on a request TimeoutNs after
// sending it.
type client struct {
	cfg         ClientConfig
	plan        *workload.Plan
	stage       int
	outstanding int
	inflight    int
	blocked     []*record
	n           int
}

func (c *client) total() int {
	if c.n == 0 {
		c.n = c.plan.NumRequests()
	}
	return c.n
}

func (c *client) startStage(s *Sim, k int) {
	c.stage = k
	st := &c.plan.Stages[k]
	c.outstanding = len(st.Requests)
	for _, p := range st.Requests {
		s.queue.push(s.now+p.At, clientSend{s.newRecord(p)})
	}
	if c.outstanding == 0 {
		c.next(s)
	}
}

func (c *client) arrive(s *Sim, r *record) {
	if c.cfg.MaxConcurrency > 0 && c.inflight >= c.cfg.MaxConcurrency {
		c.blocked = append(c.blocked, r)
		return
	}
	c.send(s, r)
}

func (c *client) send(s *Sim, r *record) {
	c.inflight++
	r.out.SendNs = s.now
	s.queue.push(s.now+s.host.FrontEndInNs(r.plan.PromptTokens), engineAdmit{r})
	if c.cfg.TimeoutNs > 0 {
		s.queue.push(s.now+c.cfg.TimeoutNs, timeout{r})
	}
}

func (c *client) done(s *Sim) {
	c.inflight--
	if len(c.blocked) > 0 {
		r := c.blocked[0]
		c.blocked = c.blocked[1:]
		c.send(s, r)
	}
	c.outstanding--
	if c.outstanding == 0 {
		c.next(s)
	}
}

func (c *client) next(s *Sim) {
	if c.stage+1 < len(c.plan.Stages) {
		s.queue.push(s.now+c.plan.Stages[c.stage].IntervalNs, stageStart{c.stage + 1})
	}
}
