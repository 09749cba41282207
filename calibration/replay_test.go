package calibration

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/sim/workload"
)

// The small fixture lists requests out of arrival order, with a failed
// request (0 tokens, no TTFT) and two requests sent in the same µs.
func TestReadReplayUnitsOrderAndErrorRows(t *testing.T) {
	r, err := ReadReplay("testdata/replay_small")
	require.NoError(t, err)
	assert.Equal(t, "small", r.Experiment)
	assert.Equal(t, 1, r.TensorParallelism)
	assert.Equal(t, 7462, r.KVBlocksTotalGPU)
	assert.Equal(t, 7463, r.VLLMBlocks(), "vLLM's blocks = kv_blocks_total_gpu + 1")

	var idx []int
	var at []int64
	for _, q := range r.Requests {
		idx, at = append(idx, q.Index), append(at, q.ArrivalUs)
	}
	assert.Equal(t, []int{0, 1, 2, 3}, idx, "arrival order, equal arrivals by index")
	assert.Equal(t, []int64{0, 1_250_000, 2_500_000, 2_500_000}, at, "µs as written")

	assert.Equal(t, ReplayRequest{Index: 1, ArrivalUs: 1_250_000, InputTokens: 601, OutputTokens: 0, TTFTS: 0.125, E2ES: 2.0}, r.Requests[1],
		"seconds as written; a success may carry 0 re-tokenized output tokens")
	failed := r.Requests[2]
	assert.True(t, failed.Failed)
	assert.Equal(t, 0, failed.InputTokens)
	assert.True(t, math.IsNaN(failed.TTFTS), "a failure has no TTFT")
	assert.Equal(t, 300.5, failed.E2ES)

	samples := ReplaySamples(r.Requests[1:])
	assert.Equal(t, RequestSample{OffsetS: 1.25, TTFTS: 0.5, E2ES: 2.5}, samples[2], "offsets in s from the first request given")
}

func TestReadReplayErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	_, err := ReadReplay(dir)
	require.ErrorContains(t, err, "requests.json.gz exists in "+dir, "missing files name the folder")

	cfg := `{"config": {"tensor_parallelism": 2, "max_num_seqs": 128, "max_num_batched_tokens": 2048, "kv_blocks_total_gpu": 100, "block_size": 16}, "requests": [`
	cases := []struct {
		name, requests, truth, want string
	}{
		{"duplicate index", `{"index": 0, "arrival_time_us": 0, "input_tokens": 5}, {"index": 0, "arrival_time_us": 1, "input_tokens": 5}]}`, `[]`, "0 appears twice"},
		{"negative arrival", `{"index": 0, "arrival_time_us": -1, "input_tokens": 5}]}`, `[]`, "arrival_time_us: must be in [0, 1e+12] µs"},
		{"success without prompt", `{"index": 0, "arrival_time_us": 0, "input_tokens": 0}]}`, `[]`, "needs input_tokens ≥ 1"},
		{"error flags disagree", `{"index": 0, "arrival_time_us": 0, "input_tokens": 5}]}`, `[{"index": 0, "has_error": true, "e2e_s": 300}]`, "has_error true"},
		{"ttft after e2e", `{"index": 0, "arrival_time_us": 0, "input_tokens": 5}]}`, `[{"index": 0, "ttft_s": 2, "e2e_s": 1}]`, "0 ≤ ttft_s ≤ e2e_s"},
		{"unknown index", `{"index": 0, "arrival_time_us": 0, "input_tokens": 5}]}`, `[{"index": 7, "ttft_s": 1, "e2e_s": 2}]`, "7 is not a request"},
		{"count mismatch", `{"index": 0, "arrival_time_us": 0, "input_tokens": 5}]}`, `[]`, "0 entries"},
	}
	for _, c := range cases {
		write("requests.json", cfg+c.requests)
		write("per_request_truth.json", c.truth)
		_, err := ReadReplay(dir)
		require.ErrorContains(t, err, c.want, c.name)
	}
	write("requests.json", `{"config": {"tensor_parallelism": 2, "max_num_seqs": 128, "max_num_batched_tokens": 2048, "block_size": 16}, "requests": []}`)
	_, err = ReadReplay(dir)
	require.ErrorContains(t, err, "config.kv_blocks_total_gpu: must be ≥ 1")
}

// The committed (gzip) replay of Mixtral reasoning: its counts, vLLM's KV
// capacity, arrival order, 0-token error rows, and the stage statistics
// the lifecycle file reports recomputed from the per-request truth.
func TestReadReplayCommittedRun(t *testing.T) {
	run := "groundtruth/20260218-135247-mixtral-8x7b-v0-1-tp2-reasoning"
	r, err := ReadReplay(filepath.Join(run, "replay"))
	require.NoError(t, err)
	assert.Len(t, r.Requests, 4800)
	assert.Equal(t, 27511, r.VLLMBlocks(), "shared/README.md: Mixtral-8x7B TP2 27,511 blocks")
	failed := 0
	for i, q := range r.Requests {
		if i > 0 {
			require.GreaterOrEqual(t, q.ArrivalUs, r.Requests[i-1].ArrivalUs)
		}
		if q.Failed {
			failed++
			assert.Zero(t, q.InputTokens+q.OutputTokens, "error rows carry 0 tokens")
			assert.InDelta(t, 300, q.E2ES, 1.5, "failures are the 300 s timeout")
		}
	}
	ip, err := ReadInferencePerf(run)
	require.NoError(t, err)
	assert.Equal(t, ip.Stages[0].Failures, failed)
	var ttft []float64
	for _, s := range ReplaySamples(r.Requests) {
		if !s.Failed {
			ttft = append(ttft, s.TTFTS)
		}
	}
	assert.Len(t, ttft, ip.Stages[0].Successes)
	sum := Summarize(ttft)
	assert.InDelta(t, ip.Stages[0].TTFT.Median, sum.Median, 1e-9*sum.Median)
	assert.InDelta(t, ip.Stages[0].TTFT.P90, sum.P90, 1e-9*sum.P90)
	last := r.Requests[len(r.Requests)-1].ArrivalUs
	assert.InDelta(t, 1200e6, float64(last), 1e6, "one stage of 1,200 s")
}

func TestReplayPlan(t *testing.T) {
	r, err := ReadReplay("testdata/replay_small")
	require.NoError(t, err)
	mk := func(id int, at int64, key uint64) workload.Request {
		return workload.Request{ID: int32(id), At: at, PromptTokens: 592, OutputTokens: 248, ContentKey: key, PrefixKey: 9, PrefixTokens: 100}
	}
	recipe := &workload.Plan{Stages: []workload.Stage{
		{Requests: []workload.Request{mk(0, 0, 11), mk(1, 7e8, 12)}, IntervalNs: 1e9},
		{Requests: []workload.Request{mk(2, 0, 13), mk(3, 3e8, 14)}, IntervalNs: 1e9},
	}}
	plan, info, err := ReplayPlan(recipe, r, 592, 250)
	require.NoError(t, err)
	want := [][]workload.Request{
		{{ID: 0, At: 0, PromptTokens: 590, OutputTokens: 250, ContentKey: 11, PrefixKey: 9, PrefixTokens: 100},
			{ID: 1, At: 1_250_000_000, PromptTokens: 601, OutputTokens: 250, ContentKey: 12, PrefixKey: 9, PrefixTokens: 100}},
		{{ID: 2, At: 0, PromptTokens: 592, OutputTokens: 250, ContentKey: 13, PrefixKey: 9, PrefixTokens: 100},
			{ID: 3, At: 0, PromptTokens: 585, OutputTokens: 250, ContentKey: 14, PrefixKey: 9, PrefixTokens: 100}},
	}
	require.Len(t, plan.Stages, 2)
	for k := range want {
		assert.Equal(t, want[k], plan.Stages[k].Requests, "stage %d", k)
		assert.Equal(t, int64(1e9), plan.Stages[k].IntervalNs)
	}
	assert.Equal(t, ReplayInfo{Requests: 4, Failed: 1, PromptLen: 592, OutputLen: 250, FileOutputMean: (240 + 0 + 250) / 3.0}, info)
	assert.Contains(t, info.Note(), "1 failed ones carry no lengths in the files and are sent with the recipe's lengths (the run's mean prompt, 592 tokens)")

	recipe.Stages[1].Requests = recipe.Stages[1].Requests[:1]
	_, _, err = ReplayPlan(recipe, r, 592, 250)
	require.ErrorContains(t, err, "4 requests, but the run's stages send 3")
}

func TestWindowRows(t *testing.T) {
	nan := math.NaN()
	truth := []RequestSample{
		{OffsetS: 0.5, TTFTS: 0.1, E2ES: 1.1},
		{OffsetS: 0.7, TTFTS: 0.3, E2ES: 2.3},
		{OffsetS: 2.5, TTFTS: nan, E2ES: 300, Failed: true},
		{OffsetS: 4.0, TTFTS: 1, E2ES: 2}, // the stage's end: last window
	}
	simulated := []RequestSample{{OffsetS: 0.1, TTFTS: 0.2, E2ES: 1.2}, {OffsetS: 3.5, Failed: true}}
	rows := WindowRows("c", truth, simulated, 4, 11)
	require.Len(t, rows, 4, "windows 1-2s and 2-3s have no real success: no rows")
	assert.Equal(t, "tpot_mean@0-1s", rows[0].Metric)
	assert.InDelta(t, 0.15, rows[0].Truth, 1e-12)
	assert.InDelta(t, 0.1, rows[0].Sim, 1e-12)
	assert.Equal(t, "ttft_median@0-1s", rows[1].Metric)
	assert.InDelta(t, 0.2, rows[1].Truth, 1e-12)
	assert.InDelta(t, 0.2, rows[1].Sim, 1e-12)
	assert.Equal(t, "tpot_mean@3-4s", rows[2].Metric)
	assert.InDelta(t, 0.1, rows[2].Truth, 1e-12)
	assert.True(t, math.IsNaN(rows[2].Sim), "no simulated success in the window")
	for _, r := range rows {
		assert.False(t, r.Gated, "per-request rows are reported only")
	}
}

// gate --replay on a committed run: the same cell rows as the recipe, the
// per-request rows and the KV check, and a note that says what was used.
func TestGateReplayMode(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a 9,000-request run twice")
	}
	path := "../scenarios/gate/20260218-150956-codellama-34b-tp2-codegen.yaml"
	recipe, err := GateScenario(path, GateOptions{})
	require.NoError(t, err)
	var note string
	replayed, err := GateScenario(path, GateOptions{Replay: true, Note: func(_, n string) { note = n }})
	require.NoError(t, err)
	require.Len(t, replayed, len(recipe))
	metrics := map[string]bool{}
	for i := range recipe {
		assert.Equal(t, recipe[i].Metric, replayed[i].Metric)
		assert.Equal(t, recipe[i].Truth, replayed[i].Truth, "same truth in both modes")
		metrics[recipe[i].Metric] = true
	}
	assert.True(t, metrics["tpot_mean@0-150s"] && metrics["ttft_median@450-600s"] && metrics[MetricKVBlocks])
	assert.Contains(t, note, "replay: 9000 requests at their real send times")
	assert.Contains(t, note, "every request generates the requested 247 tokens")
}

// The markdown table puts the per-request rows of a cell in their own
// column, one list per metric with a slot per window ("–" where no real
// request succeeded), and kv_blocks among the reported rows.
func TestRenderMarkdownWindows(t *testing.T) {
	rows := []Row{
		{Cell: "run/stage_0", Metric: MetricTPOTMean, Truth: 1, Sim: 1.02, RelErr: 0.02, Gated: true, Pass: true},
		{Cell: "run/stage_0", Metric: "tpot_mean@0-150s", Truth: 1, Sim: 0.9, RelErr: 0.1},
		{Cell: "run/stage_0", Metric: "ttft_median@0-150s", Truth: 1, Sim: 1.5, RelErr: 0.5},
		{Cell: "run/stage_0", Metric: "tpot_mean@300-450s", Truth: 1, Sim: 1.25, RelErr: 0.25},
		{Cell: "run/stage_0", Metric: "ttft_median@300-450s", Truth: 2, Sim: 1, RelErr: 0.5},
		{Cell: "run/stage_0", Metric: MetricKVBlocks, Truth: 100, Sim: 99, RelErr: 0.01},
	}
	var b strings.Builder
	require.NoError(t, RenderMarkdown(&b, rows, []string{"run"}))
	assert.Contains(t, b.String(), "| run/stage_0 | train | PASS | tpot_mean +2.00% | kv_blocks -1.00% | "+
		"tpot_mean -10.00% / – / +25.00% / –; ttft_median +50.00% / – / -50.00% / – |\n")
}
