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
	truth := `{"completed": ` + itoa(sum.Completed) + `, "duration": 1, "request_throughput": 1, "output_throughput": 1, "total_token_throughput": 1`
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
	require.NotEmpty(t, rows)
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
}

func itoa(v int) string { return strconv.Itoa(v) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 17, 64) }
