package calibration

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim"
)

// A vllm-bench-serve gate cell end to end: the ground truth is a result
// JSON written with bench serve's keys from a simulation of the very same
// scenario, so every compared metric must match exactly (rel_err 0) and
// the cell pass; a perturbed truth must fail.
func TestGateBenchServeCell(t *testing.T) {

	dir := t.TempDir()
	scenario := `name: bench
hardware: h100-sxm
deployment: {model: meta-llama/Llama-3.1-8B-Instruct, max_model_len: 4096}
workload:
  dataset: random
  random: {num_prompts: 60, input_len: 256, output_len: 32}
  arrivals: {request_rate: 10}
ground_truth: {format: vllm-bench-serve, path: truth.json}
`
	path := filepath.Join(dir, "bench.yaml")
	require.NoError(t, os.WriteFile(path, []byte(scenario), 0o644))
	sc, err := scenarios.Load(path)
	require.NoError(t, err)
	require.NoError(t, sc.Validate())
	s, _, err := sim.Build(sc, sim.Options{})
	require.NoError(t, err)
	res := s.Run()
	sum := sim.Summarize(res.Requests, res.ITL, []float64{99}, sim.SLO{})
	truth := `{"completed": ` + itoa(sum.Completed) + `, "duration": 1, "request_throughput": ` + ftoa(sum.RequestThroughput) +
		`, "output_throughput": ` + ftoa(sum.OutputThroughput) + `, "total_token_throughput": 1`
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, k := range []string{"mean", "median", "std", "p99"} {
			key := k + "_" + m + "_ms"
			truth += `, "` + key + `": ` + ftoa(sum.Latencies[key])
		}
	}
	truth += "}"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "truth.json"), []byte(truth), 0o644))
	rows, err := GateScenario(path, GateOptions{})
	require.NoError(t, err)
	require.Len(t, rows, 3+4*3, "completed, two throughputs, mean/median/p99 of four latencies")
	for _, r := range rows {
		assert.InDelta(t, 0, r.RelErr, 1e-9, "%s", r.Metric)
	}
	p, f := Verdicts(rows)
	assert.Equal(t, [2]int{1, 0}, [2]int{p, f})

	// 20 % slower truth TTFT: the cell fails on ttft_mean.
	perturbed := `{"completed": ` + itoa(sum.Completed) + `, "duration": 1, "mean_ttft_ms": ` + ftoa(sum.Latencies["mean_ttft_ms"]*1.2) +
		`, "median_ttft_ms": ` + ftoa(sum.Latencies["median_ttft_ms"]) + `, "std_ttft_ms": 1, "p99_ttft_ms": 1}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "truth.json"), []byte(perturbed), 0o644))
	rows, err = GateScenario(path, GateOptions{})
	require.NoError(t, err)
	p, f = Verdicts(rows)
	assert.Equal(t, [2]int{0, 1}, [2]int{p, f})

	_, err = GateScenario(path, GateOptions{Replay: true})
	require.ErrorContains(t, err, "--replay: needs an inference-perf run with per-request replay files")
}

func itoa(v int) string { return strconv.Itoa(v) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 17, 64) }

// A result that leaves keys out: the gate compares only what the file
// carries (a missing median_ttft_ms used to read as 0 and fail the cell),
// gates completed, request_throughput and the TTFT/TPOT mean and median
// present, and reports every percentile key and ITL.
func TestCompareBenchServeSkipsAbsentKeys(t *testing.T) {
	truth, err := ReadBenchServe("testdata/bench_serve_partial.json")
	require.NoError(t, err)
	assert.False(t, truth.Has("median_ttft_ms"))
	assert.False(t, truth.Has("output_throughput"))
	assert.False(t, truth.Has("request_goodput"), "null reads as absent")
	assert.True(t, truth.Has("request_throughput"))
	assert.True(t, truth.TTFT.Present)
	assert.True(t, truth.ITL.Present, "percentile and median keys without a mean")
	assert.False(t, truth.E2EL.Present)
	assert.Equal(t, []float64{90, 95, 99.9}, BenchPercentiles(truth))

	s := sim.BenchSummary{Completed: 100, RequestThroughput: 4.2, OutputThroughput: 1,
		Latencies: map[string]float64{
			"mean_ttft_ms": 42, "median_ttft_ms": 0, "p90_ttft_ms": 66, "p99.9_ttft_ms": 99,
			"mean_tpot_ms": 10.5, "median_tpot_ms": 9.5,
			"mean_itl_ms": 50, "median_itl_ms": 12, "p95_itl_ms": 14,
			"mean_e2el_ms": 1, "median_e2el_ms": 1,
		}}
	rows := CompareBenchServe("c", truth, s)
	type want struct {
		metric      string
		truth, sim  float64
		gated, pass bool
	}
	exp := []want{
		{"completed", 100, 100, true, true},
		{"request_throughput", 4, 4.2, true, true},
		{"ttft_mean", 0.040, 0.042, true, true},
		{"ttft_p90", 0.060, 0.066, false, true},
		{"ttft_p99.9", 0.090, 0.099, false, true},
		{"tpot_mean", 0.010, 0.0105, true, true},
		{"tpot_median", 0.0095, 0.0095, true, true},
		{"itl_median", 0.009, 0.012, false, false},
		{"itl_p95", 0.014, 0.014, false, true},
	}
	require.Len(t, rows, len(exp))
	for i, e := range exp {
		r := rows[i]
		assert.Equal(t, e.metric, r.Metric)
		assert.InDelta(t, e.truth, r.Truth, 1e-12, e.metric)
		assert.InDelta(t, e.sim, r.Sim, 1e-12, e.metric)
		assert.Equal(t, e.gated, r.Gated, e.metric)
		assert.Equal(t, e.pass, r.Pass, e.metric)
	}
	p, f := Verdicts(rows)
	assert.Equal(t, [2]int{1, 0}, [2]int{p, f}, "the ITL miss is reported, not gated")

	// Request throughput 12 % high fails the cell; output throughput would
	// not be looked at (the file has none).
	s.RequestThroughput = 4.48
	p, f = Verdicts(CompareBenchServe("c", truth, s))
	assert.Equal(t, [2]int{0, 1}, [2]int{p, f})
}
