package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The newcomer's overloaded run says so in the summary and in a note
// (DetectGrowth); a run the deployment keeps up with says neither.
func TestOverloadInSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2,000-request run")
	}
	out, stderr, err := run(t, "simulate", "--request-rate", "26", "--num-prompts", "2000",
		"--random-input-len", "1024", "--random-output-len", "256", "--quiet")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Load:                                    overloaded, the queue still grew at the last send (see the note)")
	assert.Contains(t, stderr, "note: overloaded: TTFT and the queue were still growing at the last send")

	out, stderr, err = run(t, withTiny("--request-rate", "5")...)
	require.NoError(t, err, stderr)
	assert.NotContains(t, out, "Load:")
	assert.NotContains(t, stderr, "overloaded")
}

// Flag errors name the flag the user typed (on main: --request-rate -5
// said workload.arrivals.request_rate), an alias as typed, "unset" for
// null; a value from a scenario file keeps its key and names the file;
// --max-concurrency -1 says 0 / unset means no limit.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{withTiny("--request-rate", "-5"), "--request-rate: must be > 0 requests/s or inf, got -5"},
		{[]string{"simulate", "--quiet", "--num-prompts", "4", "--input-len", "0"}, "--input-len: must be ≥ 1, got 0"},
		{withTiny("--random-output-len", "0"), "--random-output-len: must be ≥ 1, got 0"},
		{withTiny("--api-server-count", "0"), "--api-server-count: must be in [1, 1024] or unset (= data_parallel_size), got 0"},
		{withTiny("--max-concurrency", "-1"), "--max-concurrency: must be ≥ 1, or 0 (the default) for no limit as in vllm bench serve, got -1"},
	}
	for _, c := range cases {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.want)
		assert.ErrorAs(t, err, new(usageError))
		assert.Equal(t, c.want, err.Error())
	}

	file := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`hardware: h200-sxm
deployment: {model: meta-llama/Llama-3.1-8B-Instruct}
workload:
  dataset: random
  random: {num_prompts: 4, input_len: 64, output_len: 4}
  arrivals: {request_rate: -5}
`), 0o644))
	_, _, err := run(t, "simulate", "--quiet", "--scenario", file)
	require.Error(t, err)
	assert.Equal(t, file+": workload.arrivals.request_rate: must be > 0 requests/s or inf, got -5", err.Error())
	_, _, err = run(t, "simulate", "--quiet", "--scenario", file, "--request-rate", "-2")
	require.Error(t, err)
	assert.Equal(t, "--request-rate: must be > 0 requests/s or inf, got -2", err.Error(), "the flag overrides the file")

	help, _, err := run(t, "simulate", "--help")
	require.NoError(t, err)
	assert.Contains(t, help, "auto | bfloat16 | float16 | half", "--dtype lists half, as vLLM accepts it")
}

// bench serve's "Peak output token throughput (tok/s)" and its JSON key
// max_output_tokens_per_s: 20 requests of 8 tokens sent at once, every
// chunk within the first second, so the peak is every chunk.
func TestPeakOutputThroughputReported(t *testing.T) {
	res := filepath.Join(t.TempDir(), "r.json")
	out, stderr, err := run(t, withTiny("--save-result", "--result-filename", res)...)
	require.NoError(t, err, stderr)
	peak := summaryFloat(t, out, "Peak output token throughput (tok/s):")
	assert.Greater(t, summaryFloat(t, out, "Benchmark duration (s):"), 0.0)
	assert.LessOrEqual(t, summaryFloat(t, out, "Benchmark duration (s):"), 1.0)
	assert.Equal(t, 160.0, peak, "20 × 8 chunks, none merged, all in second 0")
	data, err := os.ReadFile(res)
	require.NoError(t, err)
	var j map[string]any
	require.NoError(t, json.Unmarshal(data, &j))
	assert.Equal(t, peak, j["max_output_tokens_per_s"])
}

// The default quick start's API-server note says in one line what it means
// for the user (on main it only said ITL runs above TPOT); --help says
// bench serve's --random-input-len default (1024) next to ours (512, the
// embedded default's).
func TestQuickStartNotesAndDefaults(t *testing.T) {
	_, stderr, err := run(t, "simulate", "--quiet")
	require.NoError(t, err)
	assert.Regexp(t, `note: API server saturated: \d+ % of output tokens reached clients merged into a previous SSE chunk, so a streaming client sees a chunk every \d+ ms \(mean ITL\) although each request gains a token every \d+ ms \(mean TPOT\): the API server process, not the GPU, limits what users see; --api-server-count adds processes`, stderr)

	help, _, err := run(t, "simulate", "--help")
	require.NoError(t, err)
	assert.Contains(t, help, "unset: the --scenario file's value, else the embedded default's 512 (vllm bench serve's default is 1024")
}
