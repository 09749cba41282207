package plan

import (
	"testing"

	"frontier/scenarios"
)

// probeScenario is one capacity probe as `frontier capacity` runs it: n
// random 512/128 requests at rate req/s (seed 0) on one h200-sxm engine
// of model with tensor_parallel_size tp.
func probeScenario(model string, tp, n int, rate float64) *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model, d.TensorParallelSize = model, tp
	return &scenarios.Scenario{
		Name: "probe", Hardware: "h200-sxm", Deployment: &d,
		Workload: scenarios.Workload{
			Dataset:  "random",
			Random:   &scenarios.RandomData{NumPrompts: n, InputLen: 512, OutputLen: 128},
			Arrivals: scenarios.Arrivals{RequestRate: scenarios.Rate(rate), Burstiness: 1},
		},
	}
}

// benchProbe measures Simulate of one probe with signals, as a capacity
// search's Prober runs it (Resolve, NewSim, Run, summary): ns/op, B/op
// and allocs/op are one probe's.
func benchProbe(b *testing.B, sc *scenarios.Scenario) {
	if o := Simulate(sc, RunOptions{Signals: true}); o.Refused != "" {
		b.Fatal(o.Refused)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Simulate(sc, RunOptions{Signals: true})
	}
}

// BenchmarkCapacityProbe is a 100-request probe of Llama-3.1-8B on one
// H200 at 20 req/s (below its capacity: a steady run).
func BenchmarkCapacityProbe(b *testing.B) {
	benchProbe(b, probeScenario("meta-llama/Llama-3.1-8B-Instruct", 1, 100, 20))
}

// BenchmarkCapacityProbeMoE is the same probe of DeepSeek-V2-Lite (MLA,
// 64 routed experts) on TP 2: its weights list is long.
func BenchmarkCapacityProbeMoE(b *testing.B) {
	benchProbe(b, probeScenario("deepseek-ai/DeepSeek-V2-Lite", 2, 100, 20))
}
