package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
	"frontier/profiles"
	"frontier/scenarios"
)

// defaultOn is the embedded default scenario (Llama-3.1-8B bf16, 1000
// random prompts of 512 in / 128 out at rate inf) on hardware.
func defaultOn(hardware string) *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model = "meta-llama/Llama-3.1-8B-Instruct"
	return &scenarios.Scenario{Name: "default", Hardware: hardware, Deployment: &d, Workload: scenarios.Workload{
		Dataset:  "random",
		Random:   &scenarios.RandomData{NumPrompts: 1000, InputLen: 512, OutputLen: 128},
		Arrivals: scenarios.DefaultArrivals(),
	}}
}

// The default workload runs on every new GPU preset, with vllm serve's
// batch defaults for that GPU, and completes every request.
func TestDefaultWorkloadOnNewGPUs(t *testing.T) {
	for _, hw := range []string{"b200-sxm", "gb200", "a100-sxm", "l40s", "rtx-pro-6000"} {
		t.Run(hw, func(t *testing.T) {
			s, st, err := Build(defaultOn(hw), Options{})
			require.NoError(t, err)
			tokens, seqs := st.Hardware.ServeBatchDefaults()
			assert.Equal(t, seqs, st.Engine.MaxNumSeqs)
			assert.Equal(t, tokens, st.Engine.MaxNumBatchedTokens)
			res := s.Run()
			done := 0
			for _, r := range res.Requests {
				if !r.Failed && r.FinishNs > 0 {
					done++
				}
			}
			assert.Equal(t, 1000, done)
		})
	}
	_, st, err := Build(defaultOn("a100-sxm"), Options{})
	require.NoError(t, err)
	assert.Equal(t, [2]int{2048, 256}, [2]int{st.Engine.MaxNumBatchedTokens, st.Engine.MaxNumSeqs}, "vLLM's A100 exception")
}

// TP all-reduces: vLLM's custom all-reduce on NVLink and on two PCIe
// GPUs; NCCL on more than two PCIe-only GPUs and across GB200 trays.
func TestCustomAllReduceRule(t *testing.T) {
	cases := []struct {
		hw       string
		tp       int
		ncclOnly bool
	}{{"h100-sxm", 8, false}, {"l40s", 2, false}, {"l40s", 4, true}, {"rtx-pro-6000", 8, true}, {"gb200", 4, false}, {"gb200", 8, true}}
	for _, c := range cases {
		sc := defaultOn(c.hw)
		sc.Deployment.TensorParallelSize = c.tp
		sc.Deployment.MaxModelLen = 4096
		sc.Workload.Random.NumPrompts = 2
		s, st, err := Build(sc, Options{})
		require.NoError(t, err, "%s TP%d", c.hw, c.tp)
		off, why := predictor.CustomAllReduceOff(st.Hardware, c.tp)
		assert.Equal(t, c.ncclOnly, off, "%s TP%d", c.hw, c.tp)
		res := s.Run()
		st.Finish(s, res)
		if off {
			assert.Contains(t, res.Notes, why, "%s TP%d", c.hw, c.tp)
		}
	}
}

// --vllm-version picks an embedded set; the deployment prices from it.
func TestVLLMVersionPicksTables(t *testing.T) {
	sc := defaultOn("h100-sxm")
	st, err := Resolve(sc)
	require.NoError(t, err)
	assert.Equal(t, "0.14.0", st.Tables.Version)
	assert.Equal(t, 9240, gemmRows(t, st.Tables))
	sc.VLLMVersion = "0.24.0"
	st, err = Resolve(sc)
	require.NoError(t, err)
	assert.Equal(t, "0.24.0", st.Tables.Version)
	assert.Equal(t, 35742, gemmRows(t, st.Tables), "vLLM 0.24.0's bfloat16 GEMM rows (0.14.0 has 9,240)")
}

// gemmRows counts t's GEMM rows, decoded or not (profiles.LazyTablesFor).
func gemmRows(t *testing.T, tb *profiles.Tables) int {
	n := 0
	require.NoError(t, tb.EachGemm(func(*profiles.GemmRow) { n++ }))
	return n
}

// A deployment on the embedded tables keeps their GEMM and attention
// rows in the rows form (its predictor's grids are built from it); one
// on --profile-dir tables, or the regression predictor, decodes them.
func TestDeploymentTablesStayInRowsForm(t *testing.T) {
	st, err := Resolve(defaultOn("h200-sxm"))
	require.NoError(t, err)
	assert.Nil(t, st.Tables.Gemm)
	assert.Nil(t, st.Tables.ContextAttn)
	assert.Equal(t, 35742, gemmRows(t, st.Tables))
	sc := defaultOn("h200-sxm")
	sc.Predictor = predictor.PredictorRegression
	st, err = Resolve(sc)
	require.NoError(t, err)
	assert.NotEmpty(t, st.Tables.Gemm)
}

// DeepSeek-V3 (published config values, fixtures/models): fp8 128×128
// blocks, MLA, 3 dense then 58 MoE layers of 256 routed + 1 shared expert,
// on 8 H200s: every request completes; the latent KV cache is 61 layers ×
// 576 values × 2 bytes per token on every rank.
func TestDeepSeekV3OnH200(t *testing.T) {
	sc := defaultOn("h200-sxm")
	sc.Deployment.Model = "../fixtures/models/deepseek-v3"
	sc.Deployment.TensorParallelSize = 8
	sc.Deployment.MaxModelLen = 8192
	sc.Workload.Random.NumPrompts = 16
	s, st, err := Build(sc, Options{})
	require.NoError(t, err)
	assert.Equal(t, "fp8 128×128 blocks (fp8)", st.Weights)
	assert.Equal(t, int64(16*61*576*2), st.Memory.BlockBytes)
	res := s.Run()
	for _, r := range res.Requests {
		assert.False(t, r.Failed)
	}
}

// A max_num_seqs left to its default is capped at max_num_batched_tokens,
// as vLLM's EngineArgs does (min(default, max_num_batched_tokens), at
// the pinned arg_utils.py 99d7eb5 and since): --max-num-batched-tokens
// 512 alone on an H200 serves 512 sequences (on main: refused, "must be
// greater than or equal to max_num_seqs (1024)"). A max_num_seqs the
// user sets is kept, and the pair is still checked.
func TestDefaultMaxNumSeqsCappedByBudget(t *testing.T) {
	sc := defaultOn("h200-sxm")
	sc.Deployment.MaxNumBatchedTokens = 512
	st, err := Resolve(sc)
	require.NoError(t, err)
	assert.Equal(t, [2]int{512, 512}, [2]int{st.Engine.MaxNumBatchedTokens, st.Engine.MaxNumSeqs})
	sc = defaultOn("a100-sxm")
	sc.Deployment.MaxNumBatchedTokens = 4096
	st, err = Resolve(sc)
	require.NoError(t, err)
	assert.Equal(t, [2]int{4096, 256}, [2]int{st.Engine.MaxNumBatchedTokens, st.Engine.MaxNumSeqs}, "the default is below the budget")
	sc = defaultOn("h200-sxm")
	sc.Deployment.MaxNumBatchedTokens, sc.Deployment.MaxNumSeqs = 512, 600
	_, err = Resolve(sc)
	assert.ErrorContains(t, err, "max_num_batched_tokens (512) must be greater than or equal to max_num_seqs (600)")
}
