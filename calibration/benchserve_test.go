package calibration

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadBenchServeFixture(t *testing.T) {
	r, err := ReadBenchServe("testdata/bench_serve_result.json")
	require.NoError(t, err)

	assert.Equal(t, "vllm", r.Backend)
	assert.Equal(t, "meta-llama/Llama-2-7b-hf", r.ModelID)
	assert.Equal(t, 200, r.NumPrompts)
	assert.True(t, math.IsInf(r.RequestRate, 1), `"inf" request rate`)
	assert.Equal(t, 32, r.MaxConcurrency)
	assert.Equal(t, 199, r.Completed)
	assert.Equal(t, 1, r.Failed)
	assert.Equal(t, 41.25, r.DurationS)
	assert.Equal(t, 102400, r.TotalInputTokens)
	assert.Equal(t, 25472, r.TotalOutputTokens)
	assert.Equal(t, 4.824242424242424, r.RequestThroughput)
	assert.Equal(t, 0.0, r.RequestGoodput) // null
	assert.Equal(t, 617.5030303030303, r.OutputThroughput)
	assert.Equal(t, 3099.927272727273, r.TotalTokenThroughput)

	// Milliseconds, as written.
	assert.True(t, r.TTFT.Present)
	assert.Equal(t, 61.5, r.TTFT.Mean)
	assert.Equal(t, 55.25, r.TTFT.Median)
	assert.Equal(t, 12.75, r.TTFT.Std)
	assert.Equal(t, 120.125, r.TTFT.P99)
	assert.Equal(t, map[string]float64{"p90": 80.5, "p99": 120.125, "p99.9": 140.0}, r.TTFT.Percentiles)
	assert.Equal(t, 11.5, r.TPOT.Mean)
	assert.Equal(t, 19.0, r.ITL.P99)
	assert.Equal(t, 1522.0, r.E2EL.Mean)
	assert.Equal(t, map[string]float64{"p50": 1500.5, "p99": 1790.75}, r.E2EL.Percentiles)
}

func TestReadBenchServeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}

	_, err := ReadBenchServe(write("no_completed.json", `{"duration": 10}`))
	require.ErrorContains(t, err, "completed: missing")

	p := write("bad_type.json", `{"duration": 10, "completed": 5, "mean_ttft_ms": "fast"}`)
	_, err = ReadBenchServe(p)
	require.ErrorContains(t, err, p)
	require.ErrorContains(t, err, "mean_ttft_ms")

	r, err := ReadBenchServe(write("minimal.json", `{"duration": 10, "completed": 5, "request_rate": 2.5}`))
	require.NoError(t, err)
	assert.Equal(t, 2.5, r.RequestRate)
	assert.False(t, r.E2EL.Present)

	_, err = ReadBenchServe(filepath.Join(dir, "absent.json"))
	require.Error(t, err)
}
