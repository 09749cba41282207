package sim

import (
	"fmt"
	"math"

	"frontier/predictor"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// Sim is one simulation: a clock, an event queue, a client and engines.
type Sim struct {
	now    int64
	queue  queue
	client client
	cores  []*Core
	pools  []*pool
	disagg *disagg
	host   predictor.HostModel
	// out holds every planned request's RequestRecord, indexed by ID: the
	// run's result. Records sent point into it. The client writes a
	// request's entry when it sends it (newOut; outMade marks it); Run
	// writes those of requests never sent at the end (fillUnsent).
	out     []RequestRecord
	outMade bitset
	// slab hands out new records in chunks (one allocation per
	// recordChunk); free holds records of completed requests for reuse,
	// retired those completed during the current event (reused after it,
	// so that nothing handling the event sees a record change hands).
	slab          []record
	free, retired []*record
	stepSink      func(StepRecord)
	obs           Observer // nil: no report observes the run
	obsRec        StepRecord
	progress      func(done, total int)
	finished      int
	itl           *Histogram
	tokSvc        int64 // API server work per output token, ns
	// maxModelLen rejects requests longer than max_model_len (0 = none);
	// longestRejected is the most tokens (prompt + output) one asked for.
	maxModelLen     int
	longestRejected int
	tokDelay        int64 // delay after the API server per token, ns
	// stepByStep turns the decode cohort and macro-step off
	// (Options.StepByStep); macro is the macro-step's reused bookkeeping.
	stepByStep bool
	macro      macroState
	// macroSteps counts the steps whose per-request work was kept back:
	// ended inline by the macro-step, or streamed in bulk for the decode
	// cohort (the equivalence tests' check).
	macroSteps int64
	kSteps     int64 // steps ended by the k-step advance (cohortrun.go; the tests' check)
	kSeams     seams // the advance's ways past a join, leave or idle deadline (the tests' check)
	// err stops the run (fail); Run returns it in Result.Err.
	err  error
	peak peakTokens
	// replicas is the router in front of the replicas (nil: one); the
	// event loop refreshes its view of their metrics when the clock
	// reaches scrapeAt (math.MaxInt64: never).
	replicas *replicaSet
	scrapeAt int64
}

// MaxClockNs is the latest time a run may reach, 2^62 ns ≈ 146 years:
// an event past it (or before the clock) stops the run with an error in
// Result.Err, so the int64 clock never wraps. With steps below
// predictor.MaxStepNs and at most 64 pipeline stages, now + a step stays
// below 2^63 − 1.
const MaxClockNs = int64(1) << 62

// fail stops the run with err (the first one wins).
func (s *Sim) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// checkStep fails the run when a step's price saturated at
// predictor.MaxStepNs: no real step lasts that long, so the operator
// tables or the host calibration are wrong.
func (s *Sim) checkStep(c *Core, wallNs int64) {
	if wallNs >= predictor.MaxStepNs { // inlined at every step; the failure is not
		s.stepTooLong(c)
	}
}

// stepTooLong fails the run for a step priced at or past MaxStepNs.
func (s *Sim) stepTooLong(c *Core) {
	s.fail(fmt.Errorf("engine %d: a step priced at or past %d ns (%.3g years) at t = %.6g s; no real step is that long: check the operator tables (--profile-dir, profiles) and the host calibration (--calibration)",
		c.ID, predictor.MaxStepNs, float64(predictor.MaxStepNs)/3.156e16, float64(s.now)/1e9))
}

// Options are a run's optional outputs.
type Options struct {
	// StepSink, when set, receives every step record.
	StepSink func(StepRecord)
	// Progress, when set, is called every 1,000 finished requests and at
	// the end with (finished, total).
	Progress func(done, total int)
	// StepByStep turns the decode cohort (cohort.go, engine/cohort.go),
	// its k-step advance (cohortrun.go) and the macro-step (macro.go) off:
	// every step schedules, prices and streams each request itself. The
	// outputs are the same, only slower; TestMacroStepEquivalence and
	// TestCohortRunEquivalence compare the two.
	StepByStep bool
	// Observer, when set, sees the run as it happens (sim/report).
	Observer Observer
}

// New assembles a simulation of plan on cores.
// A nil router means least-loaded routing over all cores (one pool).
func New(plan *workload.Plan, cores []*Core, router Router, host predictor.HostModel, c ClientConfig, opt Options) *Sim {
	s := &Sim{cores: cores, host: host, stepSink: opt.StepSink, progress: opt.Progress, itl: NewHistogram(), stepByStep: opt.StepByStep,
		tokSvc: int64(host.APITokenNs), tokDelay: int64(host.StreamPerTokenNs), scrapeAt: math.MaxInt64}
	if router == nil {
		router = LeastLoaded{}
	}
	s.pools = []*pool{{cores: cores, router: router, apis: make([]apiServer, len(cores))}}
	s.client = client{cfg: c, plan: plan, turns: pending{armedAt: -1}}
	s.out = make([]RequestRecord, plan.NumRequests())
	s.outMade = newBitset(len(s.out))
	s.observe(opt.Observer)
	if !opt.StepByStep && opt.Observer == nil {
		for _, c := range cores {
			if c.PP <= 1 && c.group == nil {
				c.enableCohort(s)
			}
		}
	}
	return s
}

// Run simulates until every request has finished or failed and returns
// the per-request records in send order of IDs.
func (s *Sim) Run() *Result {
	if len(s.client.plan.Stages) > 0 {
		s.queue.push(0, stageStart{0})
	}
	for s.queue.len() > 0 && s.err == nil {
		it := s.queue.pop()
		if it.at > MaxClockNs || it.at < s.now {
			s.fail(fmt.Errorf("the simulated clock would pass %d ns (≈146 years), or run backwards, at an event scheduled for %d ns (now %d ns): the step prices are impossible; check the operator tables (--profile-dir, profiles) and the host calibration (--calibration)", MaxClockNs, it.at, s.now))
			break
		}
		if it.at >= s.scrapeAt {
			s.replicas.scrapeAt(s, it.at)
		}
		s.now = it.at
		it.ev.handle(s)
		if len(s.retired) > 0 {
			s.reuse()
		}
	}
	for _, c := range s.cores {
		c.Sched.Dissolve() // a run stopped early: write the members' counts
	}
	if s.outMade.n < len(s.out) {
		s.fillUnsent()
	}
	if s.progress != nil && s.finished%1000 != 0 {
		s.progress(s.finished, s.client.total())
	}
	return s.result()
}

// admit hands a sent request to an engine core of the first pool (the
// only one, or the prefill pool) once the API server has processed it.
func (s *Sim) admit(r *record) {
	if r.done {
		return
	}
	s.route(s.pools[0], r)
}

func (s *Sim) route(p *pool, r *record) {
	cores, dp := p.cores, p.router
	if r.routed {
		cores, dp = s.replicas.cores(p, r.replica)
	}
	c := cores[dp.Route(cores, r)]
	if r.phase == phasePrefill {
		r.out.PrefillEngine = int32(c.ID)
	}
	r.core = c
	r.out.Engine = int32(c.ID)
	c.Sched.Add(&r.req)
	if s.obs != nil {
		s.obs.Queued(c.ID, r.out, s.now)
	}
	c.wake(s)
}

// requestDone is an engine's report that r finished there: a prefill
// instance's part of a disaggregated request, or the whole request.
func (s *Sim) requestDone(r *record) {
	if r.phase == phasePrefill {
		s.prefillDone(r)
		return
	}
	s.finish(r, false)
}

// tokens applies a finished step's sampled tokens in item order: each
// leaves the engine at s.now for the client, then the scheduler counts it
// (Scheduler.Sample; the two touch disjoint state, so one pass does
// both). Requests that finish are appended to done, which is returned.
// The step's cohort members (its implicit items, first) go through
// cohortTokens.
//
// A token of the prefill instance of a disaggregated request is
// discarded by the proxy. The API server streams a token as one SSE
// chunk; if the request's previous chunk is still queued (not yet being
// served), the token joins that chunk instead, as vLLM's
// RequestOutputCollector merges outputs the server has not consumed yet.
// So a saturated API server sends fewer, larger chunks rather than
// falling ever further behind.
func (s *Sim) tokens(c *Core, st *engine.Step, done []*engine.Request) []*engine.Request {
	if st.Cohort > 0 {
		done = s.cohortTokens(c, st, done)
	}
	sched := c.Sched
	now, svc, delay := s.now, s.tokSvc, s.tokDelay
	for i := range st.Items {
		q := st.Items[i].Req
		if !st.Items[i].Samples || q.Status != engine.Running {
			continue
		}
		if r := q.Data.(*record); !r.done && r.phase != phasePrefill {
			if r.out.FirstTokenNs < 0 {
				s.firstToken(r, now, svc, delay)
			} else {
				s.streamOne(r, now, svc, delay)
			}
		}
		if sched.Sample(q) {
			sched.Finish(q)
			done = append(done, q)
		}
	}
	return done
}

// firstToken streams r's first token at now, ns (its TTFT; no gap).
func (s *Sim) firstToken(r *record, now, svc, delay int64) {
	at := now
	if svc > 0 {
		if r.chunkAt-svc > now {
			r.out.OutputTokens++ // merged into the queued chunk
			return
		}
		at = r.api.serve(at, svc)
		r.chunkAt = at
	}
	at += delay
	r.out.FirstTokenNs = at
	r.out.CachedTokens = int32(r.req.CachedTokens)
	s.peak.start(r)
	r.lastTok = at
	s.peak.chunk(r, at)
	r.out.OutputTokens++
}

// finish closes a request: completed (its last token received) or failed
// (the client timeout expired).
func (s *Sim) finish(r *record, failed bool) {
	if r.done {
		return
	}
	r.done = true
	if r.routed {
		s.replicas.done(r)
	}
	r.out.Failed = failed
	if failed {
		r.out.FinishNs = s.now
	} else {
		r.out.FinishNs = r.lastTok
	}
	r.out.Preemptions = int32(r.req.Preemptions)
	if s.obs != nil {
		s.obs.Closed(r.out, s.now)
	}
	s.peak.end(r, failed)
	s.finished++
	if s.progress != nil && s.finished%1000 == 0 {
		s.progress(s.finished, s.client.total())
	}
	if !failed && s.peak.final {
		// Completed: its last token was sampled, so no engine step, event
		// or list refers to it any more (a failed request's can: a KV
		// transfer or an admission still queued; the collector takes it;
		// so do peakTokens' lists until the peak's origin is known, for
		// the few requests that complete before).
		s.retired = append(s.retired, r)
	}
	s.client.done(s, r)
}

// reuse makes the records retired during the last event available to
// newRecord.
func (s *Sim) reuse() {
	for _, r := range s.retired {
		r.gen++
		r.api, r.core, r.out = nil, nil, nil
		s.free = append(s.free, r)
	}
	clear(s.retired)
	s.retired = s.retired[:0]
}

// expire is the client timeout: the client gives up and vLLM aborts the
// request, freeing its KV blocks. A record reused since (gen) completed.
func (s *Sim) expire(r *record, gen uint32) {
	if r.done || r.gen != gen {
		return
	}
	engine := -1
	if r.core != nil && r.core.Sched.Abort(&r.req) {
		engine = r.core.ID
	}
	if s.obs != nil {
		s.obs.Aborted(engine, int(r.plan.ID), s.now)
	}
	s.finish(r, true)
}

// newRecord creates the in-flight record of a planned request: a
// completed request's record when there is one, else a new one.
func (s *Sim) newRecord(p *workload.Request) *record {
	var r *record
	if n := len(s.free); n > 0 {
		r = s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
	} else {
		if len(s.slab) == 0 {
			s.slab = make([]record, recordChunk)
		}
		r = &s.slab[0]
		s.slab = s.slab[1:]
	}
	r.recordHead = recordHead{gen: r.gen}
	r.recordTail = recordTail{plan: p}
	setEngineRequest(&r.req, p) // its block and hash buffers serve again
	setEngineTurn(&r.req, p)
	r.req.Data = r
	if s.disagg != nil {
		r.phase = phasePrefill
		r.req.MaxTokens, r.req.HoldKV = 1, true
	}
	return r
}

// setEngineRequest makes r the engine's view of a planned request:
// lengths and content identities (r's block and hash buffers kept,
// engine.Request.Reset), but for a conversation turn's (setEngineTurn).
func setEngineRequest(r *engine.Request, p *workload.Request) {
	r.Reset()
	r.ID, r.PromptTokens, r.MaxTokens = int(p.ID), int(p.PromptTokens), int(p.OutputTokens)
	r.PrefixKey, r.PrefixTokens, r.ContentKey, r.UniquePrompt = p.PrefixKey, int(p.PrefixTokens), p.ContentKey, p.UniquePrompt
	r.Priority = p.Priority
}

// setEngineTurn gives r, after setEngineRequest, a conversation turn's
// prompt segments, reply key and reused tokens (workload.Request keeps
// them apart; other requests have none, and Reset left r's zero). Apart
// from setEngineRequest, which stays small enough to inline.
func setEngineTurn(r *engine.Request, p *workload.Request) {
	if p.HasTurn() {
		r.Segments, r.OutputKey, r.ReusedTokens = p.Segments(), p.OutputKey(), int(p.ReusedTokens())
	}
}

// recordChunk is how many records newRecord allocates at once.
const recordChunk = 256

// Router picks the engine core for a request.
type Router interface {
	Route(cores []*Core, r *record) int
}

// LeastLoaded routes to the core with the lowest 4 × waiting + running
// requests, lowest index on ties: the score vLLM's DP load balancer
// (DPLBAsyncMPClient) uses.
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
