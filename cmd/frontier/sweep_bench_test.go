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
