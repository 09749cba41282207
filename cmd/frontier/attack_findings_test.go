package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that has nothing for one panel still gets its plots: one output
// token per request (no TPOT, a valid vllm bench serve run: TPOT 0), or
// every request timed out (the timeline then shows why). Before, --plot
// failed such runs with exit 1 ("plot latency-cdf: no successful request
// with a TPOT") after the run, printed no summary, wrote no result file
// and left the plot folder behind empty.
func TestPlotsOfRunsWithEmptyPanels(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"one output token", []string{"--random-output-len", "1"}},
		{"every request failed", []string{"--timeout", "1e-6"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "plots")
			res := filepath.Join(t.TempDir(), "r.json")
			out, errOut, err := run(t, withTiny(append([]string{"--plot", dir, "--plot-format", "svg,png", "--save-result", "--result-filename", res}, c.args...)...)...)
			require.NoError(t, err, errOut)
			assert.Contains(t, out, "Successful requests:")
			assert.FileExists(t, res)
			for _, name := range []string{"timeline", "latency-cdf", "ttft-vs-arrival"} {
				svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
				require.NoError(t, err)
				assert.True(t, strings.HasPrefix(string(svg), "<?xml") && strings.Contains(string(svg), "<svg"), name)
				png, err := os.ReadFile(filepath.Join(dir, name+".png"))
				require.NoError(t, err)
				assert.Equal(t, "\x89PNG", string(png[:4]), name)
			}
		})
	}
}

// --timeline-interval past the simulated clock (2^62 ns ≈ 4.6e9 s)
// overflowed the interval in ns and wrote a timeline with a header and no
// row, exit 0. It is refused, naming the flag, before the run.
func TestTimelineIntervalPastTheClock(t *testing.T) {
	dir := t.TempDir()
	tl := filepath.Join(dir, "t.csv")
	for _, v := range []string{"1e10", "1e300"} {
		out, _, err := run(t, withTiny("--timeline", tl, "--timeline-interval", v)...)
		var ue usageError
		require.True(t, errors.As(err, &ue), "exit 2, got %v", err)
		assert.Contains(t, err.Error(), "--timeline-interval")
		assert.NotContains(t, out, "Successful requests:")
		assert.NoFileExists(t, tl)
	}
	// The largest accepted interval gives one row per engine and total.
	_, errOut, err := run(t, withTiny("--timeline", tl, "--timeline-interval", "4e9")...)
	require.NoError(t, err, errOut)
	assert.Len(t, readCSV(t, tl), 3)
}

// gate --observations prints Markdown tables of each run's recipe
// simulation; on main it silently ignored --format json, --plot, --seeds,
// --replay and --strict (exit 0, the same Markdown). Each is refused,
// naming both flags, before any cell runs.
func TestGateObservationsRefusesFlagsItIgnores(t *testing.T) {
	dir := t.TempDir()
	for _, extra := range [][]string{
		{"--format", "json"}, {"--plot", filepath.Join(dir, "p")}, {"--seeds", "3"}, {"--replay"}, {"--strict"},
	} {
		out, _, err := run(t, append([]string{"gate", "--cells", "../../scenarios/gate", "--observations"}, extra...)...)
		var ue usageError
		require.True(t, errors.As(err, &ue), "%v: exit 2, got %v", extra, err)
		assert.Contains(t, err.Error(), "--observations")
		assert.Contains(t, err.Error(), extra[0])
		assert.Empty(t, out)
	}
	assert.NoDirExists(t, filepath.Join(dir, "p"))
}

// A bad predictor key in a scenario file names the file, as every other
// key does (on main: "predictor: must be interp or regression, got "foo""
// without the file); --predictor names the flag.
func TestPredictorKeyNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: x\nhardware: h200-sxm\npredictor: foo\n"+
		"deployment: {model: meta-llama/Llama-3.1-8B-Instruct}\nworkload: {dataset: random, random: {num_prompts: 5, input_len: 64, output_len: 4}}\n"), 0o644))
	_, _, err := run(t, "simulate", "--scenario", path)
	var ue usageError
	require.True(t, errors.As(err, &ue), "exit 2, got %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), path+": predictor: must be interp or regression"), err.Error())
	_, _, err = run(t, "simulate", "--scenario", path, "--predictor", "bar")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "--predictor: must be interp or regression"), err.Error())
}

// gate --plot with a calibration under which a cell completes no request:
// the table still reports the cell and every figure is drawn (the
// measured side alone where the simulation has nothing).
func TestGatePlotCellWithoutSimulatedSuccesses(t *testing.T) {
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.json")
	require.NoError(t, os.WriteFile(slow, []byte(`{"hardware": "h100-sxm", "host": {"request_overhead_ns": 400000000000}}`), 0o644))
	plots := filepath.Join(dir, "plots")
	out, errOut, err := run(t, "gate", "--cells", "../../scenarios/gate", "--only", "20260217-155451-llama-2-7b-tp1-codegen",
		"--calibration", slow, "--plot", plots, "--plot-format", "svg")
	require.NoError(t, err, errOut)
	assert.Contains(t, out, "0 passed, 2 failed")
	assert.Contains(t, errOut, "gate: 4 plots in")
	svg, err := os.ReadFile(filepath.Join(plots, "20260217-155451-llama-2-7b-tp1-codegen_stage_0.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "no simulated request succeeded")
}

// num_gpu_blocks_override counts vLLM's null block: N blocks serve
// (N − 1) × block_size tokens. --num-gpu-blocks-override 2 with
// max_model_len 32 (16 usable tokens) ran on main, every request stuck
// waiting, and printed "every request failed: 0 refused …, 0 given up at
// the client timeout" (no cause); 1 block was already refused. Now both
// are refused as the rule intends; 3 blocks (32 usable tokens) run.
func TestBlocksOverrideCountsTheNullBlock(t *testing.T) {
	args := func(n string) []string {
		return []string{"simulate", "--num-gpu-blocks-override", n, "--num-prompts", "3", "--random-input-len", "16",
			"--random-output-len", "4", "--max-model-len", "32", "--quiet"}
	}
	for _, n := range []string{"1", "2"} {
		_, _, err := run(t, args(n)...)
		var ue usageError
		require.True(t, errors.As(err, &ue), "exit 2, got %v", err)
		assert.Contains(t, err.Error(), "num_gpu_blocks_override "+n+" holds ")
		assert.Contains(t, err.Error(), "beside vLLM's null block, fewer than max_model_len 32")
	}
	out, errOut, err := run(t, args("3")...)
	require.NoError(t, err, errOut)
	assert.Equal(t, 3, summaryInt(t, out, "Successful requests:"))
}

// Two output flags naming one file: on main the run exited 0 and the
// later write replaced the earlier (--timeline x --metrics x kept only the
// .prom; --trace t.json --result-filename t.json only the result;
// --steps-csv with --timeline interleaved both). Refused before the run,
// naming both flags; nothing is written.
func TestOutputFlagsNeedDistinctFiles(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeline", x, "--metrics", x}, "--timeline and --metrics both write " + x},
		{[]string{"--trace", x + ".json", "--save-result", "--result-filename", x + ".json"}, "both write " + x + ".json"},
		{[]string{"--timeline", x, "--steps-csv", filepath.Join(dir, ".", "x")}, "--steps-csv and --timeline both write"},
		{[]string{"--requests-csv", x, "--plot", x}, "--requests-csv and --plot both write " + x},
	} {
		out, _, err := run(t, withTiny(c.args...)...)
		var ue usageError
		require.True(t, errors.As(err, &ue), "%v: exit 2, got %v", c.args, err)
		assert.Contains(t, err.Error(), c.want)
		assert.NotContains(t, out, "Successful requests:")
		entries, _ := os.ReadDir(dir)
		assert.Empty(t, entries, "%v", c.args)
	}
}
