package sim

import (
	"frontier/predictor"
	"frontier/sim/workload"
)

// Result is a finished simulation.
type Result struct {
	Requests []RequestRecord // in ID order
	ITL      *Histogram      // every inter-token gap, ns
	Steps    int64
	// Engines describes each engine core: id, pool, DP rank and steps.
	Engines  []EngineInfo
	EndNs    int64 // time of the last event
	Memory   predictor.MemoryPlan
	Coverage predictor.Coverage
	Notes    []string
	// MaxOutputTokensPerS is bench serve's max_output_tokens_per_s: the
	// most streamed chunks of successful requests in one second since the
	// earliest successful start (peakTokens).
	MaxOutputTokensPerS float64
	// Err is why the run stopped early (its clock would have passed
	// MaxClockNs, or a step was priced impossibly long); the records are
	// then partial and no figure of the run should be reported.
	Err error
	// Growth is DetectGrowth's verdict on the run, set by Diagnose for a
	// finite request rate (zero otherwise).
	Growth Growth
	// Classes are the workload's request classes (RequestRecord.Class
	// indexes them); nil when it has none.
	Classes []workload.Class
	// MaxModelLen is the max_model_len requests were checked against,
	// tokens (0 = none), and LongestRejected the most tokens (prompt +
	// output) a refused request asked for (0 when none was refused).
	MaxModelLen, LongestRejected int
	// APIServers is how many API server processes the requests entered
	// through (the entry pool's, every replica's).
	APIServers int
}

func (s *Sim) result() *Result {
	res := &Result{ITL: s.itl, EndNs: s.now, Classes: s.client.plan.Classes, Err: s.err, MaxOutputTokensPerS: s.peak.peak(), Requests: s.out,
		MaxModelLen: s.maxModelLen, LongestRejected: s.longestRejected, APIServers: len(s.pools[0].apis)}
	for _, c := range s.cores {
		res.Steps += c.Steps
		res.Engines = append(res.Engines, EngineInfo{ID: c.ID, Pool: c.Pool, DPRank: c.DPRank, Steps: c.Steps})
	}
	return res
}

// EngineInfo is one engine core of a run.
type EngineInfo struct {
	ID     int
	Pool   string // "" co-located | prefill | decode
	DPRank int
	Steps  int64 // steps (pipeline batches) it ran, dummy passes included
}
