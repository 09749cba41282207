package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// A log-linear law with known coefficients, sampled without noise: the
// fit recovers every coefficient, scores every row at ~0, and with more
// rows than RegressionMaxFitRows fits every k-th row and scores the rest
// as held out.
func TestFitLogLinearRecoversKnownCoefficients(t *testing.T) {
	want := []float64{-2.5, 1.0, 0.35, -0.12}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	xs := make([][]float64, n)
	lat := make([]float64, n)
	for i := range xs {
		x := []float64{rng.Float64() * 10, rng.Float64()*4 - 2, rng.Float64() * 3}
		y := want[0]
		for j, v := range x {
			y += want[j+1] * v
		}
		xs[i], lat[i] = x, math.Exp(y)
	}
	f, err := fitLogLinear("synthetic", []string{"a", "b", "c"}, xs, lat, func(int) string { return "" })
	require.NoError(t, err)
	require.Len(t, f.Coeffs, 4)
	for i := range want {
		assert.InDelta(t, want[i], f.Coeffs[i], 1e-9, "coefficient %d", i)
	}
	assert.Equal(t, n, f.Rows)
	assert.Equal(t, 1000, f.FitRows, "every 3rd of 3,000 rows")
	assert.Equal(t, 2000, f.HeldOut.N)
	assert.Less(t, f.Residuals.Max, 1e-9)
	assert.Less(t, f.HeldOut.Max, 1e-9)

	// Too few rows for the features is an error, not a fit.
	_, err = fitLogLinear("tiny", []string{"a", "b", "c"}, xs[:4], lat[:4], func(int) string { return "" })
	require.ErrorContains(t, err, "4 usable rows for 3 features")
}

// A synthetic GEMM table whose latencies follow the series law exactly
// (different coefficients per (n, k) pair): RegressionTables gives back
// every row, adds the rows past m = 8192 from the same law, and the
// residuals it reports are ~0.
func TestRegressionTablesRecoverSyntheticGemm(t *testing.T) {
	hw, err := profiles.LookupHardware("h100-sxm")
	require.NoError(t, err)
	r := &Regressions{hw: hw}
	law := func(c [4]float64, m, n, k float64) float64 {
		_, _, roof := r.gemmRoof("bfloat16", m, n, k)
		lm := math.Log(m)
		return math.Exp(c[0] + c[1]*math.Log(roof) + c[2]*lm + c[3]*lm*lm)
	}
	pairs := map[[2]int64][4]float64{
		{4096, 4096}:  {0.20, 0.95, 0.010, -0.002},
		{14336, 4096}: {-0.10, 1.02, -0.030, 0.001},
	}
	tb := &profiles.Tables{Hardware: "h100-sxm", Source: "synthetic"}
	for m := int64(1); m <= 8192; m *= 2 {
		for nk, c := range pairs {
			tb.Gemm = append(tb.Gemm, profiles.GemmRow{Dtype: "bfloat16", M: m, N: nk[0], K: nk[1],
				LatencyMs: law(c, float64(m), float64(nk[0]), float64(nk[1]))})
		}
	}
	out, err := RegressionTables(tb, hw)
	require.NoError(t, err)
	require.Len(t, out.Gemm, len(tb.Gemm)+2*len(gemmExtendM))
	for _, g := range out.Gemm {
		c := pairs[[2]int64{g.N, g.K}]
		assert.InDelta(t, 1, g.LatencyMs/law(c, float64(g.M), float64(g.N), float64(g.K)), 1e-7, "m=%d n=%d k=%d", g.M, g.N, g.K)
	}
	assert.Equal(t, int64(65536), out.Gemm[len(out.Gemm)-1].M)
	assert.Equal(t, "synthetic (regression)", out.Source)
	assert.Equal(t, "predictor regression: GEMM, attention, MoE and collective latencies are per-series regressions of synthetic, "+
		"which also extend the series past the measured ranges (GEMM m up to 65536, prefill prompt length up to 131072, MoE tokens up to 65536); "+
		"shapes there are priced by the fit and count as inside the (regressed) tables", out.Notes[len(out.Notes)-1],
		"an attacker found regression-extended shapes uncounted and unexplained")

	fits, err := SeriesFits(tb, hw)
	require.NoError(t, err)
	require.Equal(t, "gemm bfloat16", fits[0].Family)
	assert.Equal(t, len(tb.Gemm), fits[0].Rows)
	assert.Less(t, fits[0].Residuals.Max, 1e-7)

	again, err := RegressionTables(tb, hw)
	require.NoError(t, err)
	assert.Same(t, out, again, "built once per tables and GPU")
}

// On the real H100 tables the series regressions stay close to the
// measurements (median error a few percent, as profile show reports),
// extend prefill past 16,384 tokens and MoE past 16,384 tokens, and
// price a Mixtral TP2 decode step within a few percent of interpolation.
func TestRegressionTablesH100(t *testing.T) {
	hw, err := profiles.LookupHardware("h100-sxm")
	require.NoError(t, err)
	tb, err := profiles.DefaultTables("h100-sxm")
	require.NoError(t, err)
	fits, err := SeriesFits(tb, hw)
	require.NoError(t, err)
	for _, f := range fits {
		assert.Less(t, f.Residuals.Median, 0.08, f.Family)
	}
	out, err := RegressionTables(tb, hw)
	require.NoError(t, err)
	longest := int64(0)
	for _, a := range out.ContextAttn {
		longest = max(longest, a.ISL)
	}
	assert.Equal(t, int64(131072), longest)

	m, err := profiles.LoadModel("mistralai/Mixtral-8x7B-v0.1")
	require.NoError(t, err)
	cfg := Config{Model: m, Hardware: hw, TP: 2, PP: 1, Dtype: "bfloat16", KVDtype: "bfloat16", Host: DefaultHost()}
	cfg.Tables = tb
	interp, err := New(cfg)
	require.NoError(t, err)
	cfg.Tables = out
	reg, err := New(cfg)
	require.NoError(t, err)
	b := &Batch{NumTokens: 128, PaddedTokens: 128, Graph: true, NumDecodes: 128, DecodeCtxSum: 128 * 1800, NumSampled: 128, NumRequests: 128, NumRunning: 128}
	assert.InDelta(t, 1, reg.DeviceMs(b)/interp.DeviceMs(b), 0.05)
}

// A series whose fitted law turns down past its last measured point (a
// negative (log length)² term, as the H200 fp8 1/1-head prefill series
// fits) must not be extended: more causal work is never faster, and
// extension rows below the measured end let a 24,000-token prompt price
// below a 16,000-token one (attack finding: H200 fp8 heads 1/1 extended
// to 4e-8 ms at 32,768 tokens from 0.44 ms at 16,384). The interpolating
// predictor's own rule past the grid applies instead.
func TestRegressionExtensionNeverFalls(t *testing.T) {
	hw, err := profiles.LookupHardware("h100-sxm")
	require.NoError(t, err)
	law := func(isl float64) float64 { // rises, peaks near 8k, then falls
		l := math.Log(isl)
		return math.Exp(-9 + 2.5*l - 0.14*l*l)
	}
	tb := &profiles.Tables{Hardware: "h100-sxm", Source: "synthetic"}
	for isl := int64(64); isl <= 16384; isl *= 2 {
		tb.ContextAttn = append(tb.ContextAttn, profiles.AttnRow{BatchSize: 1, ISL: isl, NumHeads: 8, NumKVHeads: 8, HeadDim: 128,
			AttnDtype: "bfloat16", KVCacheDtype: "bfloat16", LatencyMs: law(float64(isl))})
	}
	out, err := RegressionTables(tb, hw)
	require.NoError(t, err)
	assert.Len(t, out.ContextAttn, len(tb.ContextAttn), "no extension row below the measured end")

	// On every embedded table, each extension row is at least the latency
	// of the series' row before it (GEMM along m, prefill along the prompt,
	// MoE along tokens).
	for _, name := range []string{"h100-sxm", "h200-sxm"} {
		hw, err := profiles.LookupHardware(name)
		require.NoError(t, err)
		tb, err := profiles.DefaultTables(name)
		require.NoError(t, err)
		out, err := RegressionTables(tb, hw)
		require.NoError(t, err)
		type point struct {
			axis int64
			ms   float64
		}
		check := func(family string, n int, key func(i int) string, at func(i int) point, ext func(i int) bool) {
			last := map[string]point{}
			for i := 0; i < n; i++ {
				k, p := key(i), at(i)
				if prev, ok := last[k]; ok && ext(i) {
					assert.GreaterOrEqual(t, p.ms, prev.ms, "%s %s %s at %d after %d", name, family, k, p.axis, prev.axis)
				}
				if prev, ok := last[k]; !ok || p.axis > prev.axis {
					last[k] = p
				}
			}
		}
		nGemm, nAttn, nMoE := len(tb.Gemm), len(tb.ContextAttn), len(tb.MoE)
		check("gemm", len(out.Gemm), func(i int) string {
			g := out.Gemm[i]
			return fmt.Sprintf("%s n=%d k=%d", g.Dtype, g.N, g.K)
		}, func(i int) point { return point{out.Gemm[i].M, out.Gemm[i].LatencyMs} }, func(i int) bool { return i >= nGemm })
		check("prefill", len(out.ContextAttn), func(i int) string {
			a := out.ContextAttn[i]
			return fmt.Sprintf("d=%d kv=%s attn=%s w=%d heads=%d/%d b=%d", a.HeadDim, a.KVCacheDtype, a.AttnDtype, a.WindowSize, a.NumHeads, a.NumKVHeads, a.BatchSize)
		}, func(i int) point { return point{out.ContextAttn[i].ISL, out.ContextAttn[i].LatencyMs} }, func(i int) bool { return i >= nAttn })
		check("moe", len(out.MoE), func(i int) string {
			m := out.MoE[i]
			return fmt.Sprintf("%s %s (%d,%d,%d,%d) tp=%d ep=%d", m.Dtype, m.Distribution, m.Hidden, m.Inter, m.TopK, m.NumExperts, m.MoETP, m.MoEEP)
		}, func(i int) point { return point{out.MoE[i].NumTokens, out.MoE[i].LatencyMs} }, func(i int) bool { return i >= nMoE })
	}
}
