package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sweep and capacity refuse simulate's per-run outputs they would not
// write (on main, --timeline, --metrics, --trace and, on capacity,
// --result-dir were accepted and wrote nothing), exit 2, name the flag
// and the command, say what to use instead, and leave nothing behind.
// The hint names only flags the command has (capacity has no --out-jsonl
// nor a --result-dir of its own).
func TestSweepAndCapacityRefuseOutputsTheyDoNotWrite(t *testing.T) {
	cases := []struct {
		cmd  string
		flag []string
		want string
	}{
		{"sweep", []string{"--timeline", "tl.csv"}, "--timeline: not a sweep flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"sweep", []string{"--timeline-interval", "2"}, "--timeline-interval: not a sweep flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"sweep", []string{"--metrics", "m.prom"}, "--metrics: not a sweep flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"sweep", []string{"--trace", "tr.json"}, "--trace: not a sweep flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"sweep", []string{"--trace-max-requests", "5"}, "--trace-max-requests: not a sweep flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"sweep", []string{"--plot-format", "svg"}, "--plot-format: not a sweep flag (--plot FILE.png or FILE.svg: the name's extension picks the format)"},
		{"sweep", []string{"--append-result"}, "--append-result: not a sweep flag (--out-jsonl FILE writes one line per point)"},
		{"capacity", []string{"--timeline", "tl.csv"}, "--timeline: not a capacity flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"capacity", []string{"--metrics", "m.prom"}, "--metrics: not a capacity flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"capacity", []string{"--trace", "tr.json"}, "--trace: not a capacity flag (run frontier simulate on the point for its timeline, metrics and trace)"},
		{"capacity", []string{"--plot-format", "svg"}, "--plot-format: not a capacity flag (--plot FILE.png or FILE.svg: the name's extension picks the format)"},
		{"capacity", []string{"--result-dir", "d"}, "--result-dir: not a capacity flag (" + capacityNoResult + ")"},
		{"capacity", []string{"--save-result"}, "--save-result: not a capacity flag (" + capacityNoResult + ")"},
		{"capacity", []string{"--append-result"}, "--append-result: not a capacity flag (" + capacityNoResult + ")"},
		{"capacity", []string{"--result-filename", "r.json"}, "--result-filename: not a capacity flag (" + capacityNoResult + ")"},
		{"capacity", []string{"--label", "x"}, "--label: not a capacity flag (" + capacityNoResult + ")"},
		{"capacity", []string{"--backend", "vllm"}, "--backend: not a capacity flag (" + capacityNoResult + ")"},
		{"sweep", []string{"--save-detailed"}, "--save-detailed: not a sweep flag (run frontier simulate on the point with --requests-csv FILE for per-request detail)"},
		{"capacity", []string{"--save-detailed"}, "--save-detailed: not a capacity flag (run frontier simulate on the point with --requests-csv FILE for per-request detail)"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		wd, err := os.Getwd()
		require.NoError(t, err)
		require.NoError(t, os.Chdir(dir))
		var args []string
		if c.cmd == "sweep" {
			args = sweepArgs(append([]string{"--vary", "max-num-seqs=4,8"}, c.flag...)...)
		} else {
			args = capacityArgs(append([]string{"--slo", "ttft:p99<=500ms"}, c.flag...)...)
		}
		_, _, err = run(t, args...)
		require.NoError(t, os.Chdir(wd))
		require.Error(t, err, c.flag)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, 2, exitCode(err), c.flag)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing left behind by %s %v", c.cmd, c.flag)
	}
}

// sweep --help and capacity --help list no flag the command refuses, and
// --vary cannot name one.
func TestSweepAndCapacityHelpListOnlyWhatTheyAccept(t *testing.T) {
	for _, cmd := range []string{"sweep", "capacity"} {
		out, _, err := run(t, cmd, "--help")
		require.NoError(t, err)
		refused := []string{"timeline", "timeline-interval", "metrics", "trace", "trace-max-requests", "plot-format",
			"requests-csv", "steps-csv", "save-result", "append-result", "result-filename", "percentile-metrics", "save-detailed"}
		if cmd == "capacity" {
			refused = append(refused, "result-dir", "label", "backend", "goodput")
		}
		for _, name := range refused {
			assert.NotRegexp(t, `(?m)^\s+(-\w, )?--`+name+` `, out, "%s --help lists --%s", cmd, name)
		}
		for _, kept := range []string{"model", "max-num-seqs", "request-rate", "random-input-len", "metric-percentiles", "quiet"} {
			if cmd == "capacity" && kept == "request-rate" {
				continue
			}
			assert.Regexp(t, `(?m)^\s+(-\w, )?--`+kept+` `, out, "%s --help keeps --%s", cmd, kept)
		}
	}
	_, _, err := run(t, sweepArgs("--vary", "timeline=a.csv,b.csv")...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeline")
	assert.Equal(t, 2, exitCode(err))
	assert.False(t, strings.Contains(err.Error(), "point 0"), "refused before any point is built: %v", err)
	_, err = os.Stat(filepath.Join(".", "a.csv"))
	assert.True(t, os.IsNotExist(err))
	_, _, err = run(t, sweepArgs("--vary", "plot=a,b")...)
	require.Error(t, err, "simulate's --plot DIR is not an axis")
	assert.Contains(t, err.Error(), `--vary plot: unknown KEY "plot"`)
}

// vllm bench latency / throughput take EngineArgs, not the OpenAI
// front end's --api-server-count: the LLM class has no API server. On
// main the flag was listed and silently ignored; as in vLLM it is now an
// unknown argument.
func TestBenchHasNoAPIServerCount(t *testing.T) {
	for _, b := range []string{"latency", "throughput"} {
		out, _, err := run(t, "bench", b, "--help")
		require.NoError(t, err)
		assert.NotContains(t, out, "--api-server-count")
		_, _, err = run(t, "bench", b, "--input-len", "32", "--api-server-count", "4")
		require.Error(t, err, b)
		assert.Equal(t, "unknown flag: --api-server-count", err.Error())
		assert.Equal(t, 2, exitCode(err))
	}
}

// vLLM's space-separated lists work as in vLLM: vllm bench serve's
// --goodput ttft:200 tpot:50 (nargs="+") and vllm serve's
// --cuda-graph-sizes 1 2 4 8 (nargs="+") print exactly what the
// comma-separated forms print; on main the second value was "unknown
// command". A stray argument is still refused.
func TestSpaceSeparatedListsAsInVLLM(t *testing.T) {
	comma, _, err := run(t, withTiny("--request-rate", "20", "--goodput", "ttft:200,tpot:50", "--cuda-graph-sizes", "1,2,4,8")...)
	require.NoError(t, err)
	require.Contains(t, comma, "Request goodput (req/s):")
	spaced, _, err := run(t, withTiny("--request-rate", "20", "--goodput", "ttft:200", "tpot:50", "--cuda-graph-sizes", "1", "2", "4", "8")...)
	require.NoError(t, err)
	assert.Equal(t, comma, spaced)

	sweepComma, _, err := run(t, sweepArgs("--vary", "max-num-seqs=4,8", "--goodput", "ttft:200,tpot:50")...)
	require.NoError(t, err)
	sweepSpaced, _, err := run(t, sweepArgs("--vary", "max-num-seqs=4,8", "--goodput", "ttft:200", "tpot:50")...)
	require.NoError(t, err)
	assert.Equal(t, sweepComma, sweepSpaced)

	lat, _, err := run(t, "bench", "latency", "--num-iters", "1", "--num-iters-warmup", "0", "--cuda-graph-sizes", "8,16")
	require.NoError(t, err)
	latSpaced, _, err := run(t, "bench", "latency", "--num-iters", "1", "--num-iters-warmup", "0", "--cuda-graph-sizes", "8", "16")
	require.NoError(t, err)
	assert.Equal(t, lat, latSpaced)

	for _, args := range [][]string{
		withTiny("--goodput", "ttft:200", "foo"),
		withTiny("foo"),
		withTiny("--cuda-graph-sizes", "1", "x"),
		withTiny("12"), // a number without --cuda-graph-sizes
	} {
		_, _, err := run(t, args...)
		require.Error(t, err, args)
		assert.Equal(t, 2, exitCode(err), args)
		assert.Contains(t, err.Error(), "unknown command", args)
	}
}

// An error naming a key and its flag ("deployment.scheduling_policy
// (--scheduling-policy) is fcfs") names the flag once when the flag set
// it (on main: "--scheduling-policy (--scheduling-policy) is fcfs"), and
// keeps the key with the file otherwise.
func TestFlagNamedOnce(t *testing.T) {
	example := filepath.Join("..", "..", "scenarios", "examples", "llama-3.1-8b-h200-priority-classes.yaml")
	_, _, err := run(t, "simulate", "--quiet", "--scenario", example, "--scheduling-policy", "fcfs")
	require.Error(t, err)
	assert.Equal(t, `--scheduling-policy is fcfs, and request 0 of the workload has priority 1: vLLM refuses it with "Got priority 1 but Priority scheduling is not enabled." (use scheduling policy priority)`, err.Error())
	assert.Equal(t, 2, exitCode(err))

	data, err := os.ReadFile(example)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "fcfs.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), "scheduling_policy: priority", "scheduling_policy: fcfs", 1)), 0o644))
	_, _, err = run(t, "simulate", "--quiet", "--scenario", file)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), file+": deployment.scheduling_policy (--scheduling-policy) is fcfs, and request 0"), err.Error())
}

// With --max-concurrency the summary prints vllm bench serve's "Maximum
// request concurrency:" line after "Failed requests:"
// (vllm/benchmarks/serve.py); without it, no such line.
func TestSummaryMaximumRequestConcurrency(t *testing.T) {
	out, _, err := run(t, withTiny("--request-rate", "40", "--max-concurrency", "4")...)
	require.NoError(t, err)
	assert.Contains(t, out, "Failed requests:                         0\nMaximum request concurrency:             4\nBenchmark duration (s):")
	out, _, err = run(t, withTiny("--request-rate", "40")...)
	require.NoError(t, err)
	assert.NotContains(t, out, "Maximum request concurrency:")
}

// gate's parallelism is --jobs, as on sweep and capacity; --workers (its
// old name) still works and is out of --help.
func TestGateJobs(t *testing.T) {
	out, _, err := run(t, "gate", "--help")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^\s+--jobs int\s+cells simulated in parallel`, out)
	assert.NotContains(t, out, "--workers")
	for _, flag := range []string{"--jobs", "--workers"} {
		_, _, err = run(t, "gate", flag, "-1", "--cells", filepath.Join("..", "..", "scenarios", "gate"))
		require.Error(t, err)
		assert.Equal(t, flag+": must be ≥ 0 (0 = one per CPU), got -1", err.Error())
		assert.Equal(t, 2, exitCode(err))
	}
	a, _, err := run(t, "gate", "--jobs", "1", "--only", "codellama-34b-tp2-general", "--cells", filepath.Join("..", "..", "scenarios", "gate"))
	require.NoError(t, err)
	b, _, err := run(t, "gate", "--workers", "1", "--only", "codellama-34b-tp2-general", "--cells", filepath.Join("..", "..", "scenarios", "gate"))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Contains(t, a, "codellama-34b-tp2-general/stage_0")
}
