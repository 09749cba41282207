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
	assert.Regexp(t, regexp.MustCompile(`^vllm-10\.0qps-concurrency4-Llama-3\.1-8B-Instruct-\d{8}-\d{6}\.json$`), entries[0].Name())
	assert.Contains(t, stderr, "result: "+filepath.Join(dir, entries[0].Name()))
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
	assert.Equal(t, "inf", rateName(mk(math.Inf(1))))
	assert.Equal(t, "10.0", rateName(mk(10)))
	assert.Equal(t, "2.5", rateName(mk(2.5)))
	staged := mk(1)
	staged.Workload.Arrivals.Stages = []scenarios.Stage{{Rate: 4, DurationS: 10}}
	assert.Equal(t, "stages", rateName(staged))
	p, err := resultFlags{save: true, label: "mine"}.path(mk(1), "org/Model-X", time.Date(2026, 11, 29, 8, 5, 9, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, "mine-1.0qps-Model-X-20261129-080509.json", p)
}
