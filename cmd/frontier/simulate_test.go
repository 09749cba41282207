package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tiny is a workload small enough that one run takes milliseconds.
var tiny = []string{"simulate", "--num-prompts", "20", "--random-input-len", "64", "--random-output-len", "8", "--quiet"}

// run executes the CLI in process, as main does, and returns stdout,
// stderr and the error main would turn into the exit status.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootOf(invoked(args))
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	var err error
	require.NotPanics(t, func() { err = root.Execute() }, "frontier %s", strings.Join(args, " "))
	return out.String(), errOut.String(), err
}

func withTiny(extra ...string) []string { return append(append([]string{}, tiny...), extra...) }

// summaryInt reads an integer line of the printed summary.
func summaryInt(t *testing.T, out, label string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + `\s+(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %q in:\n%s", label, out)
	v, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return v
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows, "a header row")
	return rows
}

func column(t *testing.T, rows [][]string, name string) int {
	t.Helper()
	for i, h := range rows[0] {
		if h == name {
			return i
		}
	}
	require.Failf(t, "missing column", "%q not in %v", name, rows[0])
	return -1
}

func TestSimulateSummary(t *testing.T) {
	out, stderr, err := run(t, withTiny()...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Serving Benchmark Result (simulated)")
	assert.Equal(t, 20, summaryInt(t, out, "Successful requests:"))
	assert.Equal(t, 0, summaryInt(t, out, "Failed requests:"))
	assert.Equal(t, 20*64, summaryInt(t, out, "Total input tokens:"))
	assert.Equal(t, 20*8, summaryInt(t, out, "Total generated tokens:"))
	assert.Contains(t, out, "meta-llama/Llama-3.1-8B-Instruct on h200-sxm, TP 1 PP 1 DP 1")
	for _, l := range []string{"Mean TTFT (ms):", "Median TTFT (ms):", "P99 TTFT (ms):", "Mean TPOT (ms):", "P99 ITL (ms):"} {
		assert.Contains(t, out, l)
	}
	assert.NotContains(t, stderr, "simulated", "--quiet: no progress line")
}

func TestSimulateSaveResult(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	_, stderr, err := run(t, withTiny("--save-result", "--result-filename", path)...)
	require.NoError(t, err, stderr)
	var res map[string]any
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	for _, k := range []string{"completed", "duration", "request_throughput", "output_throughput", "total_token_throughput",
		"mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "mean_e2el_ms",
		"std_ttft_ms", "p99_tpot_ms", "p99_itl_ms", "total_input_tokens", "total_output_tokens", "request_rate"} {
		assert.Contains(t, res, k)
	}
	assert.Equal(t, 20.0, res["completed"])
	assert.Equal(t, 0.0, res["failed"])
	assert.Equal(t, "inf", res["request_rate"])
	assert.Equal(t, 1280.0, res["total_input_tokens"])
	assert.Equal(t, 160.0, res["total_output_tokens"])
	dur := res["duration"].(float64)
	assert.Greater(t, dur, 0.0)
	assert.InEpsilon(t, 20/dur, res["request_throughput"].(float64), 1e-9)
	assert.InEpsilon(t, 160/dur, res["output_throughput"].(float64), 1e-9)
	assert.InEpsilon(t, (1280+160)/dur, res["total_token_throughput"].(float64), 1e-9)
	assert.LessOrEqual(t, res["median_ttft_ms"].(float64), res["p99_ttft_ms"].(float64))
	assert.Less(t, res["mean_ttft_ms"].(float64), res["mean_e2el_ms"].(float64))
	assert.NotContains(t, res, "p90_ttft_ms", "only the asked percentiles")

	path2 := filepath.Join(dir, "result2.json")
	_, stderr, err = run(t, withTiny("--save-result", "--result-filename", path2, "--metric-percentiles", "50,90,99.9")...)
	require.NoError(t, err, stderr)
	res = map[string]any{}
	data, err = os.ReadFile(path2)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	for _, k := range []string{"p50_ttft_ms", "p90_ttft_ms", "p99.9_ttft_ms", "p90_tpot_ms", "p99.9_itl_ms", "p90_e2el_ms"} {
		assert.Contains(t, res, k)
	}
	assert.NotContains(t, res, "p99_ttft_ms")
	assert.LessOrEqual(t, res["p90_ttft_ms"].(float64), res["p99.9_ttft_ms"].(float64))
}

func TestSimulatePrintedPercentiles(t *testing.T) {
	out, _, err := run(t, withTiny("--metric-percentiles", "90,99.9", "--percentile-metrics", "ttft,e2el")...)
	require.NoError(t, err)
	assert.Contains(t, out, "P90 TTFT (ms):")
	assert.Contains(t, out, "P99.9 E2EL (ms):")
	assert.NotContains(t, out, "TPOT (ms):")
}

func TestSimulateRequestsCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.csv")
	_, stderr, err := run(t, withTiny("--requests-csv", path)...)
	require.NoError(t, err, stderr)
	rows := readCSV(t, path)
	assert.Equal(t, []string{"request_id", "stage", "engine", "prefill_engine", "kv_transfer_done_s", "arrival_s", "first_token_s", "finish_s", "ttft_ms", "e2el_ms",
		"prompt_tokens", "cached_tokens", "output_tokens", "preemptions", "failed", "session_id", "turn", "priority", "replica"}, rows[0])
	require.Len(t, rows, 1+20, "one row per request")
	id, prompt, out, failed, ttft, e2e := column(t, rows, "request_id"), column(t, rows, "prompt_tokens"),
		column(t, rows, "output_tokens"), column(t, rows, "failed"), column(t, rows, "ttft_ms"), column(t, rows, "e2el_ms")
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		seen[r[id]] = true
		assert.Equal(t, "64", r[prompt])
		assert.Equal(t, "8", r[out])
		assert.Equal(t, "false", r[failed])
		assert.Equal(t, "0", r[column(t, rows, "session_id")], "random requests are not part of a session")
		assert.Equal(t, "0", r[column(t, rows, "turn")])
		tf, err := strconv.ParseFloat(r[ttft], 64)
		require.NoError(t, err)
		ef, err := strconv.ParseFloat(r[e2e], 64)
		require.NoError(t, err)
		assert.Greater(t, tf, 0.0)
		assert.GreaterOrEqual(t, ef, tf, "E2E includes TTFT")
	}
	assert.Len(t, seen, 20, "distinct request ids")
}

func TestSimulateStepsCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "steps.csv")
	out, stderr, err := run(t, withTiny("--steps-csv", path)...)
	require.NoError(t, err, stderr)
	rows := readCSV(t, path)
	assert.Equal(t, stepHeader, rows[0])
	require.Greater(t, len(rows), 1)
	assert.Equal(t, summaryInt(t, out, "Engine steps:"), len(rows)-1, "one row per engine step")
	pre, dur := column(t, rows, "prefill_tokens"), column(t, rows, "duration_ms")
	prefill := 0
	for _, r := range rows[1:] {
		require.Len(t, r, len(stepHeader))
		v, err := strconv.Atoi(r[pre])
		require.NoError(t, err)
		prefill += v
		d, err := strconv.ParseFloat(r[dur], 64)
		require.NoError(t, err)
		assert.Greater(t, d, 0.0)
	}
	assert.Equal(t, 20*64, prefill, "every distinct prompt token is prefilled once")
}

func TestFlagsOverrideScenarioFile(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sc, []byte(`name: override-me
hardware: h100-sxm
deployment:
  model: meta-llama/Llama-3.1-8B-Instruct
  max_num_seqs: 4
  max_model_len: 2048
workload:
  random: {num_prompts: 30, input_len: 64, output_len: 8}
`), 0o644))

	out, stderr, err := run(t, "simulate", "--scenario", sc, "--quiet")
	require.NoError(t, err, stderr)
	assert.Equal(t, 30, summaryInt(t, out, "Successful requests:"), "the file's value")
	assert.Contains(t, out, "on h100-sxm")
	assert.Contains(t, out, "override-me")

	res := filepath.Join(dir, "r.json")
	out, stderr, err = run(t, "simulate", "--scenario", sc, "--quiet", "--num-prompts", "12", "--hardware", "h200-sxm",
		"--random-output-len", "4", "--save-result", "--result-filename", res)
	require.NoError(t, err, stderr)
	assert.Equal(t, 12, summaryInt(t, out, "Successful requests:"), "--num-prompts overrides num_prompts")
	assert.Equal(t, 12*4, summaryInt(t, out, "Total generated tokens:"))
	assert.Equal(t, 12*64, summaryInt(t, out, "Total input tokens:"), "keys without a flag keep the file's value")
	assert.Contains(t, out, "on h200-sxm")

	// a flag that breaks a file value is reported against the flag typed
	_, _, err = run(t, "simulate", "--scenario", sc, "--quiet", "--max-num-seqs", "0")
	require.Error(t, err)
	assert.Equal(t, "--max-num-seqs: must be ≥ 1, got 0", err.Error())
}

func TestMaxConcurrencyZeroIsUnlimited(t *testing.T) {
	out, stderr, err := run(t, withTiny("--max-concurrency", "0")...)
	require.NoError(t, err, stderr)
	assert.Equal(t, 20, summaryInt(t, out, "Successful requests:"))
	out, stderr, err = run(t, withTiny("--max-concurrency", "2", "--request-rate", "50")...)
	require.NoError(t, err, stderr)
	assert.Equal(t, 20, summaryInt(t, out, "Successful requests:"))
}

// TestBadInputsAreUsageErrors checks that every bad input is a usage
// error (exit status 2 in main) whose message names the flag or the key.
func TestBadInputsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(badYAML, []byte("hardware: h100-sxm\ndeployment: {model: meta-llama/Llama-2-7b-hf, max_num_seq: 8}\n"), 0o644))
	emptyYAML := filepath.Join(dir, "empty.yaml")
	require.NoError(t, os.WriteFile(emptyYAML, nil, 0o644))
	badTrace := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(badTrace, []byte("arrival_s,prompt_tokens,output_tokens\n0,64,8\n0.5,-3,8\n"), 0o644))

	cases := []struct {
		name string
		args []string
		want []string // substrings of the message
	}{
		{"unknown model", withTiny("--model", "acme/NoSuchModel-7B"), []string{"--model: model ", "acme/NoSuchModel-7B", "known:"}},
		{"unknown hardware", withTiny("--hardware", "v100"), []string{"hardware", `"v100"`, "a100-sxm, b200-sxm, gb200, h100-sxm, h200-sxm, h800, l40s, rtx-pro-6000"}},
		{"unknown dataset", withTiny("--dataset-name", "sharegpt"), []string{"--dataset-name: ", `"sharegpt"`, "random, shared_prefix, trace"}},
		{"max-num-seqs 0", withTiny("--max-num-seqs", "0"), []string{"--max-num-seqs: must be ≥ 1, got 0"}},
		{"max-num-batched-tokens 0", withTiny("--max-num-batched-tokens", "0"), []string{"--max-num-batched-tokens: must be ≥ 1, got 0"}},
		{"max-model-len 0", withTiny("--max-model-len", "0"), []string{"--max-model-len: must be ≥ 1, got 0"}},
		{"request-rate -1", withTiny("--request-rate", "-1"), []string{"--request-rate: must be > 0", "got -1"}},
		{"request-rate abc", withTiny("--request-rate", "abc"), []string{"--request-rate", `"abc"`}},
		{"request-rate NaN", withTiny("--request-rate", "NaN"), []string{"--request-rate: "}},
		{"request-rate beyond the clock", withTiny("--request-rate", "1e-300"), []string{"--request-rate: ", "beyond the simulated clock"}},
		{"burstiness NaN", withTiny("--request-rate", "4", "--burstiness", "NaN"), []string{"--burstiness: ", "NaN"}},
		{"gpu-memory-utilization 0.01", withTiny("--gpu-memory-utilization", "0.01"), []string{"No available memory for the cache blocks", "gpu_memory_utilization"}},
		{"gpu-memory-utilization NaN", withTiny("--gpu-memory-utilization", "NaN"), []string{"--gpu-memory-utilization: must be in (0, 1], got NaN"}},
		{"gpu-memory-utilization 1.5", withTiny("--gpu-memory-utilization", "1.5"), []string{"--gpu-memory-utilization: must be in (0, 1], got 1.5"}},
		{"max-model-len beyond the model", withTiny("--max-model-len", "200000"), []string{"--max-model-len: ", "200000", "131072"}},
		{"tensor-parallel-size not dividing heads", withTiny("--tensor-parallel-size", "3"), []string{"--tensor-parallel-size: ", "(3)"}},
		{"trace missing", []string{"simulate", "--quiet", "--dataset-path", filepath.Join(dir, "nope.csv")}, []string{"--dataset-path: ", "nope.csv"}},
		{"trace bad row", []string{"simulate", "--quiet", "--dataset-path", badTrace}, []string{"line 3", "prompt_tokens", `"-3"`}},
		{"random flags on a trace", withTiny("--dataset-path", badTrace), []string{"--num-prompts", "only for the random dataset"}},
		{"metric-percentiles 150", withTiny("--metric-percentiles", "150"), []string{"--metric-percentiles", `"150"`, "[0, 100]"}},
		{"metric-percentiles x", withTiny("--metric-percentiles", "50,x"), []string{"--metric-percentiles", `"x"`}},
		{"metric-percentiles empty", withTiny("--metric-percentiles", ","), []string{"--metric-percentiles", "at least one"}},
		{"ignore-eos false", withTiny("--ignore-eos=false"), []string{"--ignore-eos=false", "not simulated"}},
		{"ep and no-ep", withTiny("--enable-expert-parallel", "--no-enable-expert-parallel"), []string{"--enable-expert-parallel and --no-enable-expert-parallel: give one"}},
		{"caching and no-caching", withTiny("--enable-prefix-caching", "--no-enable-prefix-caching"), []string{"give one of them"}},
		{"percentile-metrics", withTiny("--percentile-metrics", "ttft,latency"), []string{"--percentile-metrics", `"latency"`}},
		{"num-prompts 0", withTiny("--num-prompts", "0"), []string{"--num-prompts: must be ≥ 1, got 0"}},
		{"block-size 12", withTiny("--block-size", "12"), []string{"--block-size: ", "got 12"}},
		{"timeout 0", withTiny("--timeout", "0"), []string{"--timeout: must be > 0 s or unset, got 0"}},
		{"kv-cache-dtype", withTiny("--kv-cache-dtype", "int3"), []string{"--kv-cache-dtype: ", `"int3"`}},
		{"shared_prefix without a file", []string{"simulate", "--quiet", "--dataset-name", "shared_prefix"}, []string{"workload.shared_prefix: required"}},
		{"unknown flag", withTiny("--max-num-seq", "8"), []string{"unknown flag: --max-num-seq"}},
		{"flag wrong type", withTiny("--tensor-parallel-size", "two"), []string{"tensor-parallel-size", `"two"`}},
		{"stray argument", withTiny("extra"), []string{`"extra"`}},
		{"scenario missing", withTiny("--scenario", filepath.Join(dir, "nope.yaml")), []string{"--scenario: open", "nope.yaml"}},
		{"scenario unknown key", withTiny("--scenario", badYAML), []string{"deployment.max_num_seq: unknown key", "bad.yaml"}},
		{"scenario empty", withTiny("--scenario", emptyYAML), []string{"empty file", "empty.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireBadInput(t, c.args, c.want...) })
	}
}

// TestExamplesRunEndToEnd runs every scenario of scenarios/examples.
func TestExamplesRunEndToEnd(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, stderr, err := run(t, "simulate", "--scenario", f, "--quiet")
			require.NoError(t, err, stderr)
			assert.Positive(t, summaryInt(t, out, "Successful requests:"))
		})
	}
}

// TestTraceExampleEndToEnd replays the example trace and checks that every
// row became one request with the trace's lengths and send times, and
// that the prefix groups hit the prefix cache.
func TestTraceExampleEndToEnd(t *testing.T) {
	const csvPath = "../../scenarios/examples/chat-trace.csv"
	trace := readCSV(t, csvPath)
	n := len(trace) - 1
	require.GreaterOrEqual(t, n, 10)
	require.LessOrEqual(t, n, 30)

	dir := t.TempDir()
	reqPath, resPath := filepath.Join(dir, "requests.csv"), filepath.Join(dir, "result.json")
	out, stderr, err := run(t, "simulate", "--scenario", "../../scenarios/examples/llama-3.1-8b-h100-trace.yaml", "--quiet",
		"--requests-csv", reqPath, "--save-result", "--result-filename", resPath)
	require.NoError(t, err, stderr)
	assert.Equal(t, n, summaryInt(t, out, "Successful requests:"))

	wantIn, wantOut := 0, 0
	arrivals := map[string]int{}
	for _, r := range trace[1:] {
		p, _ := strconv.Atoi(r[1])
		o, _ := strconv.Atoi(r[2])
		wantIn, wantOut = wantIn+p, wantOut+o
		a, _ := strconv.ParseFloat(r[0], 64)
		arrivals[strconv.FormatFloat(a, 'f', 3, 64)+"/"+r[1]]++
	}
	assert.Equal(t, wantIn, summaryInt(t, out, "Total input tokens:"))
	assert.Equal(t, wantOut, summaryInt(t, out, "Total generated tokens:"))

	rows := readCSV(t, reqPath)
	require.Len(t, rows, n+1)
	arr, prompt, cached := column(t, rows, "arrival_s"), column(t, rows, "prompt_tokens"), column(t, rows, "cached_tokens")
	hits := 0
	for _, r := range rows[1:] {
		a, err := strconv.ParseFloat(r[arr], 64)
		require.NoError(t, err)
		arrivals[strconv.FormatFloat(a, 'f', 3, 64)+"/"+r[prompt]]--
		c, _ := strconv.Atoi(r[cached])
		if c > 0 {
			hits++
		}
	}
	for k, v := range arrivals {
		assert.Zero(t, v, "trace row %s sent once at its arrival time", k)
	}
	assert.Positive(t, hits, "repeated system prompts hit the prefix cache")

	var res map[string]any
	data, err := os.ReadFile(resPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, float64(n), res["completed"])
}

// A request longer than max_model_len is refused by vLLM's API server
// (HTTP 400) and counted as failed by bench serve; the others still run.
// 64 prompt + 8 output tokens > 50: every tiny request is rejected.
func TestRequestsBeyondMaxModelLenAreRejected(t *testing.T) {
	out, _, err := run(t, withTiny("--max-model-len", "50")...)
	require.NoError(t, err)
	assert.Equal(t, 0, summaryInt(t, out, "Successful requests:"))
	assert.Equal(t, 20, summaryInt(t, out, "Failed requests:"))
	assert.Contains(t, out, "rejected (prompt + output > max_model_len):")
}
