package sim

import (
	"testing"

	"frontier/scenarios"
)

// millionScenario is 10⁶ random requests of 512 prompt and 128 output
// tokens on the default deployment (Llama-3.1-8B, one H200) at 40 req/s,
// a rate it sustains (TTFT stays ~50 ms, TPOT ~10 ms; 60 req/s overloads
// it): ~7 simulated hours, ~50 requests in flight.
func millionScenario(n int) *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model = "meta-llama/Llama-3.1-8B-Instruct"
	return &scenarios.Scenario{
		Name: "million", Hardware: "h200-sxm", Deployment: &d,
		Workload: scenarios.Workload{
			Dataset:  "random",
			Random:   &scenarios.RandomData{NumPrompts: n, InputLen: 512, OutputLen: 128},
			Arrivals: scenarios.Arrivals{RequestRate: 40, Burstiness: 1},
		},
	}
}

// BenchmarkMillion simulates millionScenario: run time, and (with
// /usr/bin/time -v on the test binary) peak memory, which must stay
// O(requests in flight) plus a record per finished request.
func BenchmarkMillion(b *testing.B) {
	benchRuns(b, millionScenario(1_000_000), 1_000_000)
}
