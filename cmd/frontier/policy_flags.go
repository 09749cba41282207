package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"frontier/scenarios"
	"frontier/sim/engine"
	"frontier/sim/router"
)

// policyFlags are the scheduling and routing policy flags of
// `frontier simulate` (docs/POLICIES.md): vLLM's --scheduling-policy, and
// the replicas and the router in front of them. Each is an ordinary flag
// with a YAML key, so `frontier sweep --vary` can vary it.
type policyFlags struct {
	schedulingPolicy string
	replicas         int
	router           string
	weights          []string
	metricsMs        float64
}

// routerFlags are the flags that edit the scenario's replicas block.
var routerFlags = []string{"replicas", "router", "router-weights", "router-metrics-interval-ms"}

// addPolicyFlags registers the policy flags.
func addPolicyFlags(fl *pflag.FlagSet, f *policyFlags) {
	fl.StringVar(&f.schedulingPolicy, "scheduling-policy", "fcfs", "engine scheduling policy: "+strings.Join(engine.PolicyNames(), " | ")+
		" (fcfs and priority as vLLM; sjf is not a vLLM policy, docs/POLICIES.md)")
	fl.IntVar(&f.replicas, "replicas", 1, "independent vllm serve instances of the deployment behind a router (not DP ranks: each has its own engines, API servers and prefix cache)")
	fl.StringVar(&f.router, "router", "round-robin", "the router in front of the --replicas: "+strings.Join(router.Names(), " | ")+" (docs/POLICIES.md; not DP ranks, which vLLM's own balancer spreads: with one replica it routes nothing, and a note says so)")
	fl.StringSliceVar(&f.weights, "router-weights", nil, "the weighted router's scorers, NAME=WEIGHT with NAME "+strings.Join(router.ScorerNames(), ", ")+
		" (default: llm-d's profile prefix-cache=3,queue=2,kv-usage=2)")
	fl.Float64Var(&f.metricsMs, "router-metrics-interval-ms", scenarios.DefaultMetricsIntervalMs, "how often the router refreshes the replicas' reported metrics, ms (llm-d's --refresh-metrics-interval; 0 = live)")
}

// applyPolicyFlags writes the policy flags the user set into the scenario.
func applyPolicyFlags(sc *scenarios.Scenario, f *policyFlags, set func(string) bool) error {
	if set("scheduling-policy") && sc.Deployment != nil {
		sc.Deployment.SchedulingPolicy = f.schedulingPolicy
	}
	if !anySet(set, routerFlags...) {
		return nil
	}
	if sc.Disaggregation != nil {
		return fmt.Errorf("%s: not for a disaggregated scenario; its pools' instances are behind the proxy (disaggregation.*.instances)", strings.Join(setFlags(set, routerFlags), ", "))
	}
	if sc.Replicas == nil {
		sc.Replicas = &scenarios.Replicas{Count: 1, CountImplied: !set("replicas")}
	}
	r := sc.Replicas
	if set("replicas") {
		r.Count = f.replicas
	}
	if set("router") {
		r.Router = f.router
	}
	if set("router-metrics-interval-ms") {
		v := f.metricsMs
		r.MetricsIntervalMs = &v
	}
	if set("router-weights") {
		w, err := parseWeights(f.weights)
		if err != nil {
			return err
		}
		r.Weights = w
		if !set("router") && r.Router == "" {
			r.Router = "weighted"
		}
	}
	return nil
}

// parseWeights reads --router-weights NAME=WEIGHT pairs.
func parseWeights(pairs []string) (map[string]float64, error) {
	w := map[string]float64{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || k == "" {
			return nil, fmt.Errorf("--router-weights: each is NAME=WEIGHT with NAME one of %s and WEIGHT a number, got %q", strings.Join(router.ScorerNames(), ", "), p)
		}
		if old, dup := w[k]; dup {
			return nil, fmt.Errorf("--router-weights: scorer %q given twice (%s=%g, %s)", k, k, old, strings.TrimSpace(p))
		}
		w[k] = x
	}
	return w, nil
}
