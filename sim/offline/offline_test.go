package offline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/workload"
)

func TestLLMClassBatchDefaults(t *testing.T) {
	for _, name := range []string{"h100-sxm", "h200-sxm", "h800"} {
		hw, err := profiles.LookupHardware(name)
		require.NoError(t, err)
		tokens, seqs := LLMClassBatchDefaults(hw)
		assert.Equal(t, [2]int{16384, 1024}, [2]int{tokens, seqs}, name)
	}
	a100 := profiles.Hardware{Name: "a100-sxm", GPUName: "NVIDIA A100-SXM4-80GB", MemCapacityBytes: 80 << 30}
	tokens, seqs := LLMClassBatchDefaults(a100)
	assert.Equal(t, [2]int{8192, 256}, [2]int{tokens, seqs}, "A100s keep the small defaults (vLLM PR #17885)")
	small := profiles.Hardware{Name: "l40s", GPUName: "NVIDIA L40S", MemCapacityBytes: 48 << 30}
	tokens, seqs = LLMClassBatchDefaults(small)
	assert.Equal(t, [2]int{8192, 256}, [2]int{tokens, seqs}, "under 70 GiB")
}

// setup resolves Llama-3.1-8B on one H200 with the given prefix caching.
func setup(t *testing.T, caching bool) *sim.Setup {
	t.Helper()
	d := scenarios.DefaultDeployment()
	d.Model, d.EnablePrefixCaching, d.MaxModelLen = "meta-llama/Llama-3.1-8B-Instruct", &caching, 4096
	sc := &scenarios.Scenario{Hardware: "h200-sxm", Deployment: &d, Workload: scenarios.Workload{
		Dataset: "random", Random: &scenarios.RandomData{NumPrompts: 1, InputLen: 8, OutputLen: 2}, Arrivals: scenarios.DefaultArrivals()}}
	require.NoError(t, sc.Validate())
	st, err := sim.Resolve(sc)
	require.NoError(t, err)
	return st
}

// Offline, a request's time is the engine's alone: sent at 0, its first
// token at the end of the step that sampled it, its last at the end of
// its last step, even with API-server and client terms of a second each
// in the host model. Served (frontier simulate), the same request pays
// them.
func TestOfflineCarriesNoAPIServerTime(t *testing.T) {
	st := setup(t, true)
	h := st.Host
	h.TokenizePerTokenNs, h.RequestOverheadNs, h.StreamPerTokenNs, h.APIRequestNs, h.APITokenNs = 1e6, 1e9, 1e9, 1e9, 1e9
	st = st.WithHost(h)
	plan := &workload.Plan{Stages: []workload.Stage{{Requests: []workload.Request{{PromptTokens: 100, OutputTokens: 3, ContentKey: 1, UniquePrompt: true}}}}}
	var ends []int64
	res, err := Run(st, plan, sim.Options{StepSink: func(r sim.StepRecord) { ends = append(ends, r.StartNs+r.DurationNs) }})
	require.NoError(t, err)
	r := res.Requests[0]
	require.Len(t, ends, 3, "one prefill step, two decode steps")
	assert.Zero(t, r.SendNs)
	assert.Equal(t, ends[0], r.FirstTokenNs, "first token when its step ends")
	assert.Equal(t, ends[2], r.FinishNs)
	assert.Less(t, r.FinishNs, int64(100e6), "no second of API-server time")

	served := *st
	served.Plan = plan
	s, err := served.NewSim(sim.Options{})
	require.NoError(t, err)
	online := s.Run().Requests[0]
	assert.Greater(t, online.TTFTNs(), int64(1e9), "served, the request pays the API server")
}

// bench latency: with prefix caching off (its default) every iteration
// does the same work, so every latency is the same, and each is the sum
// of its iteration's back-to-back steps (1 prefill + 127 decodes). With
// caching on, iterations after the first hit the first 16 tokens of each
// 32-token prompt (⌊31 / 16⌋ blocks) and are faster.
func TestLatencyIterations(t *testing.T) {
	cfg := LatencyConfig{InputLen: 32, OutputLen: 128, BatchSize: 8, NumItersWarmup: 2, NumIters: 3}
	var steps []sim.StepRecord
	res, err := Run(setup(t, false), LatencyPlan(cfg), sim.Options{StepSink: func(r sim.StepRecord) { steps = append(steps, r) }})
	require.NoError(t, err)
	lat := Latencies(res, cfg)
	require.Len(t, lat, 3)
	assert.Equal(t, lat[0], lat[1])
	assert.Equal(t, lat[0], lat[2])
	require.Len(t, steps, 5*128, "each iteration: one step per output token")
	var sum int64
	for _, s := range steps[4*128:] {
		sum += s.DurationNs
	}
	assert.Equal(t, float64(sum)/1e9, lat[2], "the iteration is its steps, back to back")
	st := Stats(lat)
	assert.Equal(t, lat[0], st.Avg)
	assert.Zero(t, st.Std)
	assert.Equal(t, []float64{lat[0], lat[0], lat[0], lat[0], lat[0], lat[0]}, st.Percentiles)

	res, err = Run(setup(t, true), LatencyPlan(cfg), sim.Options{})
	require.NoError(t, err)
	for _, r := range res.Requests {
		assert.Equal(t, map[bool]int32{true: 0, false: 16}[r.Stage == 0], r.CachedTokens, "request %d", r.ID)
	}
	cached := Latencies(res, cfg)
	assert.Less(t, cached[0], lat[0])
}

func TestStatsByHand(t *testing.T) {
	s := Stats([]float64{4, 1, 3, 2})
	assert.Equal(t, 2.5, s.Avg)
	assert.InDelta(t, 1.118033988749895, s.Std, 1e-15, "population std (np.std)")
	// np.percentile([1,2,3,4], [10,25,50,75,90,99]) = 1.3, 1.75, 2.5, 3.25, 3.7, 3.97
	for i, want := range []float64{1.3, 1.75, 2.5, 3.25, 3.7, 3.97} {
		assert.InDelta(t, want, s.Percentiles[i], 1e-12)
	}
}

// bench throughput: every prompt at t = 0; the elapsed time is the last
// finish; tokens per second count prompt and output tokens.
func TestThroughputFigures(t *testing.T) {
	res := &sim.Result{Requests: []sim.RequestRecord{
		{SendNs: 0, FinishNs: 2e9, PromptTokens: 100, OutputTokens: 10},
		{SendNs: 0, FinishNs: 4e9, PromptTokens: 300, OutputTokens: 30},
	}}
	got := Throughput(res)
	assert.Equal(t, ThroughputStats{ElapsedS: 4, NumRequests: 2, PromptTokens: 400, OutputTokens: 40, TotalTokens: 440,
		RequestsPerS: 0.5, TokensPerS: 110, OutputTokensPerS: 10}, got)
}

func TestCheckRefusals(t *testing.T) {
	plan := LatencyPlan(LatencyConfig{InputLen: 4000, OutputLen: 128, BatchSize: 1, NumIters: 1})
	err := CheckLengths(plan, 4096)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Please ensure that max_model_len is greater than the sum of prompt_len and expected_output_len")
	st := setup(t, true)
	st.Deployment = &sim.Deployment{DP: 2}
	assert.ErrorContains(t, Check(st), "Data parallel is only supported with external launcher mode")
}

// The decode macro-step changes nothing offline either: bench latency's
// iterations (prefix caching on, so later iterations hit) and bench
// throughput's one batch give the same requests and steps step by step.
func TestOfflineMacroStepEquivalence(t *testing.T) {
	for _, plan := range []*workload.Plan{
		LatencyPlan(LatencyConfig{InputLen: 48, OutputLen: 40, BatchSize: 6, NumItersWarmup: 1, NumIters: 3}),
		{Stages: []workload.Stage{{Requests: func() []workload.Request {
			var reqs []workload.Request
			for i := range 60 {
				reqs = append(reqs, workload.Request{ID: int32(i), PromptTokens: int32(100 + 37*i), OutputTokens: int32(5 + i%23), ContentKey: uint64(i + 1), UniquePrompt: true})
			}
			return reqs
		}()}}},
	} {
		var runs [2][]sim.StepRecord
		var reqs [2][]sim.RequestRecord
		for i, stepByStep := range []bool{true, false} {
			res, err := Run(setup(t, true), plan, sim.Options{StepByStep: stepByStep, StepSink: func(r sim.StepRecord) { runs[i] = append(runs[i], r) }})
			require.NoError(t, err)
			reqs[i] = res.Requests
		}
		require.NotEmpty(t, runs[0])
		assert.Equal(t, runs[0], runs[1], "steps")
		assert.Equal(t, reqs[0], reqs[1], "requests")
	}
}
