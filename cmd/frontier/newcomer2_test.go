package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newcomer2 H1: --router without --replicas used to be ignored without a
// word; now a note says it routes nothing, and what balances DP ranks.
// (--replicas 1 --router X stays the single deployment byte for byte:
// TestOneReplicaIsTheSingleDeployment.)
func TestRouterWithoutReplicasIsNoted(t *testing.T) {
	_, stderr, err := run(t, withTiny("--router", "prefix-cache", "--data-parallel-size", "2")...)
	require.NoError(t, err)
	assert.Contains(t, stderr, "note: replicas.router (--router) prefix-cache routes requests between replicas (replicas.count, --replicas), and this deployment has one, so it routes nothing; the 2 data-parallel ranks of a vllm serve are balanced by vLLM's own DP balancer (the scenario's top-level router key: least_loaded)\n")
	_, stderr, err = run(t, withTiny("--router", "prefix-cache", "--replicas", "2")...)
	require.NoError(t, err)
	assert.NotContains(t, stderr, "routes nothing")
}

// The requests CSV reads back as a trace (its extra columns are ignored,
// none is taken for a misspelt trace column: newcomer2 E2's guard).
func TestRequestsCSVReadsBackAsATrace(t *testing.T) {
	dir := t.TempDir()
	reqs := filepath.Join(dir, "r.csv")
	out, _, err := run(t, withTiny("--request-rate", "10", "--requests-csv", reqs)...)
	require.NoError(t, err)
	again, _, err := run(t, "simulate", "--quiet", "--dataset-path", reqs)
	require.NoError(t, err)
	assert.Equal(t, summaryInt(t, out, "Successful requests:"), summaryInt(t, again, "Successful requests:"))
	assert.Equal(t, summaryInt(t, out, "Total input tokens:"), summaryInt(t, again, "Total input tokens:"))
	// a misspelt column is refused, exit 2
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("arrival_s,prompt_tokens,output_tokens,priorty\n0,64,8,1\n"), 0o644))
	requireBadInput(t, []string{"simulate", "--quiet", "--dataset-path", bad, "--scheduling-policy", "priority"}, `column "priorty" is not a trace column; did you mean "priority"?`)
}

// newcomer2 A1: a sweep could not vary between the checkpoint's own
// weights and fp8 (`--vary quantization=,fp8`: empty value;
// `quantization=none,fp8`: unknown method). vLLM reads an optional
// argument's "None" as unset (arg_utils.optional_type), and so does
// --quantization now.
func TestQuantizationNoneIsTheCheckpointsOwn(t *testing.T) {
	plain, _, err := run(t, withTiny()...)
	require.NoError(t, err)
	none, _, err := run(t, withTiny("--quantization", "None")...)
	require.NoError(t, err)
	assert.Equal(t, plain, none)
	out, _, err := run(t, "sweep", "--num-prompts", "20", "--random-input-len", "64", "--random-output-len", "8", "--vary", "quantization=None,fp8")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^0\s+None\s+1\s+20\s`, out)
	assert.Regexp(t, `(?m)^1\s+fp8\s+1\s+20\s`, out)
	requireBadInput(t, withTiny("--quantization", "none"), `unknown quantization method "none"`, "--quantization None: the checkpoint's own, as vLLM reads an unset optional argument")
}

// newcomer2 A5: the offline benchmarks took no --vllm-version (nor
// --predictor), so the H100/H200 comparison the README explains by table
// versions could not be checked on one version.
func TestBenchTakesTheTableFlags(t *testing.T) {
	for _, b := range [][]string{
		{"bench", "latency", "--num-iters-warmup", "0", "--num-iters", "1", "--input-len", "512", "--output-len", "16", "--hardware", "h100-sxm"},
		{"bench", "throughput", "--input-len", "512", "--output-len", "16", "--num-prompts", "50", "--hardware", "h100-sxm"},
	} {
		def, _, err := run(t, b...)
		require.NoError(t, err)
		same, _, err := run(t, append(b, "--vllm-version", "0.14.0")...) // h100-sxm's default set
		require.NoError(t, err)
		assert.Equal(t, def, same)
		other, stderr, err := run(t, append(b, "--vllm-version", "0.19.0")...)
		require.NoError(t, err)
		assert.NotEqual(t, def, other, "another table set prices the steps differently")
		assert.NotContains(t, stderr, "error")
		reg, _, err := run(t, append(b, "--predictor", "regression")...)
		require.NoError(t, err)
		assert.NotEqual(t, def, reg)
		requireBadInput(t, append(b, "--vllm-version", "9.9.9"), "--vllm-version")
	}
}

// newcomer2 H3: vllm bench serve takes any --metric-percentiles numpy
// does, [0, 100] (np.percentile: 0 is the minimum, 100 the maximum), and
// writes p0_… and p100_… keys; frontier refused 100.
func TestMetricPercentilesZeroAndHundred(t *testing.T) {
	dir := t.TempDir()
	res, reqs := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	out, _, err := run(t, withTiny("--request-rate", "20", "--metric-percentiles", "0,100", "--save-result", "--result-filename", res, "--requests-csv", reqs)...)
	require.NoError(t, err)
	var v map[string]any
	b, err := os.ReadFile(res)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	rows, err := os.ReadFile(reqs)
	require.NoError(t, err)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, line := range strings.Split(strings.TrimSpace(string(rows)), "\n")[1:] {
		f, err := strconv.ParseFloat(strings.Split(line, ",")[8], 64) // ttft_ms
		require.NoError(t, err)
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	assert.InDelta(t, lo, v["p0_ttft_ms"], 1e-6)
	assert.InDelta(t, hi, v["p100_ttft_ms"], 1e-6)
	assert.Contains(t, out, "P0 TTFT (ms):")
	assert.Contains(t, out, "P100 TTFT (ms):")
	requireBadInput(t, withTiny("--metric-percentiles", "100.5"), "--metric-percentiles: each must be a number in [0, 100]")
	requireBadInput(t, withTiny("--metric-percentiles", "-1"), "--metric-percentiles: each must be a number in [0, 100]")
}

// newcomer2 H4: a scenario file without name: printed an empty Scenario:
// line, and a missing file's error did not name --scenario.
func TestScenarioFileWithoutNameAndMissingFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(file, []byte("hardware: h200-sxm\ndeployment: {model: meta-llama/Llama-3.1-8B-Instruct}\nworkload:\n  random: {num_prompts: 10, input_len: 64, output_len: 8}\n"), 0o644))
	out, _, err := run(t, "simulate", "--quiet", "--scenario", file)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^Scenario:\s+mine\.yaml$`, out)
	requireBadInput(t, []string{"simulate", "--scenario", filepath.Join(dir, "nope.yaml")}, "--scenario: open "+filepath.Join(dir, "nope.yaml")+": no such file or directory")
}

// newcomer2 E3: --requests-csv wrote a trace's sessions as numbers
// ("user0" → 1), so its rows could not be joined back to the trace; it
// writes the trace's labels now (numbers for the sessions dataset).
func TestRequestsCSVKeepsTraceSessionLabels(t *testing.T) {
	dir := t.TempDir()
	trace, reqs := filepath.Join(dir, "t.csv"), filepath.Join(dir, "r.csv")
	require.NoError(t, os.WriteFile(trace, []byte("session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens\n"+
		"bob,1,,0.7,580,24\nalice,1,,0.0,600,20\nalice,2,4.5,,900,15\n,,,0.3,100,5\n"), 0o644))
	_, _, err := run(t, "simulate", "--quiet", "--dataset-path", trace, "--requests-csv", reqs)
	require.NoError(t, err)
	rows := readCSV(t, reqs)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var got [][2]string
	for _, rec := range rows[1:] {
		got = append(got, [2]string{rec[col["session_id"]], rec[col["turn"]]})
	}
	assert.Equal(t, [][2]string{{"alice", "1"}, {"alice", "2"}, {"0", "0"}, {"bob", "1"}}, got)
}
