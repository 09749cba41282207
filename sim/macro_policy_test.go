package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim/router"
)

// policyCases are the macro-step harness's scheduling and routing policy
// workloads: the chat-4-replicas example (sessions, 8 system prompts)
// behind every registered router, with metrics read live and refreshed
// every 7 ms (refresh boundaries fall inside macro-steps, whose steps
// change no reported metric); and the stress workload (small KV cache,
// preemption, timeouts) under priority with a class mix and under sjf,
// async on and off.
func policyCases(t testing.TB) []equivalenceCase {
	var out []equivalenceCase
	for _, name := range router.Names() {
		for _, ms := range []float64{0, 7} {
			sc, err := scenarios.Load("../scenarios/examples/llama-3.1-8b-h200-chat-4-replicas.yaml")
			require.NoError(t, err)
			shrink(sc, 300)
			interval := ms
			sc.Replicas.Router, sc.Replicas.MetricsIntervalMs = name, &interval
			out = append(out, equivalenceCase{"router " + name + " metrics every " + map[float64]string{0: "request (live)", 7: "7 ms"}[ms], sc})
		}
	}
	for _, pol := range []string{"priority", "sjf"} {
		for _, async := range []bool{false, true} {
			sc := stressScenario()
			sc.Workload.Random.NumPrompts = 400
			sc.Deployment.SchedulingPolicy = pol
			sc.Deployment.AsyncScheduling = &async
			if pol == "priority" {
				sc.Workload.Classes = []scenarios.RequestClass{{Name: "hi", Priority: 0, Share: 0.3}, {Name: "lo", Priority: 2, Share: 0.7}}
			}
			out = append(out, equivalenceCase{"stress under " + pol, sc})
		}
	}
	return out
}
