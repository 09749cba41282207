package sim

import "frontier/sim/engine"

// Observer sees inside a run as it happens, for reports (sim/report:
// timelines, Prometheus metrics, traces). Every method is called at the
// simulated time it carries, in non-decreasing time order over the whole
// run. A nil Options.Observer costs one pointer test per step and per
// request event; nothing is called per token.
//
// Observers read; they must not change what they are shown.
type Observer interface {
	// StageStarted: workload stage k began sending at ns.
	StageStarted(k int, ns int64)
	// Queued: request rec.ID entered engine core engine's waiting queue at
	// ns (vLLM's QUEUED event; for a disaggregated request, once on its
	// prefill engine and once on its decode engine). rec is the client's
	// record so far (SendNs, PromptTokens, Stage are set).
	Queued(engine int, rec *RequestRecord, ns int64)
	// Preempted: request id was preempted by recompute on engine at ns
	// (the schedule call that preempted it).
	Preempted(engine, id int, ns int64)
	// StepRecord: one step record, as Options.StepSink gets it (one per
	// pipeline stage under PP), at the step's end. rec is valid during the
	// call only.
	StepRecord(rec *StepRecord)
	// StepDone: engine core engine applied step st at ns (its end): the
	// step's items show their requests' state after it (a request the step
	// finished has Status Finished and NumOutput = MaxTokens; a token was
	// produced for an item that Samples when its request is Running or
	// Finished), and after is the scheduler's state once finished requests
	// left (what vLLM's SchedulerStats report for the step).
	StepDone(engine int, st *engine.Step, after EngineState, ns int64)
	// Aborted: the client gave up on request id at ns (timeout) while it
	// was on engine (-1 when it had reached no engine).
	Aborted(engine, id int, ns int64)
	// Closed: the request ended at ns, completed (its last token left the
	// engine at ns; the client receives it at rec.FinishNs) or failed; rec
	// is final. A request completed by a step closes before that step's
	// StepDone.
	Closed(rec *RequestRecord, ns int64)
}

// EngineState is one engine core's scheduler state at an instant.
type EngineState struct {
	Running, Waiting int // requests (vllm:num_requests_running, _waiting)
	// KVBlocks is num_gpu_blocks (the null block included); KVBlocksHeld
	// the blocks requests hold (KVBlocks − 1 − free).
	KVBlocks, KVBlocksHeld int
	// KVUsage is vLLM's vllm:kv_cache_usage_perc: 1 − free ÷ (KVBlocks − 1).
	KVUsage float64
}

func stateOf(sc *engine.Scheduler) EngineState {
	return EngineState{
		Running: sc.NumRunning(), Waiting: sc.NumWaiting(),
		KVBlocks: sc.Pool.NumBlocks(), KVBlocksHeld: sc.Pool.NumUsed(), KVUsage: sc.Pool.Usage(),
	}
}

// observe hooks the observer into the cores' schedulers (preemptions).
func (s *Sim) observe(o Observer) {
	s.obs = o
	if o == nil {
		return
	}
	for _, c := range s.cores {
		id := c.ID
		c.Sched.OnPreempt = func(r *engine.Request) { o.Preempted(id, r.ID, s.now) }
	}
}

// stepDone reports a core's applied step to the observer.
func (c *Core) stepDone(s *Sim, st *engine.Step) {
	if s.obs != nil { // inlined: most runs have no observer
		c.observeStep(s, st)
	}
}

// observeStep shows the observer step st's end.
func (c *Core) observeStep(s *Sim, st *engine.Step) {
	s.obs.StepDone(c.ID, st, stateOf(c.Sched), s.now)
}

// EngineSpec describes one engine core for reports.
type EngineSpec struct {
	ID     int
	Pool   string // "" co-located | prefill | decode
	DPRank int
	// Instance is the engine's vllm serve within its pool: the replica
	// (--replicas) of a co-located deployment, the instance of a
	// disaggregated pool; Instances is how many the pool has.
	Instance, Instances int
	PP                  int // pipeline stages
	// KVBlocks is num_gpu_blocks (the null block included); MaxModelLen
	// its max_model_len, tokens.
	KVBlocks, MaxModelLen int
}

// EngineSpecs lists the simulation's engine cores in ID order.
func (s *Sim) EngineSpecs() []EngineSpec {
	out := make([]EngineSpec, len(s.cores))
	instance := map[string]int{} // a pool's engines are consecutive, each instance's DP ranks from 0
	for i, c := range s.cores {
		cfg := c.Sched.Config()
		if _, seen := instance[c.Pool]; seen && c.DPRank == 0 {
			instance[c.Pool]++
		} else if !seen {
			instance[c.Pool] = 0
		}
		out[i] = EngineSpec{ID: c.ID, Pool: c.Pool, DPRank: c.DPRank, Instance: instance[c.Pool], PP: max(c.PP, 1), KVBlocks: cfg.NumBlocks, MaxModelLen: cfg.MaxModelLen}
	}
	for i := range out {
		out[i].Instances = instance[out[i].Pool] + 1
	}
	return out
}
