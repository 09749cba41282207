package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// Randomized deployments (TP/PP/DP, MoE lockstep, async on/off, prefix
// caching on/off, tiny KV caches that force preemption, timeouts,
// disaggregation): every run terminates, no request is lost, completed
// requests get exactly their output tokens, 0 < TTFT ≤ E2E, and every
// KV block is free at the end.
func TestRandomDeploymentsKeepInvariants(t *testing.T) {
	if testing.Short() {
		t.Skip("many small runs")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var preemptions, failed, completed int
	for i := 0; i < 60; i++ {
		moe := rng.IntN(3) == 0
		d := scenarios.DefaultDeployment()
		d.Model = "meta-llama/Llama-3.1-8B-Instruct"
		if moe {
			d.Model = "mistralai/Mixtral-8x7B-v0.1"
			d.TensorParallelSize = 2
			d.EnableExpertParallel = rng.IntN(2) == 0
		}
		d.PipelineParallelSize = 1 + rng.IntN(2)
		d.DataParallelSize = 1 + rng.IntN(3)
		d.MaxNumSeqs = 8 + rng.IntN(64)
		d.MaxNumBatchedTokens = 256 + rng.IntN(1024)
		d.MaxModelLen = 2048
		blocks := 130 + rng.IntN(400) // ≥ one 2,048-token sequence (vLLM refuses less)
		d.NumGPUBlocksOverride = &blocks
		async, caching := rng.IntN(2) == 0, rng.IntN(2) == 0
		d.AsyncScheduling, d.EnablePrefixCaching = &async, &caching
		timeout := 5 + rng.Float64()*60
		sc := &scenarios.Scenario{Name: "stress", Hardware: "h100-sxm", Deployment: &d,
			Workload: scenarios.Workload{Seed: int64(i), Dataset: "random",
				Random:   &scenarios.RandomData{NumPrompts: 150, InputLen: 300, OutputLen: 80, RangeRatio: 0.8},
				Arrivals: scenarios.Arrivals{RequestRate: scenarios.Rate(5 + rng.Float64()*40), Burstiness: 1, TimeoutS: &timeout}}}
		if rng.IntN(4) == 0 && !moe {
			p := d
			p.PipelineParallelSize, p.DataParallelSize = 1, 1
			sc.Deployment = nil
			sc.Disaggregation = &scenarios.Disaggregation{Prefill: scenarios.Pool{Instances: 1 + rng.IntN(2), Deployment: p},
				Decode: scenarios.Pool{Instances: 1, Deployment: p}}
		}
		name := fmt.Sprintf("run %d (moe %v pp %d dp %d async %v caching %v blocks %d disagg %v)",
			i, moe, d.PipelineParallelSize, d.DataParallelSize, async, caching, blocks, sc.Disaggregation != nil)
		require.NoError(t, sc.Validate(), name)
		s, st, err := Build(sc, Options{})
		require.NoError(t, err, name)
		res := s.Run()
		want := map[int]int{}
		for _, stg := range st.Plan.Stages {
			for _, r := range stg.Requests {
				want[int(r.ID)] = int(r.OutputTokens)
			}
		}
		require.Len(t, res.Requests, len(want), name)
		for _, r := range res.Requests {
			require.GreaterOrEqual(t, r.FinishNs, int64(0), "%s: request %d never ended", name, r.ID)
			preemptions += int(r.Preemptions)
			if r.Failed {
				failed++
				continue
			}
			completed++
			require.Equal(t, want[int(r.ID)], int(r.OutputTokens), "%s: request %d tokens", name, r.ID)
			require.Positive(t, r.TTFTNs(), name)
			require.LessOrEqual(t, r.TTFTNs(), r.E2ENs(), name)
		}
		for _, c := range s.cores {
			require.Zero(t, c.Sched.Pool.NumUsed(), "%s: core %d holds blocks at the end", name, c.ID)
		}
	}
	t.Logf("%d completed, %d failed, %d preemptions", completed, failed, preemptions)
	require.Positive(t, preemptions, "the runs must exercise preemption")
	require.Positive(t, failed, "the runs must exercise timeouts")
}
