package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every report output from one run: the timeline's totals match the
// summary, the .prom parses, the trace is JSON, the plots exist.
func TestReportOutputsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	tl, prom, tr, plots := filepath.Join(dir, "t.csv"), filepath.Join(dir, "m.prom"), filepath.Join(dir, "t.json"), filepath.Join(dir, "plots")
	out, errOut, err := run(t, withTiny("--request-rate", "40", "--timeline", tl, "--timeline-interval", "0.25",
		"--metrics", prom, "--trace", tr, "--trace-max-requests", "5", "--plot", plots, "--plot-format", "svg")...)
	require.NoError(t, err, errOut)
	rows := readCSV(t, tl)
	eng, gen, succ := column(t, rows, "engine"), column(t, rows, "vllm:generation_tokens_total"), column(t, rows, "vllm:request_success_total")
	var tokens, done int
	for _, r := range rows[1:] {
		if r[eng] != "total" {
			continue
		}
		g, _ := strconv.Atoi(r[gen])
		s, _ := strconv.Atoi(r[succ])
		tokens += g
		done += s
	}
	assert.Equal(t, summaryInt(t, out, "Total generated tokens:"), tokens)
	assert.Equal(t, summaryInt(t, out, "Successful requests:"), done)
	fh, err := os.Open(prom)
	require.NoError(t, err)
	defer fh.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(fh)
	require.NoError(t, err)
	assert.Equal(t, uint64(20), fams["vllm:e2e_request_latency_seconds"].Metric[0].GetHistogram().GetSampleCount())
	data, err := os.ReadFile(tr)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Contains(t, doc["otherData"].(map[string]any)["note"], "5 of 20 requests")
	assert.Contains(t, errOut, "trace: 5 of 20 requests traced", "the sampling note")
	for _, name := range []string{"timeline", "latency-cdf", "ttft-vs-arrival"} {
		assert.FileExists(t, filepath.Join(plots, name+".svg"))
		assert.NoFileExists(t, filepath.Join(plots, name+".png"))
	}
}

// Bad report flags exit 2 naming the flag, before the run, and leave no
// file or folder behind.
func TestReportFlagErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	missing := filepath.Join(dir, "no", "such", "dir")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"interval 0", []string{"--timeline", filepath.Join(dir, "t.csv"), "--timeline-interval", "0"}, "--timeline-interval: must be a number of seconds in [0.001, 4.612e+09] (the simulated clock's reach), got 0"},
		{"interval negative", []string{"--timeline-interval", "-1"}, "--timeline-interval"},
		{"interval NaN", []string{"--timeline-interval", "NaN"}, "--timeline-interval"},
		{"timeline unwritable", []string{"--timeline", filepath.Join(missing, "t.csv")}, "--timeline"},
		{"metrics unwritable", []string{"--metrics", filepath.Join(missing, "m.prom")}, "--metrics"},
		{"trace unwritable", []string{"--trace", filepath.Join(missing, "t.json")}, "--trace"},
		{"trace as csv", []string{"--trace", filepath.Join(dir, "arrivals.csv")}, "--dataset-path"},
		{"trace not json", []string{"--trace", filepath.Join(dir, "t.txt")}, "FILE.json"},
		{"trace-max-requests", []string{"--trace-max-requests", "-1"}, "--trace-max-requests: must be ≥ 0"},
		{"plot format", []string{"--plot", filepath.Join(dir, "p"), "--plot-format", "png,gif"}, `--plot-format: unknown image format "gif"`},
		{"plot is a file name", []string{"--plot", filepath.Join(dir, "run.png")}, "--plot: takes a folder"},
		{"plot is a file", []string{"--plot", file}, "is a file, not a folder"},
		{"plot under a file", []string{"--plot", filepath.Join(file, "sub")}, "--plot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadDir(dir)
			out, _, err := run(t, withTiny(c.args...)...)
			require.Error(t, err)
			var ue usageError
			assert.True(t, errors.As(err, &ue), "exit 2, got %T: %v", err, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, out, "Successful requests:", "refused before the run")
			after, _ := os.ReadDir(dir)
			assert.Equal(t, len(before), len(after), "nothing left behind")
		})
	}
	// A folder chain the probe created is removed whole.
	plots := filepath.Join(dir, "new", "plots")
	_, _, err := run(t, withTiny("--plot", plots, "--timeline-interval", "0")...)
	require.Error(t, err)
	_, _, err = run(t, withTiny("--plot", plots, "--gpu-memory-utilization", "0.01")...)
	require.Error(t, err)
	assert.NoDirExists(t, filepath.Join(dir, "new"))
	// A deployment vLLM refuses is refused after the checks: still no file.
	tr := filepath.Join(dir, "t.json")
	_, _, err = run(t, withTiny("--trace", tr, "--gpu-memory-utilization", "0.01")...)
	require.Error(t, err)
	assert.NoFileExists(t, tr)
}

// gate --plot draws one figure per cell and format; bad values exit 2.
func TestGatePlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gate")
	_, errOut, err := run(t, "gate", "--cells", "../../scenarios/gate", "--only", "20260217-155451-llama-2-7b-tp1-codegen", "--plot", dir)
	require.NoError(t, err, errOut)
	for _, stage := range []string{"stage_0", "stage_1", "stage_0_windows", "stage_1_windows"} {
		for _, ext := range []string{"png", "svg"} {
			info, err := os.Stat(filepath.Join(dir, "20260217-155451-llama-2-7b-tp1-codegen_"+stage+"."+ext))
			require.NoError(t, err)
			assert.Positive(t, info.Size())
		}
	}
	assert.Contains(t, errOut, "gate: 8 plots in")
	_, _, err = run(t, "gate", "--cells", "../../scenarios/gate", "--plot", dir, "--plot-format", "gif")
	var ue usageError
	require.True(t, errors.As(err, &ue), "exit 2, got %v", err)
	assert.Contains(t, err.Error(), "--plot-format")
}
