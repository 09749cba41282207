package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepByStepSameHostBoundBulk: when the host's per-running-request
// scheduling term is as large as a decode step's GPU time (async
// scheduling: wall = max(GPU, host)), the running count reaches the
// steps' wall times, so the bulk k-step advance (requests CSV only, no
// steps CSV) must price its cycles with the running count stepping one by
// one uses (Core.reprice). The embedded calibration's 2 µs a request
// hides a wrong count behind the GPU time: with it, reprice pricing one
// running request too many changed only the steps CSV's host_ms, and
// TestStepByStepSameBytes's requests-CSV-only runs passed. Here
// schedule_per_req_ns is 0.5 ms: ~11 running requests take ~6 ms of host
// time against ~5.3 ms of GPU time on the random example (H200), and the
// same break changes the requests CSV.
func TestStepByStepSameHostBoundBulk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the random example twice")
	}
	raw, err := os.ReadFile("../../predictor/calibrated/h100-sxm.json")
	require.NoError(t, err)
	var cal map[string]any
	require.NoError(t, json.Unmarshal(raw, &cal))
	cal["host"].(map[string]any)["schedule_per_req_ns"] = 500e3
	raw, err = json.Marshal(cal)
	require.NoError(t, err)
	dir := writeTestFiles(t, t.TempDir(), map[string]string{"host.json": string(raw)})
	rows := requestsBothWays(t, dir, "--scenario", "../../scenarios/examples/llama-3.1-8b-h200-random.yaml",
		"--calibration", filepath.Join(dir, "host.json"))
	require.Len(t, rows[true], 301)
}
