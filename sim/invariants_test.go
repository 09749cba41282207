package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// stressScenario is a large random run on a small KV cache, so that
// chunked prefill, preemption and timeouts all happen.
func stressScenario() *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model = "meta-llama/Llama-3.1-8B-Instruct"
	d.MaxNumSeqs = 64
	d.MaxNumBatchedTokens = 512
	d.MaxModelLen = 4096
	blocks := 1200
	d.NumGPUBlocksOverride = &blocks
	timeout := 40.0
	return &scenarios.Scenario{
		Name: "stress", Hardware: "h100-sxm", Deployment: &d,
		Workload: scenarios.Workload{
			Seed: 3, Dataset: "random",
			Random:   &scenarios.RandomData{NumPrompts: 3000, InputLen: 800, OutputLen: 300, RangeRatio: 0.5},
			Arrivals: scenarios.Arrivals{RequestRate: 40, Burstiness: 1, TimeoutS: &timeout},
		},
	}
}

// Invariants of DESIGN.md on a large run: every request ends completed or
// failed; tokens are conserved; 0 < TTFT ≤ E2E; KV blocks in use never
// exceed capacity; a step never exceeds the token budget or max_num_seqs.
func TestInvariantsLargeRandomRun(t *testing.T) {
	sc := stressScenario()
	require.NoError(t, sc.Validate())
	var steps, preempted int
	var bad []StepRecord
	s, st, err := Build(sc, Options{StepSink: func(r StepRecord) {
		steps++
		preempted += r.Preempted
		if r.KVBlocksUsed > 1200 || r.PrefillTokens+r.DecodeTokens > 512 || r.Running > 64 || r.DurationNs <= 0 {
			bad = append(bad, r)
		}
	}})
	require.NoError(t, err)
	res := s.Run()
	assert.Empty(t, bad, "steps breaking capacity, budget or max_num_seqs")
	assert.Positive(t, preempted, "the run must exercise preemption")
	planned := map[int]int{}
	for _, stg := range st.Plan.Stages {
		for _, r := range stg.Requests {
			planned[int(r.ID)] = int(r.OutputTokens)
		}
	}
	require.Len(t, res.Requests, 3000)
	var failed int
	for _, r := range res.Requests {
		if r.Failed {
			failed++
			assert.Less(t, int(r.OutputTokens), planned[int(r.ID)])
			assert.Equal(t, int64(40e9), r.E2ENs(), "fails exactly at the timeout")
			continue
		}
		assert.Equal(t, planned[int(r.ID)], int(r.OutputTokens), "request %d tokens", r.ID)
		assert.Positive(t, r.TTFTNs())
		assert.LessOrEqual(t, r.TTFTNs(), r.E2ENs())
		assert.LessOrEqual(t, r.CachedTokens, r.PromptTokens-1)
	}
	t.Logf("%d steps, %d preemptions, %d failed", steps, preempted, failed)
	assert.Zero(t, s.cores[0].Sched.Pool.NumUsed(), "all blocks free at the end")
}

func TestDeterministic(t *testing.T) {
	run := func() []RequestRecord {
		sc := stressScenario()
		sc.Workload.Random.NumPrompts = 300
		s, _, err := Build(sc, Options{})
		require.NoError(t, err)
		return s.Run().Requests
	}
	assert.Equal(t, run(), run())
}

func loadGate(t testing.TB, name string) *scenarios.Scenario {
	sc, err := scenarios.Load("../scenarios/gate/" + name + ".yaml")
	require.NoError(t, err)
	require.NoError(t, sc.Validate())
	return sc
}

// The shared H100 Llama-2-7b codegen run: 9,000 requests over two stages,
// all completed, none failed, per stage counts as sent.
func TestCodegenRunCompletes(t *testing.T) {
	s, st, err := Build(loadGate(t, "20260217-155451-llama-2-7b-tp1-codegen"), Options{})
	require.NoError(t, err)
	res := s.Run()
	assert.InEpsilon(t, 7463, st.Memory.NumBlocks, 0.02)
	perStage := map[int]int{}
	for _, r := range res.Requests {
		require.False(t, r.Failed)
		assert.Equal(t, int32(247), r.OutputTokens)
		perStage[int(r.Stage)]++
	}
	assert.Equal(t, map[int]int{0: 3000, 1: 6000}, perStage)
	sum := Summarize(res.Requests, res.ITL, []float64{99}, SLO{})
	assert.Equal(t, 9000, sum.Completed)
	assert.False(t, math.IsNaN(sum.Latencies["mean_tpot_ms"]))
}

// benchRuns resolves sc once (tables loaded outside the timing) and then
// builds and runs a fresh simulation per iteration, checking the request
// count.
func benchRuns(b *testing.B, sc *scenarios.Scenario, requests int) {
	require.NoError(b, sc.Validate())
	st, err := Resolve(sc)
	require.NoError(b, err)
	benchSetup(b, st, requests)
}

// benchSetup builds and runs a fresh simulation of st per iteration,
// checking the request count.
func benchSetup(b *testing.B, st *Setup, requests int) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := st.NewSim(Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res := s.Run(); len(res.Requests) != requests {
			b.Fatalf("%d requests, want %d", len(res.Requests), requests)
		}
	}
}

// BenchmarkSimulateCodegen simulates the 9,000-request codegen run.
func BenchmarkSimulateCodegen(b *testing.B) {
	benchRuns(b, loadGate(b, "20260217-155451-llama-2-7b-tp1-codegen"), 9000)
}

// BenchmarkDP8EP8Qwen3 simulates Qwen3-30B-A3B on 8 H200s, DP 8 with
// expert parallelism (8 engine cores in lockstep), serving 100,000 random
// requests at 60 req/s.
func BenchmarkDP8EP8Qwen3(b *testing.B) {
	sc, err := scenarios.Load("../scenarios/examples/qwen3-30b-a3b-h200-dp8-ep.yaml")
	require.NoError(b, err)
	sc.Workload.Random.NumPrompts = 100000
	sc.Workload.Arrivals.RequestRate = 60
	benchRuns(b, sc, 100000)
}
