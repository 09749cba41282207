package predictor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// powerLaw is a synthetic GEMM table y = 1e-9 · m^0.5 · n · k (ms) on the
// grid m ∈ {1, 4, 16}, n, k ∈ {64, 256}: log-trilinear interpolation
// reproduces a power law exactly between grid points.
func powerLaw() []profiles.GemmRow {
	var rows []profiles.GemmRow
	for _, m := range []int64{1, 4, 16} {
		for _, n := range []int64{64, 256} {
			for _, k := range []int64{64, 256} {
				rows = append(rows, profiles.GemmRow{Dtype: "bfloat16", M: m, N: n, K: k,
					LatencyMs: 1e-9 * math.Sqrt(float64(m)) * float64(n*k)})
			}
		}
	}
	return rows
}

func TestGemmInterpolation(t *testing.T) {
	g, err := NewGemm(powerLaw(), "bfloat16")
	require.NoError(t, err)
	// At grid points: the table's value.
	assert.InDelta(t, 1e-9*2*64*256, g.Ms(4, 64, 256), 1e-15)
	// Between grid points: m=2 (between 1 and 4), n=128 (between 64 and 256):
	// y = 1e-9 · √2 · 128 · 64 exactly.
	assert.InDelta(t, 1e-9*math.Sqrt2*128*64, g.Ms(2, 128, 64), 1e-15)
	assert.Zero(t, g.Cov.Extrapolated)
	// Above the grid: clamp to m=16 and scale linearly in FLOPs (m 32/16).
	assert.InDelta(t, 1e-9*4*64*64*2, g.Ms(32, 64, 64), 1e-15)
	// Below the grid (n=32 < 64): the edge latency, never faster.
	assert.InDelta(t, 1e-9*1*64*64, g.Ms(1, 32, 64), 1e-15)
	assert.Equal(t, int64(2), g.Cov.Extrapolated)
	assert.Equal(t, int64(4), g.Cov.Lookups)
	_, err = NewGemm(powerLaw(), "fp8")
	assert.Error(t, err)
}

func TestGemmRealTableGridPoint(t *testing.T) {
	tb, err := profiles.DefaultTables("h100-sxm")
	require.NoError(t, err)
	g, err := NewGemm(tb.Gemm, "bfloat16")
	require.NoError(t, err)
	var row profiles.GemmRow
	for _, r := range tb.Gemm {
		if r.Dtype == "bfloat16" && r.M == 64 && r.N == 4096 && r.K == 4096 {
			row = r
			break
		}
	}
	require.NotZero(t, row.LatencyMs)
	assert.InDelta(t, row.LatencyMs, g.Ms(64, 4096, 4096), 1e-12)
	// Llama-2-7b gate/up (n = 22016) lies between n = 16384 and 32768: the
	// interpolated latency is between the two neighbours.
	lo, hi := g.Ms(64, 16384, 4096), g.Ms(64, 32768, 4096)
	mid := g.Ms(64, 22016, 4096)
	assert.Greater(t, mid, lo)
	assert.Less(t, mid, hi)
}

func TestSeriesRules(t *testing.T) {
	s := newSeries([]float64{4, 1, 16}, []float64{2, 1, 4}) // y = √x
	y, out := s.at(2)
	assert.False(t, out)
	assert.InDelta(t, math.Sqrt2, y, 1e-12)
	y, out = s.at(32)
	assert.True(t, out)
	assert.InDelta(t, 8.0, y, 1e-12, "linear above the grid: 4 × 32/16")
	y, out = s.at(0.5)
	assert.True(t, out)
	assert.InDelta(t, 1.0, y, 1e-12, "flat below the grid")
}

func llamaConfig(t *testing.T, model, hw string, tp int) Config {
	t.Helper()
	m, err := profiles.LoadModel(model)
	require.NoError(t, err)
	h, err := profiles.LookupHardware(hw)
	require.NoError(t, err)
	tb, err := profiles.DefaultTables(h.TablesHardware)
	require.NoError(t, err)
	return Config{Model: m, Hardware: h, Tables: tb, TP: tp, PP: 1, Dtype: "bfloat16", KVDtype: "bfloat16", Host: DefaultHost()}
}

// vLLM reports 7,463 blocks for Llama-2-7b, TP1, H100-SXM 80 GB, 0.9,
// max_num_batched_tokens 2048 (shared/README.md). Hand check of the plan:
// 0.9 × 79.19 GiB = 71.27 GiB − weights 12.55 GiB − activation 0.35 GiB −
// non-torch 0.18 GiB = 58.19 GiB / 8 MiB per block = 7,447 blocks.
func TestKVCapacityLlama2H100(t *testing.T) {
	p, err := PlanMemory(llamaConfig(t, "meta-llama/Llama-2-7b-hf", "h100-sxm", 1), 0.9, 2048, 16, 4096, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(16*32*2*32*128*2), p.BlockBytes)
	assert.InEpsilon(t, 7463, p.NumBlocks, 0.02)
	assert.Equal(t, 7447, p.NumBlocks)
}

func TestMemoryRefusals(t *testing.T) {
	c := llamaConfig(t, "meta-llama/Llama-2-7b-hf", "h100-sxm", 1)
	_, err := PlanMemory(c, 0.1, 2048, 16, 4096, nil)
	assert.EqualError(t, err, "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.")
	_, err = PlanMemory(c, 0.9, 2048, 16, 200000, nil)
	assert.ErrorContains(t, err, "To serve at least one request with the models's max seq len (200000), (97.66 GiB KV cache is needed, which is larger than the available KV cache memory (58.18 GiB). Based on the available memory, the estimated maximum model length is 119152. ")
	big := llamaConfig(t, "meta-llama/Llama-3.1-70B-Instruct", "h100-sxm", 1)
	_, err = PlanMemory(big, 0.9, 2048, 16, 4096, nil)
	assert.ErrorContains(t, err, "model weights take")
	n := 100
	p, err := PlanMemory(c, 0.9, 2048, 16, 1584, &n)
	require.NoError(t, err)
	assert.Equal(t, 100, p.NumBlocks)
	// 100 blocks serve 99 × 16 = 1,584 tokens beside vLLM's null block.
	_, err = PlanMemory(c, 0.9, 2048, 16, 1600, &n)
	assert.ErrorContains(t, err, "num_gpu_blocks_override 100 holds 1584 tokens beside vLLM's null block, fewer than max_model_len 1600")
}

// A TP=2 decode step costs one rank's half-size GEMMs plus two
// all-reduces per layer: checked term by term against the tables.
func TestTP2LayerComposition(t *testing.T) {
	c := llamaConfig(t, "codellama/CodeLlama-34b-Instruct-hf", "h100-sxm", 2)
	p, err := New(c)
	require.NoError(t, err)
	m := c.Model
	tok := 8
	h := m.HiddenSize
	bw := c.Hardware.MemBandwidth
	want := 2*memBoundMs(float64(tok*h*2*3), bw) +
		p.bf16.Ms(tok, (64/2+2*8/2)*128, h) +
		memBoundMs(float64(tok*(32+4)*128*2*2), bw) +
		p.bf16.Ms(tok, h, 64/2*128) +
		p.bf16.Ms(tok, 2*22016/2, h) +
		memBoundMs(float64(tok*22016)*2*1.5, bw) +
		p.bf16.Ms(tok, h, 22016/2) +
		2*p.comm.Ms("all_reduce", "vllm_graph", int64(tok*h), 0)
	assert.InDelta(t, 48*want, p.layerDenseMs(tok, true), 1e-12, "48 layers of one kind")
	assert.Greater(t, p.comm.Ms("all_reduce", "vllm_graph", int64(tok*h), 0), 0.0)
}

func TestDecodeAttentionBytesRule(t *testing.T) {
	c := llamaConfig(t, "meta-llama/Llama-2-7b-hf", "h100-sxm", 1)
	a, err := NewAttention(c.Tables, 128, "bfloat16")
	require.NoError(t, err)
	// 32/32 heads has no rows: priced as 8/8 at 4× the context.
	assert.InDelta(t, a.DecodeMs(8, 4*1024, 8, 8), a.DecodeMs(8, 1024, 32, 32), 1e-12)
	assert.NotEmpty(t, a.Notes)
	// More context costs more.
	assert.Greater(t, a.DecodeMs(8, 2048, 32, 8), a.DecodeMs(8, 512, 32, 8))
	// A cached prefix costs more than none, less than a prompt that long.
	assert.Greater(t, a.PrefillMs(64, 1024, 32, 32), a.PrefillMs(64, 0, 32, 32))
	assert.Less(t, a.PrefillMs(64, 1024, 32, 32), a.PrefillMs(1088, 0, 32, 32))
}

// EP dispatch/combine of one MoE layer, Qwen3-30B-A3B at DP 8 with
// expert parallelism, 64 tokens per rank: vLLM's default backend
// all-gathers then reduce-scatters 64 × 8 ranks × 2048 hidden elements over
// the 8 GPUs; the all-to-all backends send 64 × top-8 × 2048 elements per
// rank twice (dispatch, combine). The experts see all 512 tokens, priced
// from the tp1/ep8 MoE rows.
func TestEPDispatchAndExperts(t *testing.T) {
	cfg := llamaConfig(t, "Qwen/Qwen3-30B-A3B", "h200-sxm", 1)
	cfg.DP, cfg.ExpertParallel = 8, true
	p, err := New(cfg)
	require.NoError(t, err)
	bw := cfg.Hardware.IntraNodeBW
	elems := int64(64 * 8 * 2048)
	assert.InDelta(t, p.moeComm.Ms("all_gather", "nccl", elems, bw)+p.moeComm.Ms("reduce_scatter", "nccl", elems, bw), p.dispatchMs(64), 1e-12)
	cfg.All2AllBackend = "deepep"
	q, err := New(cfg)
	require.NoError(t, err)
	assert.InDelta(t, 2*q.moeComm.Ms("alltoall", "nccl", 64*8*2048, bw), q.dispatchMs(64), 1e-12)
	assert.Empty(t, p.Notes, "tp1/ep8 rows exist: no substitution")
	var row float64
	for _, r := range cfg.Tables.MoE {
		if r.Hidden == 2048 && r.Inter == 768 && r.NumExperts == 128 && r.TopK == 8 && r.MoETP == 1 && r.MoEEP == 8 &&
			r.NumTokens == 512 && r.Dtype == "bfloat16" && r.Distribution == "balanced" {
			row = r.LatencyMs
			break
		}
	}
	require.NotZero(t, row)
	assert.InDelta(t, row, p.moes[profiles.FormatBF16].Ms(512), 1e-12)
}

// A TP/EP split the MoE table lacks is priced from the nearest measured
// split that divides it, scaled by the share of the weights: with rows for
// TP1 and TP2 only, TP4 is the TP2 curve × 2/4 and TP3 falls back to TP1 ÷ 3.
func TestMoENearestSplit(t *testing.T) {
	row := func(tp, tokens int64, ms float64) profiles.MoERow {
		return profiles.MoERow{Dtype: "bfloat16", NumTokens: tokens, Hidden: 64, Inter: 128, TopK: 2, NumExperts: 8,
			MoETP: tp, MoEEP: 1, Distribution: "balanced", LatencyMs: ms}
	}
	rows := []profiles.MoERow{row(1, 16, 1.0), row(1, 256, 4.0), row(2, 16, 0.8), row(2, 256, 3.0)}
	tp4, err := NewMoE(rows, "bfloat16", 64, 128, 2, 8, 4, 1, "balanced")
	require.NoError(t, err)
	assert.InDelta(t, 0.4, tp4.Ms(16), 1e-12)
	assert.InDelta(t, 1.5, tp4.Ms(256), 1e-12)
	assert.Contains(t, tp4.Notes, "moe: no rows for tp=4 ep=1; tp=2 ep=1 latency × 2/4")
	tp3, err := NewMoE(rows, "bfloat16", 64, 128, 2, 8, 3, 1, "balanced")
	require.NoError(t, err)
	assert.InDelta(t, 4.0/3, tp3.Ms(256), 1e-12)
	exact, err := NewMoE(rows, "bfloat16", 64, 128, 2, 8, 2, 1, "balanced")
	require.NoError(t, err)
	assert.InDelta(t, 3.0, exact.Ms(256), 1e-12)
	assert.Empty(t, exact.Notes)
	_, err = NewMoE(rows, "fp8", 64, 128, 2, 16, 2, 1, "balanced")
	assert.ErrorContains(t, err, "moe table has no fp8 rows")
}
