package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Replicas is the added key `replicas`: Count independent copies of the
// deployment (separate `vllm serve` instances, each with its own TP/PP/DP
// engines, API servers and prefix cache) behind an external router, as
// llm-d, vLLM's production-stack or SGLang's router put in front of
// several servers. Distinct from data_parallel_size, whose ranks sit
// inside one `vllm serve` behind vLLM's own DP load balancer (`router`).
type Replicas struct {
	Count int `yaml:"count"` // ≥ 1
	// Router is the routing policy (sim/router registers the names:
	// round-robin, least-requests, session, prefix-cache, kv-usage, queue,
	// weighted); "" = round-robin.
	Router string `yaml:"router"`
	// Weights are the weighted router's scorers and weights, as llm-d's
	// scheduling profile (nil = llm-d's default profile).
	Weights map[string]float64 `yaml:"weights"`
	// MetricsIntervalMs is how often the router refreshes each replica's
	// reported metrics (llm-d's EPP --refresh-metrics-interval, 50 ms by
	// default); 0 = the router reads them live at every request. nil = 50.
	MetricsIntervalMs *float64 `yaml:"metrics_interval_ms"`
	// CountImplied is set (by frontier simulate) when router flags made
	// this block and no one gave a count: with one replica the run then
	// notes that the router routes nothing. Not a YAML key.
	CountImplied bool `yaml:"-"`
}

// DefaultMetricsIntervalMs is llm-d's EPP default
// --refresh-metrics-interval (gateway-api-inference-extension,
// DefaultRefreshMetricsInterval = 50 ms).
const DefaultMetricsIntervalMs = 50.0

// validateReplicas checks the replicas block.
func (s *Scenario) validateReplicas() error {
	r := s.Replicas
	if r == nil {
		return nil
	}
	if s.Disaggregation != nil {
		return fmt.Errorf("replicas: not for a disaggregated scenario; its pools' instances are behind the proxy (disaggregation.prefill.instances, disaggregation.decode.instances)")
	}
	if r.Count < 1 || r.Count > MaxEngines {
		return fmt.Errorf("replicas.count (--replicas): must be in [1, %d], got %d", MaxEngines, r.Count)
	}
	if s.Deployment != nil && s.Deployment.DataParallelSize*r.Count > MaxEngines {
		return fmt.Errorf("replicas.count (--replicas): %d replicas × data_parallel_size %d = %d engines, more than %d", r.Count, s.Deployment.DataParallelSize, r.Count*s.Deployment.DataParallelSize, MaxEngines)
	}
	if v := r.MetricsIntervalMs; v != nil && (!(*v >= 0) || *v > MaxSeconds*1e3 || math.IsInf(*v, 0)) {
		return fmt.Errorf("replicas.metrics_interval_ms (--router-metrics-interval-ms): must be in [0, %g] ms (0 = live), got %g", MaxSeconds*1e3, *v)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Weights)) { // the first bad one, the same every run
		if w := r.Weights[k]; !(w >= 0 && w <= 1e6) {
			return fmt.Errorf("replicas.weights (--router-weights): %s: must be in [0, 1e6], got %g", k, w)
		}
	}
	return nil
}
