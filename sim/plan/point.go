package plan

import (
	"math"

	"frontier/predictor"
	"frontier/scenarios"
	"frontier/sim"
)

// Outcome is one simulated point: what the run reported, or why vLLM
// (or the simulator) refused the deployment.
type Outcome struct {
	Scenario *scenarios.Scenario
	Setup    *sim.Setup  // nil when refused
	Result   *sim.Result // nil when refused
	Summary  sim.BenchSummary
	// RunNotes are sim.Diagnose's notes on this run (saturated API
	// server, load outgrowing the deployment); Result.Notes also holds
	// the setup's substitution notes.
	RunNotes []string
	// Refused is the refusal reason (sim.Resolve's error: vLLM's reason
	// where vLLM refuses), "" when the point ran.
	Refused string
	Signals Signals
}

// Signals are what a run shows about its binding limit, gathered from
// its steps.
type Signals struct {
	Preemptions int // requests preempted (recompute), summed over steps
	// PeakKV is the highest fraction of an engine's KV blocks in use in
	// any step, 0–1.
	PeakKV float64
	// Busy is each pool's engine utilisation, 0–1: step time summed over
	// its engines ÷ (engines × run length). Key "" for co-located.
	Busy map[string]float64
	// MergedChunks is the fraction of output tokens the API server sent
	// merged into an earlier SSE chunk (0 = never saturated).
	MergedChunks float64
	// APIBusy is the API servers' utilisation, 0–1: the work the host
	// model gives them (each sent request's intake, APIInServiceNs, and
	// each SSE chunk's streaming, APITokenNs) ÷ (servers × run length).
	APIBusy float64
}

// RunOptions are the summary settings of every point.
type RunOptions struct {
	Percentiles []float64 // --metric-percentiles (bench serve default: 99)
	Goodput     sim.SLO   // --goodput
	// Signals gathers Outcome.Signals (a step callback; a little slower).
	Signals bool
}

// Simulate runs one scenario as `frontier simulate` does (same summary,
// same diagnosis notes) and returns its outcome. A scenario sim.Resolve
// refuses is an Outcome with Refused set, not an error.
func Simulate(sc *scenarios.Scenario, opt RunOptions) *Outcome {
	o := &Outcome{Scenario: sc}
	st, err := sim.Resolve(sc)
	if err != nil {
		o.Refused = err.Error()
		return o
	}
	var so sim.Options
	pools := make([]poolSignals, len(st.Pools))
	for i, d := range st.Pools {
		pools[i] = poolSignals{name: d.Pool, blocks: d.Engine.NumBlocks}
	}
	if opt.Signals {
		so.StepSink = func(r sim.StepRecord) {
			o.Signals.Preemptions += r.Preempted
			p := poolNamed(pools, r.Pool)
			if p == nil {
				return
			}
			if r.PPStage <= 0 {
				p.busy += r.DurationNs
			}
			if p.blocks > 0 {
				o.Signals.PeakKV = max(o.Signals.PeakKV, float64(r.KVBlocksUsed)/float64(p.blocks))
			}
		}
	}
	s, err := st.NewSim(so)
	if err != nil {
		o.Refused = err.Error()
		return o
	}
	res := s.Run()
	if res.Err != nil {
		st.Release(s)
		o.Refused = res.Err.Error()
		return o
	}
	st.Finish(s, res)
	st.Release(s) // s prices no more steps: its memo tables go to the next probe
	o.Setup, o.Result = st, res
	rate := float64(sc.Workload.Arrivals.RequestRate)
	finite := len(sc.Workload.Arrivals.Stages) == 0 && sc.Workload.Dataset != "trace" && !math.IsInf(rate, 1)
	o.RunNotes = sim.Diagnose(res, finite)
	res.Notes = append(res.Notes, o.RunNotes...) // as simulate orders them
	pct := opt.Percentiles
	if len(pct) == 0 {
		pct = []float64{99}
	}
	o.Summary = sim.Summarize(res.Requests, res.ITL, pct, opt.Goodput)
	o.Summary.MaxOutputTokensPerS = res.MaxOutputTokensPerS
	if opt.Signals {
		o.Signals.Busy = map[string]float64{}
		for _, d := range st.Pools {
			engines := d.DP * d.Instances
			if res.EndNs > 0 && engines > 0 {
				o.Signals.Busy[d.Pool] = float64(poolNamed(pools, d.Pool).busy) / (float64(res.EndNs) * float64(engines))
			}
		}
		o.Signals.MergedChunks = mergedChunks(res)
		o.Signals.APIBusy = apiBusy(res, st.Host)
	}
	return o
}

// poolSignals is what a run's steps show of one pool: its engine step
// time summed (ns) and its blocks per engine.
type poolSignals struct {
	name   string
	blocks int
	busy   int64
}

// poolNamed is the pool of pools named name (a setup's pool names are
// distinct: "" co-located, prefill and decode), nil when none is. A scan
// of one or two names: the step sink asks once a step, where two map
// lookups by name were 1.8 % of a capacity search's CPU.
func poolNamed(pools []poolSignals, name string) *poolSignals {
	for i := range pools {
		if pools[i].name == name {
			return &pools[i]
		}
	}
	return nil
}

// mergedChunks is the fraction of output tokens that left the API server
// inside an earlier chunk: tokens − chunks (a first token and every
// inter-token gap are one chunk each), as sim.Diagnose counts them.
func mergedChunks(res *sim.Result) float64 {
	tokens, chunks := streamed(res)
	if tokens == 0 {
		return 0
	}
	return math.Max(0, float64(tokens-chunks)/float64(tokens))
}

// streamed is res's output tokens and the SSE chunks that carried them:
// each request's first token opens one, each inter-token gap another
// (a token merged into a queued chunk adds none).
func streamed(res *sim.Result) (tokens, chunks int64) {
	for i := range res.Requests {
		r := &res.Requests[i]
		tokens += int64(r.OutputTokens)
		if r.FirstTokenNs >= 0 {
			chunks++
		}
	}
	if res.ITL != nil {
		chunks += res.ITL.Count()
	}
	return tokens, chunks
}

// apiBusy is Signals.APIBusy of res, whose API servers work as host says:
// each sent request's intake, and each SSE chunk (streamed; a token
// merged into a queued chunk costs nothing more: sim's firstToken and
// stream) at APITokenNs.
func apiBusy(res *sim.Result, host predictor.HostModel) float64 {
	if res.APIServers == 0 || res.EndNs <= 0 {
		return 0
	}
	var work float64
	for i := range res.Requests {
		r := &res.Requests[i]
		if r.SendNs < 0 || r.Rejected {
			continue // never sent, or refused before the API server took it in
		}
		work += float64(host.APIInServiceNs(int(r.PromptTokens)))
	}
	_, chunks := streamed(res)
	work += float64(chunks) * host.APITokenNs
	return work / (float64(res.APIServers) * float64(res.EndNs))
}

// GPUs is the GPU count of a resolved setup: every pool's instances ×
// TP × PP × DP.
func GPUs(st *sim.Setup) int {
	n := 0
	for _, d := range st.Pools {
		n += d.GPUs() * d.Instances
	}
	return n
}
