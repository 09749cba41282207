package main

import (
	"io"
	"testing"
)

// BenchmarkSweep is issue 11's sweep budget: 100 points of the default
// deployment (Llama-3.1-8B on one H200) at 2,000 requests each, all
// cores (goal: ≤ 10 s on 2 cores).
func BenchmarkSweep(b *testing.B) {
	for i := 0; i < b.N; i++ {
		root := newRoot()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"sweep", "--vary", "seed=1:100:1", "--num-prompts", "2000", "--quiet"})
		if err := root.Execute(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCapacity is issue 11's capacity budget: the default deployment
// under three SLOs (goal: ≤ 5 s on 2 cores).
func BenchmarkCapacity(b *testing.B) {
	for i := 0; i < b.N; i++ {
		root := newRoot()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"capacity", "--slo", "ttft:p99<=500ms", "--slo", "tpot:mean<=50ms", "--slo", "e2el:p90<=10s", "--quiet"})
		if err := root.Execute(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBestTopology70B is issue 11's topology budget: every
// deployment of Llama-3.1-70B on 8 H200s searched (goal: ≤ 60 s on 2
// cores).
func BenchmarkBestTopology70B(b *testing.B) {
	for i := 0; i < b.N; i++ {
		root := newRoot()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"capacity", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--hardware", "h200-sxm", "--gpus", "8",
			"--slo", "ttft:p99<=500ms,tpot:mean<=50ms", "--quiet"})
		if err := root.Execute(); err != nil {
			b.Fatal(err)
		}
	}
}
