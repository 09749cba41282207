package main

import (
	"strings"

	"github.com/spf13/pflag"

	"frontier/scenarios"
	"frontier/sim/engine"
)

// policyFlags are the scheduling and routing policy flags of
// `frontier simulate` (docs/POLICIES.md): vLLM's --scheduling-policy, and
// the replicas and router in front of them. Each is an ordinary flag with
// a YAML key, so `frontier sweep --vary` can vary it.
type policyFlags struct {
	schedulingPolicy string
}

// addPolicyFlags registers the policy flags.
func addPolicyFlags(fl *pflag.FlagSet, f *policyFlags) {
	fl.StringVar(&f.schedulingPolicy, "scheduling-policy", "fcfs", "engine scheduling policy: "+strings.Join(engine.PolicyNames(), " | ")+
		" (fcfs and priority as vLLM; sjf is not a vLLM policy, docs/POLICIES.md)")
}

// applyPolicyFlags writes the policy flags the user set into the scenario.
func applyPolicyFlags(sc *scenarios.Scenario, f *policyFlags, set func(string) bool) {
	if set("scheduling-policy") && sc.Deployment != nil {
		sc.Deployment.SchedulingPolicy = f.schedulingPolicy
	}
}
