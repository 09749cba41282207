package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decode macro-step changes no byte a user sees: for example
// scenarios of several deployment kinds and a gate cell, frontier
// simulate prints the same stdout and stderr and writes the same result
// JSON, requests CSV, steps CSV, timeline and Prometheus metrics with
// the macro-step as step by step (FRONTIER_STEP_BY_STEP=1). Without the
// timeline and metrics (which observe the run) the decode cohort and its
// k-step advance run instead, cycle by cycle with the steps CSV and in
// bulk without it: the same check, on the files left.
func TestStepByStepSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs each scenario twice")
	}
	date := regexp.MustCompile(`"date": ?"[^"]*"`)
	for _, sc := range []string{
		"../../scenarios/examples/llama-3.1-8b-h200-random.yaml",
		"../../scenarios/examples/llama-3.1-70b-h200-2p1d.yaml",
		"../../scenarios/examples/llama-3.1-8b-h200-dp4.yaml",
		"../../scenarios/examples/mixtral-h100-tp2-shared-prefix.yaml",
		"../../scenarios/examples/llama-3.1-8b-h200-chat-sessions.yaml",
		"../../scenarios/gate/20260217-162547-llama-2-7b-tp1-roleplay.yaml",
	} {
		for _, outputs := range []int{observedRun, stepsRun, bareRun} {
			sameBytesStepByStep(t, sc, outputs, date)
		}
	}
}

// The outputs sameBytesStepByStep asks for: every file, the steps CSV
// but no observer, neither.
const (
	observedRun = iota
	stepsRun
	bareRun
)

// sameBytesStepByStep runs scenario sc both ways, asking for outputs
// (observedRun, stepsRun, bareRun), and requires the same bytes.
func sameBytesStepByStep(t *testing.T, sc string, outputs int, date *regexp.Regexp) {
	t.Helper()
	files := map[bool]map[string][]byte{}
	names := []string{"result.json", "requests.csv"}
	if outputs != bareRun {
		names = append(names, "steps.csv")
	}
	if outputs == observedRun {
		names = append(names, "timeline.csv", "metrics.prom")
	}
	for _, stepByStep := range []bool{true, false} {
		dir := t.TempDir()
		if stepByStep {
			t.Setenv(stepByStepEnv, "1")
		} else {
			t.Setenv(stepByStepEnv, "")
		}
		args := []string{"simulate", "--quiet", "--scenario", sc, "--save-result",
			"--result-filename", filepath.Join(dir, "result.json"), "--requests-csv", filepath.Join(dir, "requests.csv")}
		if outputs != bareRun {
			args = append(args, "--steps-csv", filepath.Join(dir, "steps.csv"))
		}
		if outputs == observedRun {
			args = append(args, "--timeline", filepath.Join(dir, "timeline.csv"), "--metrics", filepath.Join(dir, "metrics.prom"))
		}
		out, errOut, err := run(t, args...)
		require.NoError(t, err, sc)
		got := map[string][]byte{"stdout": []byte(out), "stderr": []byte(errOut)}
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err, name)
			got[name] = date.ReplaceAll(b, []byte(`"date":"X"`))
		}
		files[stepByStep] = got
	}
	for name, want := range files[true] {
		assert.True(t, string(want) == string(files[false][name]), "%s (outputs %d): %s differs with the macro-step", sc, outputs, name)
	}
}
