package profiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compareFixture: A in the collector's convention (decode step = context),
// B in aiconfigurator's (step = context − 1, one shape measured twice).
func compareFixture() (a, b *Tables) {
	gemm := func(dtype string, m int64, ms float64) GemmRow {
		return GemmRow{Dtype: dtype, M: m, N: 4096, K: 4096, LatencyMs: ms}
	}
	decode := func(step int64, ms float64) AttnRow {
		return AttnRow{BatchSize: 1, ISL: 1, Step: step, NumHeads: 32, NumKVHeads: 8, HeadDim: 128,
			AttnDtype: "bfloat16", KVCacheDtype: "bfloat16", LatencyMs: ms}
	}
	prefill := func(prefix int64, ms float64) AttnRow {
		return AttnRow{BatchSize: 1, ISL: 512, Step: prefix, NumHeads: 32, NumKVHeads: 8, HeadDim: 128,
			AttnDtype: "bfloat16", KVCacheDtype: "bfloat16", LatencyMs: ms}
	}
	a = &Tables{
		Gemm: []GemmRow{gemm("bfloat16", 1, 0.02), gemm("bfloat16", 2, 0.03), gemm("bfloat16", 4, 0.05),
			gemm("bfloat16", 8, 0.07), gemm("fp8", 1, 0.01)},
		ContextAttn:    []AttnRow{prefill(512, 0.1)},
		GenerationAttn: []AttnRow{decode(1024, 0.012), decode(2048, 0.02)},
		Comm:           []CommRow{{Op: "all_reduce", Backend: "nccl", Dtype: "bfloat16", NumGPUs: 2, MessageSize: 1024, LatencyMs: 0.03}},
		Ops:            []OpRow{{Op: "rmsnorm", Tokens: 1, Width: 4096, Dtype: "bfloat16", LatencyMs: 0.002}},
	}
	b = &Tables{
		Gemm:                []GemmRow{gemm("bfloat16", 1, 0.01), gemm("bfloat16", 2, 0.03), gemm("bfloat16", 4, 0.1), gemm("bfloat16", 16, 0.2)},
		ContextAttn:         []AttnRow{prefill(0, 0.05)},
		GenerationAttn:      []AttnRow{decode(1023, 0.01), decode(1023, 0.014), decode(2048, 0.03)},
		MoE:                 []MoERow{{Dtype: "bfloat16", NumTokens: 1, Hidden: 4096, Inter: 14336, TopK: 2, NumExperts: 8, MoETP: 1, MoEEP: 1, Distribution: "balanced", LatencyMs: 0.3}},
		Comm:                []CommRow{{Op: "all_reduce", Backend: "nccl", Dtype: "half", NumGPUs: 2, MessageSize: 1024, LatencyMs: 0.015}},
		DecodeContextOffset: 1,
	}
	return a, b
}

func TestCompareTables(t *testing.T) {
	a, b := compareFixture()
	c := CompareTables(a, b)
	assert.Equal(t, []FamilyRatio{
		// ratios 2, 1, 0.5: median 1; p10 = 0.5 + 0.2·0.5; p90 = 1 + 0.8·1
		{Family: "gemm bfloat16", Shared: 3, OnlyA: 1, OnlyB: 1, Median: 1, P10: 0.6, P90: 1.8},
		// prefix 512 vs prefix 0: nothing shared
		{Family: "context attention", Shared: 0, OnlyA: 1, OnlyB: 1},
		// A's step 1024 is B's 1023 (repeats 0.01 and 0.014: median 0.012), ratio 1;
		// A's 2048 (context 2048) is not B's 2048 (context 2049)
		{Family: "generation attention", Shared: 1, OnlyA: 1, OnlyB: 1, Median: 1, P10: 1, P90: 1},
		// bfloat16 meets half
		{Family: "comm all_reduce nccl", Shared: 1, Median: 2, P10: 2, P90: 2},
	}, roundRatios(c.Families))
	assert.Equal(t, []string{"gemm fp8", "ops rmsnorm"}, c.OnlyA)
	assert.Equal(t, []string{"moe bfloat16 balanced"}, c.OnlyB)

	// Swapping the sides inverts the ratios (gemm's 2, 1, 0.5 stay a set).
	back := CompareTables(b, a)
	require.Len(t, back.Families, 4)
	assert.Equal(t, []int{1, 1}, []int{back.Families[0].OnlyA, back.Families[0].OnlyB})
	assert.InDelta(t, 0.5, back.Families[3].Median, 1e-12)
	assert.Equal(t, []string{"moe bfloat16 balanced"}, back.OnlyA)
}

// roundRatios drops float noise from hand-worked quantiles.
func roundRatios(fs []FamilyRatio) []FamilyRatio {
	r := func(x float64) float64 { return float64(int64(x*1e9+0.5)) / 1e9 }
	out := append([]FamilyRatio(nil), fs...)
	for i := range out {
		out[i].Median, out[i].P10, out[i].P90 = r(out[i].Median), r(out[i].P10), r(out[i].P90)
	}
	return out
}

// The collector reported bf16 GEMM ours/aiconfigurator = 0.989 over 126
// shapes (profiles/collect/compare.py); CompareTables agrees.
func TestCompareMeasuredWithDefault(t *testing.T) {
	m, err := MeasuredTables("h200-sxm")
	require.NoError(t, err)
	d, err := DefaultTables("h200-sxm")
	require.NoError(t, err)
	c := CompareTables(m, d)
	byName := map[string]FamilyRatio{}
	for _, f := range c.Families {
		byName[f.Family] = f
	}
	g := byName["gemm bfloat16"]
	assert.Equal(t, 126, g.Shared)
	assert.InDelta(t, 0.989, g.Median, 0.0005)
	assert.Equal(t, 126, byName["generation attention"].Shared, "steps matched through the off-by-one")
	assert.Equal(t, 1.0, byName["ops rmsnorm"].Median, "the default tables carry the measured ops")
}
