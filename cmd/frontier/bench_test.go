package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bench latency prints latency.py's lines (Python float repr, seconds)
// and writes its JSON keys in its order, indent 4.
func TestBenchLatencyOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lat.json")
	out, stderr, err := run(t, "bench", "latency", "--num-iters-warmup", "1", "--num-iters", "3", "--output-len", "16", "--output-json", path)
	require.NoError(t, err, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 9)
	assert.Equal(t, "Warming up...", lines[0])
	num := `(\d+\.\d+(e-\d\d)?)`
	assert.Regexp(t, regexp.MustCompile(`^Avg latency: `+num+` seconds$`), lines[1])
	assert.Equal(t, "Std latency: 0.0 seconds", lines[2], "every iteration does the same work")
	for i, p := range []string{"10", "25", "50", "75", "90", "99"} {
		assert.Regexp(t, regexp.MustCompile(`^`+p+`% percentile latency: `+num+` seconds$`), lines[3+i])
	}
	assert.Contains(t, stderr, "prefix caching off", "latency.py's default")
	assert.Contains(t, stderr, "max_num_batched_tokens 16384, max_num_seqs 1024", "the LLM class's defaults on an H200")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	assert.True(t, strings.HasPrefix(text, "{\n    \"avg_latency\": "), text)
	for _, k := range []string{`"std_latency": 0.0,`, "\"latencies\": [\n        ", "\"percentiles\": {\n        \"10\": "} {
		assert.Contains(t, text, k)
	}
	var v struct {
		Avg         float64            `json:"avg_latency"`
		Latencies   []float64          `json:"latencies"`
		Percentiles map[string]float64 `json:"percentiles"`
	}
	require.NoError(t, json.Unmarshal(data, &v))
	assert.Len(t, v.Latencies, 3)
	assert.Equal(t, v.Avg, v.Percentiles["99"])
	assert.Contains(t, lines[1], pyFloat(v.Avg))
}

// Offline means no API server: a calibration whose API-server and client
// terms are huge changes nothing in bench latency or throughput, while
// the same terms slow simulate's served requests.
func TestBenchCarriesNoAPIServerTime(t *testing.T) {
	calib := filepath.Join(t.TempDir(), "api.json")
	require.NoError(t, os.WriteFile(calib, []byte(`{"host": {"request_overhead_ns": 1e9, "stream_per_token_ns": 1e8, "api_request_ns": 1e8, "api_token_ns": 1e7, "tokenize_per_token_ns": 1e5}}`), 0o644))
	for _, args := range [][]string{
		{"bench", "latency", "--num-iters-warmup", "0", "--num-iters", "2", "--output-len", "8"},
		{"bench", "throughput", "--input-len", "64", "--output-len", "8", "--num-prompts", "20"},
	} {
		plain, stderr, err := run(t, args...)
		require.NoError(t, err, stderr)
		heavy, stderr, err := run(t, append(args, "--calibration", calib)...)
		require.NoError(t, err, stderr)
		assert.Equal(t, plain, heavy, "%v", args)
	}
	plain, _, err := run(t, withTiny()...)
	require.NoError(t, err)
	heavy, _, err := run(t, withTiny("--calibration", calib)...)
	require.NoError(t, err)
	assert.Greater(t, summaryFloat(t, heavy, "Mean TTFT (ms):"), summaryFloat(t, plain, "Mean TTFT (ms):")+1000, "served, the API server's time counts")
}

// bench throughput prints throughput.py's lines and JSON keys; with the
// shared --prefix-len, every prompt after the first hits the prefix's
// full blocks, so it runs faster than without.
func TestBenchThroughputOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "thr.json")
	out, stderr, err := run(t, "bench", "throughput", "--input-len", "128", "--output-len", "16", "--num-prompts", "50", "--output-json", path)
	require.NoError(t, err, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "When dataset path is not set, it will default to random dataset", lines[0])
	assert.Regexp(t, `^Throughput: \d+\.\d\d requests/s, \d+\.\d\d total tokens/s, \d+\.\d\d output tokens/s$`, lines[1])
	assert.Equal(t, "Total num prompt tokens:  6400", lines[2])
	assert.Equal(t, "Total num output tokens:  800", lines[3])
	var v map[string]float64
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &v))
	assert.Equal(t, 50.0, v["num_requests"])
	assert.Equal(t, 7200.0, v["total_num_tokens"])
	assert.InDelta(t, 50/v["elapsed_time"], v["requests_per_second"], 1e-9)
	assert.InDelta(t, 7200/v["elapsed_time"], v["tokens_per_second"], 1e-6)
	assert.True(t, strings.HasPrefix(string(data), "{\n    \"elapsed_time\": "))

	noPrefix, _, err := run(t, "bench", "throughput", "--dataset-name", "random", "--input-len", "1024", "--output-len", "4", "--num-prompts", "64")
	require.NoError(t, err)
	withPrefix, _, err := run(t, "bench", "throughput", "--dataset-name", "random", "--input-len", "0", "--prefix-len", "1024", "--output-len", "4", "--num-prompts", "64")
	require.Error(t, err, "--input-len 0 is refused")
	withPrefix, stderr, err = run(t, "bench", "throughput", "--dataset-name", "random", "--input-len", "1", "--prefix-len", "1023", "--output-len", "4", "--num-prompts", "64")
	require.NoError(t, err, stderr)
	assert.Contains(t, withPrefix, "Total num prompt tokens:  65536")
	assert.Greater(t, summaryFloat(t, withPrefix, "Throughput:"), summaryFloat(t, noPrefix, "Throughput:"), "shared prefix blocks are computed once")
}

func TestBenchBadInput(t *testing.T) {
	dir := t.TempDir()
	lengths := filepath.Join(dir, "l.csv")
	require.NoError(t, os.WriteFile(lengths, []byte("prompt_len,output_len\n100,x\n"), 0o644))
	cases := []usageCase{
		{"n 2", []string{"bench", "latency", "--n", "2"}, "--n 2: parallel sampling"},
		{"beam search", []string{"bench", "latency", "--use-beam-search"}, "--use-beam-search: not simulated"},
		{"batch 0", []string{"bench", "latency", "--batch-size", "0"}, "--batch-size: must be in [1, 2000000], got 0"},
		{"too long", []string{"bench", "latency", "--max-model-len", "100", "--input-len", "64", "--output-len", "64"}, "Please ensure that max_model_len is greater than the sum of input_len and output_len"},
		{"dp", []string{"bench", "latency", "--data-parallel-size", "2"}, "Data parallel is only supported with external launcher mode with synchronous engine in offline benchmark"},
		{"unknown model", []string{"bench", "latency", "--model", "acme/None"}, "--model: model \"acme/None\": not a known model id"},
		{"no input len", []string{"bench", "throughput"}, "--input-len: input_len must be provided for a random dataset"},
		{"backend", []string{"bench", "throughput", "--input-len", "8", "--backend", "hf"}, "--backend hf: only vllm"},
		{"sharegpt file", []string{"bench", "throughput", "--dataset-path", lengths}, "--dataset-name sharegpt --dataset-path: not simulated"},
		{"lengths bad row", []string{"bench", "throughput", "--dataset-name", "lengths", "--dataset-path", lengths}, lengths + " line 2: output_len"},
		{"throughput too long", []string{"bench", "throughput", "--input-len", "200", "--output-len", "100", "--max-model-len", "256"}, "Please ensure that max_model_len is greater than the sum of prompt_len and expected_output_len for all requests"},
		{"async engine", []string{"bench", "throughput", "--input-len", "8", "--async-engine"}, "--async-engine: not simulated"},
		{"stray", []string{"bench", "latency", "x"}, `"x"`},
		// review finding: said deployment.max_num_seqs: must be ≥ 1, got 0
		{"budget 0", []string{"bench", "throughput", "--input-len", "8", "--max-num-batched-tokens", "0"}, "--max-num-batched-tokens: must be ≥ 1, got 0"},
	}
	checkUsageErrors(t, cases)
}
