package predictor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReachFactorAndText(t *testing.T) {
	tests := []struct {
		name   string
		r      Reach
		factor float64
		text   string
	}{
		{"inside", Reach{}, 0, ""},
		{"above the grid", Reach{Axis: "n", X: 128256, Edge: 65536}, 128256.0 / 65536, "n 128256 = 1.96× the table's 65536"},
		{"below the grid", Reach{Axis: "n", X: 16, Edge: 32}, 2, "n 16 = 0.5× the table's 32"},
		// newcomer2 H5: "width 4608 = 0.9× the table's 5120" read as
		// beyond the grid; "context 620 = 4.84× the table's 128" hid that
		// 128 is the longest context measured at the largest batch
		{"between measured widths", Reach{Axis: "width", X: 4608, Edge: 5120, Near: true}, 5120.0 / 4608, "width 4608 = 0.9× the nearest measured 5120"},
		{"a row's range", Reach{Axis: "context", X: 620, Edge: 128, At: ", its longest at batch 512"}, 620.0 / 128, "context 620 = 4.84× the table's 128, its longest at batch 512"},
		{"out with no axis", Reach{Why: "no table for 16 GPUs: bandwidth estimate"}, 1, "no table for 16 GPUs: bandwidth estimate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.name != "inside", tc.r.Out())
			assert.InDelta(t, tc.factor, tc.r.Factor(), 1e-12)
			assert.Equal(t, tc.text, tc.r.String())
		})
	}
}

// TestGemmCoverageByFamily: on powerLaw's grid (m 1…16, n and k 64…256),
// two shapes fall outside: m=32 (2× the largest m) and n=32, k=1024 (n
// half the smallest, k 4× the largest: k is the farther axis).
func TestGemmCoverageByFamily(t *testing.T) {
	g, err := NewGemm(powerLaw(), "bfloat16")
	require.NoError(t, err)
	g.Ms(4, 64, 256)
	g.Ms(32, 64, 64)
	g.Ms(2, 32, 1024)
	assert.Equal(t, Coverage{Lookups: 3, Extrapolated: 2, Families: []FamilyReach{
		{Family: "gemm bfloat16", Shapes: 2, Farthest: "m=2 n=32 k=1024", Reach: Reach{Axis: "k", X: 1024, Edge: 256}, Rule: gemmRule},
	}}, g.Cov)
}

// TestRuleNotesStateEachFamilysRule: a run's coverage states, once per
// rule, how the families with a shape out of their grid price one (a
// newcomer read "extrapolated by the stated rules" and found no rule
// stated), in the families' order, without counts; families sharing a
// rule share its note (an attacker saw the elementwise rule printed four
// times, once per op); Add keeps a family's rule.
func TestRuleNotesStateEachFamilysRule(t *testing.T) {
	var a, b Coverage
	a.note("gemm bfloat16", gemmRule, Reach{Axis: "n", X: 128256, Edge: 65536}, func() string { return "m=1 n=128256 k=4096" })
	a.note("gemm bfloat16", gemmRule, Reach{}, func() string { return "m=1 n=4096 k=4096" })
	a.note("rmsnorm", elementwiseRule, Reach{Axis: "tokens", X: 32, Edge: 16}, func() string { return "tokens=32 width=4096" })
	b.note("decode attention", decodeRule, Reach{Axis: "batch", X: 600, Edge: 512}, func() string { return "batch=600 ctx=512 heads=32/8" })
	b.note("gemm bfloat16", gemmRule, Reach{Axis: "m", X: 16384, Edge: 8192}, func() string { return "m=16384 n=4096 k=4096" })
	b.note("sampler", elementwiseRule, Reach{Axis: "tokens", X: 1, Edge: 2}, func() string { return "tokens=1 width=128256" })
	var c Coverage
	c.Add(a)
	c.Add(b)
	assert.Equal(t, []string{
		"gemm bfloat16: an extrapolated shape is priced so: " + gemmRule,
		"rmsnorm, sampler: an extrapolated shape is priced so: " + elementwiseRule,
		"decode attention: an extrapolated shape is priced so: " + decodeRule,
	}, c.RuleNotes())
	assert.Contains(t, gemmRule, "the column made monotone in m (cost per unit of work never rising with size")
	assert.Empty(t, (&Coverage{Lookups: 3}).RuleNotes(), "nothing out of the grid: no rule to state")
}

// TestCoverageAdd sums two engines' coverage: counts add, a family in both
// keeps the farther shape, a family in one is appended in order.
func TestCoverageAdd(t *testing.T) {
	a := Coverage{Lookups: 10, Extrapolated: 3, Families: []FamilyReach{
		{Family: "gemm bfloat16", Shapes: 2, Farthest: "m=1 n=128256 k=4096", Reach: Reach{Axis: "n", X: 128256, Edge: 65536}},
		{Family: "rmsnorm", Shapes: 1, Farthest: "tokens=32 width=4096", Reach: Reach{Axis: "tokens", X: 32, Edge: 16}},
	}}
	b := Coverage{Lookups: 5, Extrapolated: 4, Families: []FamilyReach{
		{Family: "decode attention", Shapes: 1, Farthest: "batch=600 ctx=512 heads=32/8", Reach: Reach{Axis: "batch", X: 600, Edge: 512}},
		{Family: "gemm bfloat16", Shapes: 3, Farthest: "m=16384 n=128256 k=4096", Reach: Reach{Axis: "m", X: 16384, Edge: 8192}},
	}}
	a.Add(b)
	assert.Equal(t, Coverage{Lookups: 15, Extrapolated: 7, Families: []FamilyReach{
		{Family: "gemm bfloat16", Shapes: 5, Farthest: "m=16384 n=128256 k=4096", Reach: Reach{Axis: "m", X: 16384, Edge: 8192}},
		{Family: "rmsnorm", Shapes: 1, Farthest: "tokens=32 width=4096", Reach: Reach{Axis: "tokens", X: 32, Edge: 16}},
		{Family: "decode attention", Shapes: 1, Farthest: "batch=600 ctx=512 heads=32/8", Reach: Reach{Axis: "batch", X: 600, Edge: 512}},
	}}, a)
	var sum int64
	for _, f := range a.Families {
		sum += f.Shapes
	}
	assert.Equal(t, a.Extrapolated, sum, "every extrapolated shape is in one family")
}

// TestGridReachNamesTheRowItReads: a decode-attention shape whose batch
// lies between two measured rows reads both; when the longer-batch row
// was measured only to a shorter context, the reach names that row, that
// the edge is its longest context, and how the shape's batch reads it (a
// newcomer read "at batch 1024" next to "batch=639" as a contradiction,
// then "a row batch 639 is read from" as unreadable). A shape at a row's
// own batch names only the row.
func TestGridReachNamesTheRowItReads(t *testing.T) {
	g := grid2{&gridData{points: func() []point {
		return []point{{512, 128, 1}, {512, 1024, 2}, {1024, 64, 1}, {1024, 128, 2}}
	}}}.data()
	require.Equal(t, "context 620 = 4.84× the table's 128, its longest at batch 1024; batch 639 is interpolated between the rows at 512 and 1024",
		g.reach(639, 620, "context").String())
	require.Equal(t, "context 2048 = 16× the table's 128, its longest at batch 1024", g.reach(1024, 2048, "context").String())
	require.Equal(t, "context 2048 = 2× the table's 1024, its longest at batch 512", g.reach(512, 2048, "context").String())
	require.Equal(t, "context 64 = 0.5× the table's 128, its shortest at batch 512", g.reach(512, 64, "context").String())
	// Above the largest batch (1500/1024 = 1.46× is nearer than 8×).
	require.Equal(t, "context 1024 = 8× the table's 128, its longest at batch 1024; batch 1500 is scaled from the row at 1024",
		g.reach(1500, 1024, "context").String())
	// Below the smallest batch (512/400 = 1.28× is nearer than 4×).
	require.Equal(t, "context 4096 = 4× the table's 1024, its longest at batch 512; batch 400 is read from the row at 512",
		g.reach(400, 4096, "context").String())
}

// A chunk after a cached prefix is priced as the prefix-free prompt of the
// same causal work, so its reach names that equivalent length (an attacker
// read "prompt length 39604.1" for an 8,185-token chunk as a wrong
// number); a prefix-free prompt keeps "prompt length". H200's prefill
// table stops at 16,384 tokens: 8,192 after 32,768 cached are
// 8192·(32768 + 8193/2) = 301,993,984 pairs, EquivalentPromptLen
// (√(1 + 8·301,993,984) − 1)/2 = (49,152.33 − 1)/2 = 24,575.67.
func TestPrefillReachNamesTheEquivalentLength(t *testing.T) {
	a := mustAttention(t, llamaConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h200-sxm", 1))
	a.PrefillMs(8192, 32768, 32, 8)
	require.Len(t, a.Cov.Families, 1)
	assert.Equal(t, Reach{Axis: "equivalent prompt length", X: EquivalentPromptLen(8192, 32768), Edge: 16384}, a.Cov.Families[0].Reach)
	assert.InDelta(t, 24575.67, EquivalentPromptLen(8192, 32768), 0.01)
	a.PrefillMs(65536, 0, 32, 8)
	assert.Equal(t, Reach{Axis: "prompt length", X: 65536, Edge: 16384}, a.Cov.Families[0].Reach, "the farther, prefix-free")
}

// A sweep's points may state one rule for different families: merged
// into one note naming them all, in first-appearance order, where the
// first stood; other notes pass as they are.
func TestMergeRuleNotes(t *testing.T) {
	e := func(f string) string { return f + ": an extrapolated shape is priced so: " + elementwiseRule }
	g := "gemm bfloat16: an extrapolated shape is priced so: " + gemmRule
	assert.Equal(t, []string{e("rmsnorm, rotary, silu_and_mul"), "host model: x", g},
		MergeRuleNotes([]string{e("rmsnorm, rotary"), "host model: x", e("rmsnorm, silu_and_mul"), g, g}))
	assert.Empty(t, MergeRuleNotes(nil))
}
