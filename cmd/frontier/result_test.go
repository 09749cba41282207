package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// Without --result-filename the file gets bench serve's default name in
// --result-dir (created), and the run says where it went.
func TestSaveResultDefaultName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "run1")
	_, stderr, err := run(t, append(tiny[:len(tiny)-1:len(tiny)-1], "--save-result", "--result-dir", dir, "--request-rate", "10", "--max-concurrency", "4")...)
	require.NoError(t, err, stderr)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	name := entries[0].Name()
	assert.Regexp(t, regexp.MustCompile(`^openai-10\.0qps-concurrency4-Llama-3\.1-8B-Instruct-\d{8}-\d{6}\.json$`), name)
	assert.Contains(t, stderr, "result: "+filepath.Join(dir, name))
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	var res map[string]any
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, name[len(name)-len("20261129-080509.json"):len(name)-len(".json")], res["date"], "one timestamp for the name and the JSON")
	assert.Equal(t, "openai", res["backend"])
	assert.Nil(t, res["label"])
}

// --append-result adds one JSON object per line.
func TestAppendResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	for _, rate := range []string{"5", "inf"} {
		_, stderr, err := run(t, withTiny("--append-result", "--result-filename", path, "--request-rate", rate)...)
		require.NoError(t, err, stderr)
	}
	fh, err := os.Open(path)
	require.NoError(t, err)
	defer fh.Close()
	var rates []any
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var row map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), "each line is one JSON object")
		rates = append(rates, row["request_rate"])
	}
	assert.Equal(t, []any{5.0, "inf"}, rates)
}

// The result-file flags refuse what bench serve would not do.
func TestResultFlagErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := run(t, withTiny("--result-filename", filepath.Join(dir, "r.json"))...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "add --save-result")
	_, _, err = run(t, withTiny("--save-result", filepath.Join(dir, "r.json"))...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--result-filename FILE")
	var u usageError
	assert.ErrorAs(t, err, &u)
	assert.NoFileExists(t, filepath.Join(dir, "r.json"))
}

// rateName prints the rate as Python prints bench serve's float.
func TestRateName(t *testing.T) {
	mk := func(r float64) *scenarios.Scenario {
		sc := &scenarios.Scenario{}
		sc.Workload.Arrivals.RequestRate = scenarios.Rate(r)
		return sc
	}
	for rate, want := range map[float64]string{math.Inf(1): "infqps", 10: "10.0qps", 2.5: "2.5qps", 1e20: "1e+20qps",
		0.00001: "1e-05qps", 1.5e-7: "1.5e-07qps", 0.0001: "0.0001qps", 123456789: "123456789.0qps"} {
		assert.Equal(t, want, rateName(mk(rate)), "%v", rate)
	}
	staged := mk(1)
	staged.Workload.Arrivals.Stages = []scenarios.Stage{{Rate: 4, DurationS: 10}}
	assert.Equal(t, "stages", rateName(staged))
	now := time.Date(2026, 11, 29, 8, 5, 9, 0, time.UTC)
	p, err := resultFlags{save: true, label: "mine", backend: "openai", now: now}.path(mk(1), "org/Model-X")
	require.NoError(t, err)
	assert.Equal(t, "mine-1.0qps-Model-X-20261129-080509.json", p)
	p, err = resultFlags{save: true, backend: "vllm", now: now}.path(staged, "m")
	require.NoError(t, err)
	assert.Equal(t, "vllm-stages-m-20261129-080509.json", p)
	// os.path.join: an absolute file name ignores --result-dir.
	p, err = resultFlags{save: true, backend: "openai", dir: "d", name: "/abs/r.json", now: now}.path(mk(1), "m")
	require.NoError(t, err)
	assert.Equal(t, "/abs/r.json", p)
	_, err = resultFlags{save: true, backend: "tgi", now: now}.path(mk(1), "m")
	assert.ErrorContains(t, err, "--backend: one of openai, openai-chat, vllm")
	_, err = resultFlags{save: true, backend: "openai", label: "a/b", now: now}.path(mk(1), "m")
	assert.ErrorContains(t, err, "--label")
}

// A run refused after the folder check leaves no folder behind.
func TestResultDirNotLeftBehind(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "leftover", "deep")
	_, _, err := run(t, withTiny("--save-result", "--result-dir", dir, "--model", "meta-llama/Llama-3.1-70B-Instruct", "--hardware", "h100-sxm")...)
	require.Error(t, err, "70B does not fit one H100")
	assert.NoDirExists(t, filepath.Join(root, "leftover"))
}

// --goodput adds bench serve's goodput line and key; without it the key is
// null. --input-len/--output-len are bench serve's general forms.
func TestGoodputAndLenAliases(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.json")
	out, stderr, err := run(t, "simulate", "--quiet", "--num-prompts", "20", "--input-len", "64", "--output-len", "8",
		"--goodput", "ttft:100000,e2el:100000", "--save-result", "--result-filename", path)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Request goodput (req/s):")
	assert.Contains(t, out, "Peak concurrent requests:")
	var res map[string]any
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, 160.0, res["total_output_tokens"], "20 × --output-len 8")
	assert.Equal(t, 20.0*64, res["total_input_tokens"], "--input-len 64")
	assert.InDelta(t, res["request_throughput"], res["request_goodput"], 1e-9, "every request meets a 100 s SLO")
	assert.Equal(t, 20.0, res["max_concurrent_requests"], "all 20 sent at t = 0 and in flight together")

	_, _, err = run(t, withTiny("--save-result", "--result-filename", path)...)
	require.NoError(t, err)
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	res = nil
	require.NoError(t, json.Unmarshal(data, &res))
	v, ok := res["request_goodput"]
	assert.True(t, ok)
	assert.Nil(t, v, "no --goodput: null, as bench serve")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{withTiny("--goodput", "itl:5"), "--goodput"},
		{withTiny("--input-len", "64", "--random-input-len", "32"), "give one of them"},
		{withTiny("--save-detailed"), "--requests-csv"},
	} {
		_, _, err := run(t, tc.args...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
