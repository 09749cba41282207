package calibration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A bench serve result whose values no `vllm bench serve` writes is
// refused naming the file and key, instead of gated as if measured (on
// main: completed -60 and request_throughput -3 gated as FAIL rows,
// completed 1e300 read as -9.2e18, p150_ttft_ms reported against NaN).
func TestReadBenchServeRefusesImpossibleValues(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ json, want string }{
		{`{"completed": -60, "duration": 6}`, "completed: must be ≥ 0, got -60"},
		{`{"completed": 60, "duration": 6, "request_throughput": -3}`, "request_throughput: must be ≥ 0, got -3"},
		{`{"completed": 60, "duration": 6, "mean_ttft_ms": -1}`, "mean_ttft_ms: must be ≥ 0, got -1"},
		{`{"completed": 1e300, "duration": 6}`, "completed: want an integer ≤ 2^53, got 1e+300"},
		{`{"completed": 60, "duration": 6, "p150_ttft_ms": 10}`, "p150_ttft_ms: a percentile in [0, 100], got 150"},
		{`{"completed": 60, "duration": 6, "p99_tpot_ms": -2}`, "p99_tpot_ms: must be ≥ 0, got -2"},
	} {
		path := filepath.Join(dir, "r.json")
		require.NoError(t, os.WriteFile(path, []byte(c.json), 0o644))
		_, err := ReadBenchServe(path)
		require.Error(t, err, c.json)
		assert.Contains(t, err.Error(), path+": "+c.want)
	}
	// vLLM's own extremes still read: 0 completed, p0 and p100.
	path := filepath.Join(dir, "r.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"completed": 0, "duration": 6, "p0_ttft_ms": 0, "p100_ttft_ms": 20, "request_rate": "inf"}`), 0o644))
	r, err := ReadBenchServe(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"p0": 0, "p100": 20}, r.TTFT.Percentiles)
}

// Replay values beyond any run are refused naming file, request and key:
// on main a failed request without e2e_s made gate --observations panic
// (makeslice: its end time was NaN), e2e_s 1e12 exhausted memory (a
// reconstruction grid of 10^12 one-second cells), and arrival_time_us past
// 2^63 ns ÷ 1000 overflowed ReplayPlan's send times.
func TestReadReplayBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	cfg := `{"config": {"tensor_parallelism": 2, "max_num_seqs": 128, "max_num_batched_tokens": 2048, "kv_blocks_total_gpu": 100, "block_size": 16}, "requests": [`
	for _, c := range []struct{ requests, truth, want string }{
		{`{"index": 0, "arrival_time_us": 0, "has_error": true}]}`, `[{"index": 0, "has_error": true}]`, "request 0: e2e_s: missing (every request has one: a failure's is when the client gave up)"},
		{`{"index": 0, "arrival_time_us": 0, "input_tokens": 5}]}`, `[{"index": 0, "ttft_s": 1, "e2e_s": 1e12}]`, "request 0: e2e_s: must be in [0, 1e+06] s, got 1e+12"},
		{`{"index": 0, "arrival_time_us": 0, "has_error": true}]}`, `[{"index": 0, "has_error": true, "e2e_s": -3}]`, "request 0: e2e_s: must be in [0, 1e+06] s, got -3"},
		{`{"index": 0, "arrival_time_us": 9000000000000000000, "input_tokens": 5}]}`, `[{"index": 0, "ttft_s": 1, "e2e_s": 2}]`, "request 0: arrival_time_us: must be in [0, 1e+12] µs"},
		// A planned request's lengths are int32 (workload.Request): past
		// scenarios.MaxTokens a count is refused, not wrapped.
		{`{"index": 0, "arrival_time_us": 0, "input_tokens": 5000000000}]}`, `[{"index": 0, "ttft_s": 1, "e2e_s": 2}]`, "request 0: input_tokens 5000000000, output_tokens 0: a successful request needs input_tokens ≥ 1, and counts are in [0, 10000000]"},
	} {
		write("requests.json", cfg+c.requests)
		write("per_request_truth.json", c.truth)
		_, err := ReadReplay(dir)
		require.Error(t, err, c.truth)
		assert.Contains(t, err.Error(), c.want)
	}
}
