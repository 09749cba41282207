package sim

import (
	"frontier/predictor"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// Sim is one simulation: a clock, an event queue, a client and engines.
type Sim struct {
	now      int64
	queue    queue
	client   client
	cores    []*Core
	router   Router
	host     predictor.HostModel
	records  []*record
	stepSink func(StepRecord)
	progress func(done, total int)
	finished int
	itl      *Histogram
}

// Options are a run's optional outputs.
type Options struct {
	// StepSink, when set, receives every step record.
	StepSink func(StepRecord)
	// Progress, when set, is called every 1,000 finished requests and at
	// the end with (finished, total).
	Progress func(done, total int)
}

// New assembles a simulation of plan on cores.
func New(plan *workload.Plan, cores []*Core, router Router, host predictor.HostModel, c ClientConfig, opt Options) *Sim {
	s := &Sim{cores: cores, router: router, host: host, stepSink: opt.StepSink, progress: opt.Progress, itl: NewHistogram()}
	s.client = client{cfg: c, plan: plan}
	return s
}

// Run simulates until every request has finished or failed and returns
// the per-request records in send order of IDs.
func (s *Sim) Run() *Result {
	if len(s.client.plan.Stages) > 0 {
		s.queue.push(0, stageStart{0})
	}
	for len(s.queue.h) > 0 {
		it := s.queue.pop()
		s.now = it.at
		it.ev.handle(s)
	}
	if s.progress != nil {
		s.progress(s.finished, s.client.total())
	}
	return s.result()
}

// admit hands a sent request to an engine core once the API server has
// processed it.
func (s *Sim) admit(r *record) {
	if r.done {
		return
	}
	c := s.cores[s.router.Route(s.cores, r)]
	r.core = c
	r.out.Engine = c.ID
	c.Sched.Add(&r.req)
	c.wake(s)
}

// token records one output token leaving the engine at s.now.
func (s *Sim) token(r *record) {
	if r.done {
		return
	}
	at := s.now + s.host.FrontEndOutNs()
	if r.out.FirstTokenNs < 0 {
		r.out.FirstTokenNs = at
		r.out.CachedTokens = r.req.CachedTokens
	} else {
		s.itl.Add(at - r.lastTok)
		r.out.ITLSumNs += at - r.lastTok
	}
	r.lastTok = at
	r.out.OutputTokens++
}

// finish closes a request: completed (its last token received) or failed
// (the client timeout expired).
func (s *Sim) finish(r *record, failed bool) {
	if r.done {
		return
	}
	r.done = true
	r.out.Failed = failed
	if failed {
		r.out.FinishNs = s.now
	} else {
		r.out.FinishNs = r.lastTok
	}
	r.out.Preemptions = r.req.Preemptions
	s.finished++
	if s.progress != nil && s.finished%1000 == 0 {
		s.progress(s.finished, s.client.total())
	}
	s.client.done(s)
}

// expire is the client timeout: the client gives up and vLLM aborts the
// request, freeing its KV blocks.
func (s *Sim) expire(r *record) {
	if r.done {
		return
	}
	if r.core != nil {
		r.core.Sched.Abort(&r.req)
	}
	s.finish(r, true)
}

// newRecord creates the in-flight record of a planned request.
func (s *Sim) newRecord(p workload.Request) *record {
	r := &record{plan: p}
	r.req = engine.Request{
		ID: p.ID, PromptTokens: p.PromptTokens, MaxTokens: p.OutputTokens,
		PrefixKey: p.PrefixKey, PrefixTokens: p.PrefixTokens, ContentKey: p.ContentKey,
	}
	r.req.Data = r
	r.out = RequestRecord{ID: p.ID, Stage: p.Stage, FirstTokenNs: -1, FinishNs: -1, PromptTokens: p.PromptTokens, SendNs: -1}
	s.records = append(s.records, r)
	return r
}

// Router picks the engine core for a request.
type Router interface {
	Route(cores []*Core, r *record) int
}

// LeastLoaded routes to the core holding the fewest requests (running +
// waiting), lowest index on ties: vLLM's DP front end balances by queue
// lengths the same way.
type LeastLoaded struct{}

// Route implements Router.
func (LeastLoaded) Route(cores []*Core, _ *record) int {
	best := 0
	for i, c := range cores {
		if c.Load() < cores[best].Load() {
			best = i
		}
	}
	return best
}
