package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/calibration"
)

// --predictor regression prices through the regressed tables (a note says
// so) and lands near interpolation on a small run; the scenario key does
// the same; a wrong value names the flag or the key.
func TestPredictorFlagAndKey(t *testing.T) {
	interp, _, err := run(t, withTiny()...)
	require.NoError(t, err)
	reg, stderr, err := run(t, withTiny("--predictor", "regression")...)
	require.NoError(t, err)
	assert.Contains(t, stderr, "predictor regression: GEMM, attention, MoE and collective latencies are per-series regressions")
	a, b := summaryFloat(t, interp, "Mean TPOT (ms):"), summaryFloat(t, reg, "Mean TPOT (ms):")
	assert.NotEqual(t, a, b, "the regressed tables price the steps")
	assert.InDelta(t, 1, b/a, 0.10)

	_, _, err = run(t, withTiny("--predictor", "spline")...)
	require.EqualError(t, err, `--predictor: must be interp or regression, got "spline"`)
	_, _, err = run(t, "gate", "--predictor", "spline")
	require.EqualError(t, err, `--predictor: must be interp or regression, got "spline"`)

	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	write := func(kind string) {
		body := "hardware: h100-sxm\npredictor: " + kind + "\ndeployment: {model: meta-llama/Llama-2-7b-hf}\n" +
			"workload: {dataset: random, random: {num_prompts: 20, input_len: 64, output_len: 8}}\n"
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	write("regression")
	_, stderr, err = run(t, "simulate", "--scenario", path, "--quiet")
	require.NoError(t, err)
	assert.Contains(t, stderr, "predictor regression:")
	write("cubic")
	_, _, err = run(t, "simulate", "--scenario", path, "--quiet")
	require.ErrorContains(t, err, `predictor: must be interp or regression, got "cubic"`)
}

// profile show reports the regressions' residuals per family.
func TestProfileShowRegressionResiduals(t *testing.T) {
	out, stderr, err := run(t, "profile", "show", "--hardware", "h100-sxm")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "regression residuals (--predictor regression")
	for _, family := range []string{"gemm bfloat16: 9240 rows, |error| median", "decode attention:", "prefill attention:", "moe:", "comm:"} {
		assert.Contains(t, out, "\n  "+family)
	}
}

// The per-request rows of one cell become one panel per statistic, in ms,
// windows in order; other cells' rows and rows without a window are left out.
func TestWindowPanels(t *testing.T) {
	rows := []calibration.Row{
		{Cell: "a/stage_0", Metric: "ttft_p90", Truth: 1, Sim: 2},
		{Cell: "a/stage_0", Metric: "tpot_mean@0-150s", Truth: 0.010, Sim: 0.011},
		{Cell: "a/stage_0", Metric: "ttft_median@0-150s", Truth: 0.05, Sim: 0.04},
		{Cell: "b/stage_0", Metric: "tpot_mean@0-150s", Truth: 1, Sim: 1},
		{Cell: "a/stage_0", Metric: "tpot_mean@300-450s", Truth: 0.012, Sim: 0.011},
	}
	p := windowPanels(rows, "a/stage_0")
	require.Len(t, p, 2)
	assert.Equal(t, "mean TPOT", p[0].Name)
	assert.Equal(t, []float64{0, 300}, p[0].Starts)
	assert.Equal(t, []float64{150, 450}, p[0].Ends)
	assert.InDeltaSlice(t, []float64{10, 12}, p[0].Measured, 1e-9)
	assert.InDeltaSlice(t, []float64{11, 11}, p[0].Simulated, 1e-9)
	assert.Equal(t, "median TTFT", p[1].Name)
	assert.InDeltaSlice(t, []float64{50}, p[1].Measured, 1e-9)
}
