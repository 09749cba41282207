package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The API server process is one FIFO for request intake and token
// streaming. With a host calibration whose tokens stream for free
// (api_token_ns 0) but whose intake takes 100 ms (api_request_ns 1e8,
// plus 200 ns × 100 prompt tokens of tokenizing), a request sent while
// another is still being taken in waits for it: request 2 is sent at
// 2.5 s and taken in until 2.60002 s, request 3 is sent at 2.51 s and
// taken in from 2.60002 s to 2.70004 s, then reaches the engine core
// request_overhead_ns (3,480,208 ns, truncated) later, at 2.703520208 s,
// so its first token cannot come before that. Request 1 (400 tokens,
// sent at 1 s after request 0 has completed, so its chunks are counted
// per second) is decoding meanwhile: the decode cohort streams its tokens
// in bulk. Stepping one by one (FRONTIER_STEP_BY_STEP=1) gets request 3's
// first token at 2.718580593 s; the default run got it at 2.629478336 s
// (main 4458d26 to 011a9e6), before its intake could have ended: a cohort
// step ending between the two sends streamed its member's token with svc
// 0 and set the API server's free time back to the step's end
// (sim/cohort.go streamBulk: api.free = base + served × svc, base = the
// step's end when svc is 0), dropping request 2's intake. The outputs
// must be the same bytes both ways, and request 3's first token after its
// intake.
func TestStepByStepSameBytesFreeTokenStreaming(t *testing.T) {
	dir := t.TempDir()
	var cal struct {
		Hardware string          `json:"hardware"`
		Host     json.RawMessage `json:"host"`
	}
	b, err := os.ReadFile("../../predictor/calibrated/h100-sxm.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cal))
	var host map[string]any
	require.NoError(t, json.Unmarshal(cal.Host, &host))
	host["api_token_ns"] = 0
	host["api_request_ns"] = 1e8
	require.Equal(t, 200.0, host["tokenize_per_token_ns"])
	require.InDelta(t, 3480208.6, host["request_overhead_ns"], 0.1)
	out, err := json.Marshal(map[string]any{"hardware": "h100-sxm", "host": host})
	require.NoError(t, err)
	calib := filepath.Join(dir, "calib.json")
	require.NoError(t, os.WriteFile(calib, out, 0o644))
	trace := filepath.Join(dir, "trace.csv")
	require.NoError(t, os.WriteFile(trace, []byte("arrival_s,prompt_tokens,output_tokens\n"+
		"0.0,100,10\n1.0,100,400\n2.5,100,10\n2.51,100,10\n"), 0o644))

	rows := requestsBothWays(t, dir, "--calibration", calib, "--dataset-name", "trace", "--dataset-path", trace)
	for _, stepByStep := range []bool{true, false} {
		rows := rows[stepByStep]
		require.Len(t, rows, 5)
		require.Equal(t, "first_token_s", rows[0][6])
		first, err := strconv.ParseFloat(rows[4][6], 64)
		require.NoError(t, err)
		intake := 1e8 + 200*100 // ns: api_request_ns + tokenize_per_token_ns × prompt
		admitted := 2.5e9 + 2*intake + 3480208
		require.GreaterOrEqual(t, first*1e9, float64(admitted)-1,
			"step by step %v: request 3's first token at %.9f s, before its intake ended (%.9f s)", stepByStep, first, admitted/1e9)
	}
}
