package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets a test run the frontier CLI as a separate process (the
// test binary with FRONTIER_TEST_MAIN=1 is the CLI), as a batch system
// runs shards.
func TestMain(m *testing.M) {
	if os.Getenv("FRONTIER_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tinySweep is a small base: 24 requests of 64 in / 8 out at 40 req/s.
var tinySweep = []string{"sweep", "--num-prompts", "24", "--random-input-len", "64", "--random-output-len", "8", "--request-rate", "40", "--quiet"}

func sweepArgs(extra ...string) []string { return append(append([]string{}, tinySweep...), extra...) }

func readLinesFile(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// Each point's result object is what simulate --save-result writes for
// the base flags plus the point's flags (bar the date, null in sweeps),
// and the table has one row per point, refusals included.
func TestSweepPointsAreSimulateRuns(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "s.jsonl")
	out, stderr, err := run(t, sweepArgs("--vary", "max-num-seqs=2,8", "--vary", "tensor-parallel-size=1,3", "--out-jsonl", jsonl)...)
	require.NoError(t, err, stderr)
	lines := readLinesFile(t, jsonl)
	require.Len(t, lines, 4)
	rows := strings.Split(strings.TrimSpace(out), "\n")
	assert.True(t, strings.HasPrefix(rows[0], "point  max-num-seqs  tensor-parallel-size  gpus  completed  failed  request_throughput"), rows[0])
	assert.Contains(t, out, "[1] refused: deployment.tensor_parallel_size: Total number of attention heads (32) must be divisible by tensor parallel size (3)")
	for i, want := range []struct {
		seqs, tp string
		refused  bool
	}{{"2", "1", false}, {"2", "3", true}, {"8", "1", false}, {"8", "3", true}} {
		l := lines[i]
		assert.EqualValues(t, i, l["point"])
		assert.EqualValues(t, 4, l["points"])
		assert.Equal(t, map[string]any{"max-num-seqs": want.seqs, "tensor-parallel-size": want.tp}, l["keys"])
		if want.refused {
			assert.Nil(t, l["result"])
			assert.Contains(t, l["refused"], "must be divisible by tensor parallel size (3)")
			continue
		}
		assert.Nil(t, l["refused"])
		assert.EqualValues(t, 1, l["gpus"])
		file := filepath.Join(dir, "sim"+want.seqs+".json")
		args := append(withTiny("--request-rate", "40", "--num-prompts", "24", "--max-num-seqs", want.seqs, "--tensor-parallel-size", want.tp),
			"--save-result", "--result-filename", file)
		_, stderr, err := run(t, args...)
		require.NoError(t, err, stderr)
		var sim map[string]any
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &sim))
		got := l["result"].(map[string]any)
		assert.Nil(t, got["date"])
		delete(got, "date")
		delete(sim, "date")
		// The scenario name says which point it is.
		assert.Equal(t, "command line (embedded default + flags) [max-num-seqs="+want.seqs+" tensor-parallel-size="+want.tp+"]", got["frontier"].(map[string]any)["scenario"])
		delete(got["frontier"].(map[string]any), "scenario")
		delete(sim["frontier"].(map[string]any), "scenario")
		assert.Equal(t, sim, got, "point %d", i)
	}
	// Two requests run at a time with max-num-seqs 2, all of them with 8.
	assert.Less(t, lines[0]["result"].(map[string]any)["request_throughput"], lines[2]["result"].(map[string]any)["request_throughput"])
}

// sweepOutputs runs a sweep writing every output into dir and returns
// stdout and the files' contents by name.
func sweepOutputs(t *testing.T, dir string, extra ...string) (string, map[string]string) {
	t.Helper()
	args := sweepArgs(append([]string{"--out-jsonl", filepath.Join(dir, "s.jsonl"), "--out-csv", filepath.Join(dir, "s.csv"),
		"--result-dir", filepath.Join(dir, "results")}, extra...)...)
	out, stderr, err := run(t, args...)
	require.NoError(t, err, stderr)
	return out, dirFiles(t, dir)
}

func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	}))
	return files
}

var determinismAxes = []string{"--vary", "max-num-seqs=2,16", "--vary", "request-rate=20:60:40", "--vary", "tensor-parallel-size=1,3", "--goodput", "ttft:100"}

func TestSweepJobsByteIdentical(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	outA, filesA := sweepOutputs(t, a, append([]string{"--jobs", "1"}, determinismAxes...)...)
	outB, filesB := sweepOutputs(t, b, append([]string{"--jobs", "2"}, determinismAxes...)...)
	assert.Equal(t, outA, outB)
	assert.Equal(t, filesA, filesB)
	assert.Len(t, filesA, 2+4, "JSONL, CSV and one result file per point that ran (4 of 8 refused)")
	assert.Contains(t, filesA, filepath.Join("results", "2-openai-60.0qps-Llama-3.1-8B-Instruct.json"))
	assert.Equal(t, 9, len(strings.Split(strings.TrimSpace(filesA["s.csv"]), "\n")))
	assert.Contains(t, strings.Split(filesA["s.csv"], "\n")[0], "request_goodput")
}

// Shards run as separate processes (as a batch system runs them), then
// merged: byte-identical to the unsharded sweep, for 3 shard counts.
func TestSweepShardsMergeByteIdentical(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	whole := t.TempDir()
	wantOut, want := sweepOutputs(t, whole, determinismAxes...)
	for _, n := range []int{2, 3, 5} {
		dir := t.TempDir()
		var shards []string
		for i := 0; i < n; i++ {
			file := filepath.Join(dir, "shard"+string(rune('0'+i))+".jsonl")
			args := sweepArgs(append([]string{"--shard", string(rune('0'+i)) + "/" + string(rune('0'+n)), "--out-jsonl", file}, determinismAxes...)...)
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "FRONTIER_TEST_MAIN=1")
			msg, err := cmd.CombinedOutput()
			require.NoError(t, err, string(msg))
			shards = append(shards, file)
		}
		merged := t.TempDir()
		args := append([]string{"sweep", "merge", "--out-jsonl", filepath.Join(merged, "s.jsonl"), "--out-csv", filepath.Join(merged, "s.csv"),
			"--result-dir", filepath.Join(merged, "results")}, shards...)
		out, stderr, err := run(t, args...)
		require.NoError(t, err, stderr)
		assert.Equal(t, wantOut, out, "%d shards", n)
		assert.Equal(t, want, dirFiles(t, merged), "%d shards", n)
	}
}

// --skip-done reuses the lines already written (FILE.partial of a killed
// run, torn last line included) and runs only the rest.
func TestSweepSkipDone(t *testing.T) {
	dir := t.TempDir()
	wantOut, want := sweepOutputs(t, dir, determinismAxes...)
	lines := strings.Split(strings.TrimSpace(want["s.jsonl"]), "\n")
	resume := t.TempDir()
	jsonl := filepath.Join(resume, "s.jsonl")
	// Points 0 and 2 done, point 2 marked so that reuse shows; then a
	// torn line, as a kill leaves it.
	marked := strings.Replace(lines[2], `"completed":24`, `"completed":23`, 1)
	require.NotEqual(t, lines[2], marked)
	require.NoError(t, os.WriteFile(jsonl+".partial", []byte(lines[0]+"\n"+marked+"\n"+lines[5][:40]), 0o644))
	out, stderr, err := run(t, sweepArgs(append([]string{"--skip-done", "--out-jsonl", jsonl}, determinismAxes...)...)...)
	require.NoError(t, err, stderr)
	got, err := os.ReadFile(jsonl)
	require.NoError(t, err)
	wantLines := append([]string{}, lines...)
	wantLines[2] = marked
	assert.Equal(t, strings.Join(wantLines, "\n")+"\n", string(got))
	assert.NotEqual(t, wantOut, out, "the marked point's row shows 23 completed")
	assert.NoFileExists(t, jsonl+".partial")

	// A file of another sweep is refused, untouched.
	_, _, err = run(t, sweepArgs("--skip-done", "--out-jsonl", jsonl, "--vary", "max-num-seqs=2,3")...)
	require.ErrorContains(t, err, "--skip-done: "+jsonl+" holds another sweep")
	assert.Equal(t, 2, exitCode(err))
}

// Bad input: exit 2 naming the flag, before any run, no files left.
func TestSweepBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--vary", "max-num-seq=1,2"}, `--vary max-num-seq: unknown KEY "max-num-seq"; allowed (simulate's flag names without the leading dashes): api-server-count,`},
		{[]string{"--vary", "requests-csv=a,b"}, `unknown KEY "requests-csv"`},
		{[]string{"--vary", "max-num-seqs=1:10:0"}, "--vary max-num-seqs=1:10:0: STEP must not be 0"},
		{[]string{"--vary", "max-num-seqs=10:1:2"}, "leads away from STOP"},
		{[]string{"--vary", "max-num-seqs="}, "empty value"},
		{[]string{"--vary", "max-num-seqs=0,8"}, "point 0 (max-num-seqs=0): --max-num-seqs: must be ≥ 1, got 0"},
		{[]string{"--vary", "request-rate=1,x"}, "point 1 (request-rate=x): --request-rate: must be a number of requests/s or inf"},
		{[]string{"--shard", "3/3"}, "--shard 3/3: I must be in [0, 3)"},
		{[]string{"--save-result"}, "--save-result: not a sweep flag (--result-dir DIR writes one bench serve JSON per point)"},
		{[]string{"--vary", "a=1", "--zip", "--vary", "seed=1,2"}, "unknown KEY"},
		{[]string{"--zip", "--vary", "seed=1,2", "--vary", "max-num-seqs=4,8,16"}, "--zip: every axis needs as many values (seed has 2, max-num-seqs has 3)"},
		{[]string{"--goodput", "ttft:x"}, "--goodput"},
		{[]string{"--sweep", "/nonexistent.yaml"}, "--sweep: open /nonexistent.yaml"},
	} {
		dir := t.TempDir()
		args := sweepArgs(append(append([]string{}, c.args...), "--out-jsonl", filepath.Join(dir, "s.jsonl"), "--out-csv", filepath.Join(dir, "s.csv"),
			"--result-dir", filepath.Join(dir, "r"))...)
		_, _, err := run(t, args...)
		require.Error(t, err, c.args)
		assert.Contains(t, err.Error(), c.msg, c.args)
		assert.Equal(t, 2, exitCode(err), c.args)
		assert.Empty(t, dirFiles(t, dir), "nothing left behind: %v", c.args)
		entries, _ := os.ReadDir(dir)
		assert.Empty(t, entries, c.args)
	}
}

func TestSweepMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	_, stderr, err := run(t, sweepArgs("--vary", "seed=1,2", "--shard", "0/2", "--out-jsonl", a)...)
	require.NoError(t, err, stderr)
	_, stderr, err = run(t, sweepArgs("--vary", "seed=1,3", "--shard", "1/2", "--out-jsonl", b)...)
	require.NoError(t, err, stderr)
	out := filepath.Join(dir, "out.jsonl")
	_, _, err = run(t, "sweep", "merge", "--out-jsonl", out, a, b)
	require.ErrorContains(t, err, "merge: "+b+":1: a different sweep")
	assert.Equal(t, 2, exitCode(err))
	_, _, err = run(t, "sweep", "merge", "--out-jsonl", out, a)
	require.ErrorContains(t, err, "merge: 1 of 2 points missing (e.g. 1)")
	a2 := filepath.Join(dir, "a2.jsonl")
	data, err := os.ReadFile(a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(a2, data, 0o644))
	_, _, err = run(t, "sweep", "merge", "--out-jsonl", out, a, a2, b)
	require.ErrorContains(t, err, "point 0 is also in "+a)
	_, _, err = run(t, sweepArgs("--shard", "0/2")...)
	require.ErrorContains(t, err, "--shard: add --out-jsonl FILE")
	assert.NoFileExists(t, out)
}

// A sweep file adds whole deployments (a disaggregated one included) as
// the outermost loop; their blocks are checked key by key.
func TestSweepFileDeployments(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
vary:
  seed: [1, 2]
deployments:
  - name: 1p1d
    disaggregation:
      prefill: {instances: 1, deployment: {model: meta-llama/Llama-3.1-8B-Instruct}}
      decode: {instances: 1, deployment: {model: meta-llama/Llama-3.1-8B-Instruct}}
  - name: tp2
    deployment: {model: meta-llama/Llama-3.1-8B-Instruct, tensor_parallel_size: 2}
`), 0o644))
	jsonl := filepath.Join(dir, "s.jsonl")
	out, stderr, err := run(t, sweepArgs("--sweep", file, "--out-jsonl", jsonl)...)
	require.NoError(t, err, stderr)
	lines := readLinesFile(t, jsonl)
	require.Len(t, lines, 4)
	assert.Equal(t, map[string]any{"deployment": "1p1d", "seed": "2"}, lines[1]["keys"])
	assert.EqualValues(t, 2, lines[1]["gpus"])
	pools := lines[1]["result"].(map[string]any)["frontier"].(map[string]any)["pools"].([]any)
	assert.Equal(t, "prefill", pools[0].(map[string]any)["pool"])
	assert.EqualValues(t, 2, lines[3]["result"].(map[string]any)["frontier"].(map[string]any)["tensor_parallel_size"])
	assert.Contains(t, out, "deployment  seed")

	require.NoError(t, os.WriteFile(file, []byte("deployments:\n  - name: tp2\n    deployment: {model: x, tensor_paralel_size: 2}\n"), 0o644))
	_, _, err = run(t, sweepArgs("--sweep", file)...)
	require.ErrorContains(t, err, "deployments[0]: tp2: deployment.tensor_paralel_size: unknown key")
	_, _, err = run(t, sweepArgs("--sweep", file, "--max-num-seqs", "8")...)
	require.Error(t, err)
	require.NoError(t, os.WriteFile(file, []byte("deployments:\n  - name: pd\n    disaggregation: {prefill: {instances: 1, deployment: {model: meta-llama/Llama-3.1-8B-Instruct}}, decode: {instances: 1, deployment: {model: meta-llama/Llama-3.1-8B-Instruct}}}\n"), 0o644))
	_, _, err = run(t, sweepArgs("--sweep", file, "--tensor-parallel-size", "2")...)
	require.ErrorContains(t, err, "point 0 (deployment=pd): --tensor-parallel-size: not for the disaggregated deployment pd, whose pools set their own layout")
	// Engine flags apply to both pools.
	_, stderr, err = run(t, sweepArgs("--sweep", file, "--max-num-seqs", "8", "--out-jsonl", jsonl)...)
	require.NoError(t, err, stderr)
	lines = readLinesFile(t, jsonl)
	require.Len(t, lines, 1)
}
