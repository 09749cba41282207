package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tinyCapacity = []string{"capacity", "--num-prompts", "200", "--random-input-len", "64", "--random-output-len", "8", "--quiet"}

func capacityArgs(extra ...string) []string {
	return append(append([]string{}, tinyCapacity...), extra...)
}

// The report: capacity, the probes (the highest that held is the
// capacity, and the lowest that failed is within the precision above
// it), the SLO values at capacity, and launch lines at that rate.
func TestCapacityReport(t *testing.T) {
	out, stderr, err := run(t, capacityArgs("--slo", "ttft:p99<=50ms", "--slo", "tpot:mean<=20ms", "--gpu-hour-usd", "2", "--seeds", "2")...)
	require.NoError(t, err, stderr)
	m := regexp.MustCompile(`Capacity:\s+([0-9.]+) req/s \(([0-9.]+) req/s failed`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	capacity, _ := strconv.ParseFloat(m[1], 64)
	above, _ := strconv.ParseFloat(m[2], 64)
	assert.LessOrEqual(t, (above-capacity)/capacity, 0.02+1e-9)
	assert.Contains(t, out, "seeds 0–1")
	assert.Contains(t, out, "ttft:p99:")
	assert.Contains(t, out, "Cost:")
	assert.Regexp(t, `Binding limit:\s+\S`, out)
	held, failed := 0.0, 1e18
	for _, row := range strings.Split(out[strings.Index(out, "request_rate  held"):], "\n")[1:] {
		f := strings.Fields(row)
		if len(f) < 2 || (f[1] != "yes" && f[1] != "no") {
			break
		}
		x, _ := strconv.ParseFloat(f[0], 64)
		if f[1] == "yes" {
			held = max(held, x)
		} else {
			failed = min(failed, x)
		}
	}
	assert.InDelta(t, capacity, held, 0.005)
	assert.InDelta(t, above, failed, 0.005)
	assert.Contains(t, out, "vllm serve meta-llama/Llama-3.1-8B-Instruct --async-scheduling\n")
	assert.Contains(t, out, "--request-rate "+strconv.FormatFloat(held, 'f', -1, 64)+" --seed 0 --ignore-eos")
}

// --gpus 2 of the 8B model: 4 deployments ranked, the Pareto front, the
// plot and launch lines for each.
func TestCapacityBestTopology(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "front.svg")
	out, stderr, err := run(t, capacityArgs("--gpus", "2", "--slo", "ttft:p99<=100ms", "--plot", plot)...)
	require.NoError(t, err, stderr)
	for _, d := range []string{"TP1 PP1 DP2", "TP1 PP2 DP1", "TP2 PP1 DP1", "1P TP1 + 1D TP1"} {
		assert.Regexp(t, `(?m)^\d+\s+`+regexp.QuoteMeta(d)+`\s+2\s+`, out, d)
		assert.Contains(t, out, ". "+d+"\n", "launch lines of %s", d)
	}
	assert.Contains(t, out, "Pareto front")
	assert.Contains(t, out, "every TP × PP × DP (EP for MoE) and xPyD split of 2 GPUs in one h200-sxm node (8 GPUs per node); 4 deployments, 0 refused")
	data, err := os.ReadFile(plot)
	require.NoError(t, err)
	assert.Contains(t, string(data), "<svg")
	assert.Contains(t, out, "--prefiller-ports 8100 --decoder-hosts localhost --decoder-ports 8200")
}

func TestCapacityBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--slo", "ttft<500"}, "--slo \"ttft<500\": want METRIC:STAT<=VALUE[ms|s]"},
		{nil, "--slo: give at least one"},
		{[]string{"--slo", "ttft:p99<=1s", "--request-rate", "5"}, "--request-rate: the search sets it"},
		{[]string{"--slo", "ttft:p99<=1s", "--precision", "0"}, "--precision: must be in (0, 1)"},
		{[]string{"--slo", "ttft:p99<=1s", "--gpus", "16"}, "--gpus 16: one h200-sxm node holds 8 GPUs (one NVLink domain); --gpus enumerates the deployments of one node"},
		{[]string{"--slo", "ttft:p99<=1s", "--gpus", "2", "--tensor-parallel-size", "2"}, "--tensor-parallel-size: --gpus enumerates the layout"},
		{[]string{"--slo", "ttft:p99<=1s", "--gpus", "1", "--model", "meta-llama/Llama-3.1-70B-Instruct"},
			"--gpus 1: no deployment of the model fits; the closest (largest engines): TP1 PP1 DP1: deployment does not start: No available memory for the cache blocks"},
		{[]string{"--slo", "ttft:p99<=1s", "--plot", filepath.Join(dir, "x.png")}, "--plot: draws the Pareto front of --gpus N"},
		{[]string{"--slo", "ttft:p99<=1s", "--gpus", "2", "--plot", filepath.Join(dir, "x.pdf")}, "the file must end in .png or .svg"},
		{[]string{"--slo", "ttft:p99<=1s", "--vary", "request-rate=1,2"}, "--vary request-rate: the capacity search sets it"},
		{[]string{"--slo", "ttft:p99<=1s", "--closed-loop", "--max-concurrency", "4"}, "--max-concurrency: --closed-loop searches it"},
		{[]string{"--slo", "ttft:p99<=1s", "--max-num-seqs", "0"}, "--max-num-seqs: must be ≥ 1, got 0"},
	} {
		_, _, err := run(t, capacityArgs(c.args...)...)
		require.Error(t, err, c.args)
		assert.Contains(t, err.Error(), c.msg, c.args)
		assert.Equal(t, 2, exitCode(err), c.args)
	}
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "no plot file left behind")
}
