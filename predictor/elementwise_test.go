package predictor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// syntheticOps: rmsnorm at one width (and a float32 row that the bfloat16
// rows must shadow), rotary at two widths, launch in float32 only.
func syntheticOps() []profiles.OpRow {
	row := func(op string, tokens, width int64, dtype string, ms float64) profiles.OpRow {
		return profiles.OpRow{Op: op, Tokens: tokens, Width: width, Dtype: dtype, LatencyMs: ms}
	}
	return []profiles.OpRow{
		row("rmsnorm", 16, 4096, "bfloat16", 0.016),
		row("rmsnorm", 1, 4096, "bfloat16", 0.002),
		row("rmsnorm", 4, 4096, "bfloat16", 0.004),
		row("rmsnorm", 1, 4096, "float32", 9),
		row("rmsnorm", 64, 4096, "bfloat16", 0), // unmeasured point: ignored
		row("rotary", 2, 1000, "bfloat16", 0.003),
		row("rotary", 8, 1000, "bfloat16", 0.006),
		row("rotary", 2, 4000, "bfloat16", 0.004),
		row("rotary", 8, 4000, "bfloat16", 0.010),
		row("launch", 1, 1, "float32", 0.005),
	}
}

func TestElementwiseMeasured(t *testing.T) {
	e := NewElementwise(syntheticOps(), 1e12)
	tests := []struct {
		name          string
		op            string
		tokens, width int
		want          float64
		extrapolated  bool
	}{
		{"grid point", "rmsnorm", 1, 4096, 0.002, false},
		{"log-log midpoint of 1 and 4 tokens", "rmsnorm", 2, 4096, math.Sqrt(0.002 * 0.004), false},
		{"log-log midpoint of 4 and 16 tokens", "rmsnorm", 8, 4096, 0.008, false},
		{"above the grid: linear in tokens", "rmsnorm", 32, 4096, 0.016 * 32 / 16, true},
		{"below the grid: flat", "rotary", 1, 1000, 0.003, true},
		{"width 1500: nearest 1000, × 1.5", "rotary", 4, 1500, math.Sqrt(0.003*0.006) * 1.5, true},
		{"width 3000: nearest 4000, × 0.75", "rotary", 2, 3000, 0.004 * 0.75, true},
		{"width 2000: tie goes to the wider 4000, × 0.5", "rotary", 2, 2000, 0.002, true},
		{"only dtype measured is used", "launch", 1, 1, 0.005, false},
	}
	extrapolated := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, e.Ms(tc.op, tc.tokens, tc.width), 1e-12)
		})
		if tc.extrapolated {
			extrapolated++
		}
	}
	assert.Equal(t, int64(len(tests)), e.Cov.Lookups)
	assert.Equal(t, int64(extrapolated), e.Cov.Extrapolated)
	// rmsnorm: 32 tokens over the grid's 16. rotary: tokens 1 under the
	// grid's 2 (×2), widths 1500 (×1.5 of 1000), 3000 (×4/3 of 4000) and
	// 2000 (×2 of 4000, a tie: the first stays the farthest).
	assert.Equal(t, []FamilyReach{
		{Family: "rmsnorm", Shapes: 1, Farthest: "tokens=32 width=4096", Reach: Reach{Axis: "tokens", X: 32, Edge: 16}, Rule: elementwiseRule},
		{Family: "rotary", Shapes: 4, Farthest: "tokens=1 width=1000", Reach: Reach{Axis: "tokens", X: 1, Edge: 2}, Rule: elementwiseRule},
	}, e.Cov.Families)

	for _, op := range []string{"rmsnorm", "rotary", "launch"} {
		assert.True(t, e.Measured(op), op)
	}
	for _, op := range []string{"silu_and_mul", "embedding", "sampler"} {
		assert.False(t, e.Measured(op), op)
	}
	assert.Zero(t, e.Ms("rmsnorm", 0, 4096), "no tokens, no kernel")
}

// With bw = 1e12 B/s at MemEfficiency 0.8 a byte costs 1.25e-3 ns; every
// kernel adds KernelFloorNs = 3000 ns.
func TestElementwiseFallbackBytes(t *testing.T) {
	e := NewElementwise(nil, 1e12)
	tests := []struct {
		op            string
		tokens, width int
		bytes         float64
	}{
		{"rmsnorm", 10, 1000, 3 * 10 * 1000 * 2},          // fused add: read x and residual, write
		{"rotary", 10, 1000, 2 * 10 * 1000 * 2},           // q and k in place
		{"silu_and_mul", 10, 1000, 10 * 3 * 1000 * 2},     // read 2·width, write width
		{"embedding", 10, 1000, 2 * 10 * 1000 * 2},        // gather and write
		{"sampler", 10, 32000, 2 * 10 * 32000 * 4},        // fp32 logits read twice
		{"sampler_greedy", 10, 32000, 2 * 10 * 32000 * 4}, // same traffic
		{"something_else", 10, 1000, 2 * 10 * 1000 * 2},   // read once, write once
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			want := (tc.bytes*1.25e-3 + 3000) / 1e6
			assert.InDelta(t, want, e.Ms(tc.op, tc.tokens, tc.width), 1e-12)
			assert.False(t, e.Measured(tc.op))
		})
	}
	assert.InDelta(t, 0.003075, e.Ms("silu_and_mul", 10, 1000), 1e-12, "60,000 bytes: 75 ns + 3 µs")
	assert.Zero(t, e.Cov.Lookups, "the fallback is not a table lookup")

	// The fallback is what step.go charges for the same operators.
	const tok, h, bw = 256, 4096, 4.8e12
	e = NewElementwise(nil, bw)
	assert.InDelta(t, memBoundMs(tok*h*2*3, bw), e.Ms("rmsnorm", tok, h), 1e-15)
	assert.InDelta(t, memBoundMs(tok*28672*2*1.5, bw), e.Ms("silu_and_mul", tok, 14336), 1e-15)
	assert.InDelta(t, memBoundMs(tok*128256*4*2, bw), e.Ms("sampler", tok, 128256), 1e-15)
}

// The default H200 tables carry the collector's ops: rmsnorm at 8 tokens of
// width 4096 is a measured grid point, priced as measured.
func TestElementwiseH200DefaultTables(t *testing.T) {
	tb, err := profiles.DefaultTables("h200-sxm")
	require.NoError(t, err)
	hw, err := profiles.LookupHardware("h200-sxm")
	require.NoError(t, err)
	e := NewElementwise(tb.Ops, hw.MemBandwidth)
	for _, op := range profiles.ElementwiseOps {
		assert.True(t, e.Measured(op), op)
	}
	var want float64
	for _, r := range tb.Ops {
		if r.Op == "rmsnorm" && r.Tokens == 8 && r.Width == 4096 && r.Dtype == "bfloat16" {
			want = r.LatencyMs
		}
	}
	require.Positive(t, want, "h200-sxm ops table has rmsnorm 8 × 4096")
	assert.Equal(t, want, e.Ms("rmsnorm", 8, 4096))
	assert.Zero(t, e.Cov.Extrapolated)

	h100, err := profiles.DefaultTables("h100-sxm")
	require.NoError(t, err)
	assert.False(t, NewElementwise(h100.Ops, hw.MemBandwidth).Measured("rmsnorm"), "no H100 measurements")
}

// Ops priced by the bytes they move are named in a note, with the rule's
// constants, as the measured ones are (a newcomer found an H100 run said
// nothing where an H200 run named its measured ops): all five without
// rows, the three syntheticOps lacks, none when all are measured.
func TestBytesNoteNamesUnmeasuredOps(t *testing.T) {
	assert.Equal(t, []string{"h100-sxm: rmsnorm, rotary, silu_and_mul, embedding, sampler priced by the bytes they move at 80 % of HBM bandwidth plus 3 µs a kernel (no measured rows)"},
		NewElementwise(nil, 3.35e12).bytesNote("h100-sxm"))
	assert.Equal(t, []string{"x: silu_and_mul, embedding, sampler priced by the bytes they move at 80 % of HBM bandwidth plus 3 µs a kernel (no measured rows)"},
		NewElementwise(syntheticOps(), 1e12).bytesNote("x"))
	tb, err := profiles.DefaultTables("h200-sxm")
	require.NoError(t, err)
	assert.Empty(t, NewElementwise(tb.Ops, 4.8e12).bytesNote("h200-sxm"))
}
