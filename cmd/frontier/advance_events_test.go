package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeTestFiles writes files (name → content) into dir and returns dir.
func writeTestFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// requestsBothWays runs `simulate --quiet` with args both ways (stepping
// one by one, and the default), requires the same stdout, stderr and
// requests CSV bytes, and returns each way's requests CSV rows.
func requestsBothWays(t *testing.T, dir string, args ...string) map[bool][][]string {
	t.Helper()
	rows := map[bool][][]string{}
	got := map[bool][]string{}
	for _, stepByStep := range []bool{true, false} {
		if stepByStep {
			t.Setenv(stepByStepEnv, "1")
		} else {
			t.Setenv(stepByStepEnv, "")
		}
		reqs := filepath.Join(dir, "requests-"+strconv.FormatBool(stepByStep)+".csv")
		stdout, stderr, err := run(t, append(append([]string{"simulate", "--quiet"}, args...), "--requests-csv", reqs)...)
		require.NoError(t, err)
		csv, err := os.ReadFile(reqs)
		require.NoError(t, err)
		got[stepByStep] = []string{stdout, stderr, string(csv)}
		rows[stepByStep] = readCSV(t, reqs)
	}
	require.Equal(t, got[true], got[false], "stdout, stderr and requests CSV differ from stepping one by one")
	return rows
}

// TestStepByStepSameLiveKVRouterInsideAdvance: with a router that reads
// live engine metrics (kv-usage, replicas.metrics_interval_ms 0), a
// client send handled inside the bulk k-step advance (cohortBulk, no step
// sink) scrapes replica 0's KV blocks as they were when the advance began:
// its block work is only done at the end (Scheduler.AdvanceCohort).
//
// Replica 0 decodes request 1 (6,075 prompt tokens, 6,000 of them cached
// by request 0; block_size 1: one more block a step) while replica 1
// prefills request 2 (6,100 tokens, one ~140 ms step). Request 3 is sent
// at 0.7 s, inside that step: stepping one by one, replica 0 then holds
// 6,102 blocks, more than replica 1's 6,100, so request 3 goes to replica
// 1 (engine 1); the advance, begun at ~0.6 s, reports ~6,090 and sends it
// to replica 0 (TTFT 24.5 ms instead of 61.8 ms). Found by attack10b;
// introduced by 3b8abf7 (client sends handled inside the advance).
func TestStepByStepSameLiveKVRouterInsideAdvance(t *testing.T) {
	dir := writeTestFiles(t, t.TempDir(), map[string]string{
		"trace.csv": "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n" +
			"0,6000,1,g,6000\n0.5,6075,2000,g,6000\n0.6,6100,2000,,\n0.7,100,10,,\n",
	})
	sc := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sc, []byte(`name: kv
hardware: h100-sxm
deployment: {model: meta-llama/Llama-3.1-8B-Instruct, max_model_len: 8192, block_size: 1, max_num_batched_tokens: 8192}
replicas: {count: 2, router: kv-usage, metrics_interval_ms: 0}
workload: {dataset: trace, trace: {path: `+filepath.Join(dir, "trace.csv")+`}}
`), 0o644))
	rows := requestsBothWays(t, dir, "--scenario", sc)
	require.Equal(t, "replica", rows[true][0][18])
	require.Equal(t, "1", rows[true][4][18], "step by step, request 3 goes to replica 1")
}

// TestStepByStepSameTieAfterStoppedAdvance: an event that the k-step advance
// queues while handling a client send inside a step (pastEvents: here the
// engine admission of request 3, at exactly the step's end) goes before
// that step's end when the advance then stops for another event inside
// the step (request 2's admission to the busy core): launch queues the
// step's end after it, where stepping one by one queued it when the step
// began, before. Request 3 then joins the waiting queue before the
// schedule at the step's end and is admitted with request 2 (TTFT
// 18.76 ms) instead of one step later (26.10 ms).
//
// Request 1 decodes alone on one core (h100-sxm, default calibration:
// intake 3,637,795 ns for a 50-token prompt); its step ends at
// 1,011,755,956 ns. Request 2's admission comes 1 ms before it, request
// 3's exactly at it, request 4's send 0.5 ms before it. (The times come
// from a step-by-step steps CSV; a change of step prices moves the step's
// end and the test no longer makes the tie.) Found by attack10b;
// introduced by 3b8abf7, with and without a step sink.
func TestStepByStepSameTieAfterStoppedAdvance(t *testing.T) {
	dir := writeTestFiles(t, t.TempDir(), map[string]string{
		"trace.csv": "arrival_s,prompt_tokens,output_tokens\n0.000000000,10,2\n0.100000000,100,400\n" +
			"1.007118161,50,5\n1.008118161,50,5\n1.011255956,50,5\n",
	})
	for _, steps := range []bool{false, true} {
		t.Run("steps csv "+strconv.FormatBool(steps), func(t *testing.T) { tieAfterStoppedAdvance(t, dir, steps) })
	}
}

func tieAfterStoppedAdvance(t *testing.T, dir string, steps bool) {
	{
		args := []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100-sxm",
			"--dataset-name", "trace", "--dataset-path", filepath.Join(dir, "trace.csv")}
		if steps {
			args = append(args, "--steps-csv", filepath.Join(dir, "steps.csv"))
		}
		rows := requestsBothWays(t, dir, args...)
		require.Equal(t, "ttft_ms", rows[true][0][8])
		require.Equal(t, "26.098415", rows[true][4][8], "step by step, request 3 waits a step")
	}
}

// TestStepByStepSameDeadlineTieAfterStoppedAdvance is the flip of
// TestStepByStepSameTieAfterStoppedAdvance with client deadlines:
// request 1's deadline (idle: it completed) falls inside the
// step ending at T = 1,003,282,366 ns and is handled inside the advance,
// which queues request 2's deadline at exactly T; the advance then stops
// in that step (its tokens reach a new second of the peak throughput),
// and launch queues the step's end after the deadline. Request 2 then
// times out before the step's end samples its 131st token (130 output
// tokens instead of 131, and one step fewer in the steps CSV). Timeout
// 0.902282366 s = T minus request 2's send (0.101 s). Found by attack10b;
// introduced by 3b8abf7, with and without a step sink.
func TestStepByStepSameDeadlineTieAfterStoppedAdvance(t *testing.T) {
	dir := writeTestFiles(t, t.TempDir(), map[string]string{
		"trace.csv": "arrival_s,prompt_tokens,output_tokens\n0,10,2\n0.1,100,50\n0.101,100,400\n",
	})
	for _, steps := range []bool{false, true} {
		t.Run("steps csv "+strconv.FormatBool(steps), func(t *testing.T) {
			args := []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100-sxm",
				"--dataset-name", "trace", "--dataset-path", filepath.Join(dir, "trace.csv"), "--timeout", "0.902282366"}
			if steps {
				args = append(args, "--steps-csv", filepath.Join(dir, "steps.csv"))
			}
			rows := requestsBothWays(t, dir, args...)
			require.Equal(t, "output_tokens", rows[true][0][12])
			require.Equal(t, []string{"131", "true"}, []string{rows[true][3][12], rows[true][3][14]},
				"step by step, request 2 gets its 131st token, then times out")
		})
	}
}
