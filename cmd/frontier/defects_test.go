package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scaledTable copies the table file src into a new folder with every
// latency column multiplied by factor, and returns the folder.
func scaledTable(t *testing.T, src string, factor float64) string {
	t.Helper()
	f, err := os.Open(src)
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	for j, h := range rows[0] {
		if h != "latency" && h != "eager_latency" {
			continue
		}
		for _, r := range rows[1:] {
			v, err := strconv.ParseFloat(r[j], 64)
			require.NoError(t, err)
			r[j] = strconv.FormatFloat(v*factor, 'g', -1, 64)
		}
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, filepath.Base(src)))
	require.NoError(t, err)
	w := csv.NewWriter(out)
	require.NoError(t, w.WriteAll(rows))
	require.NoError(t, out.Close())
	return dir
}

// summaryFloat reads a number line of the printed summary.
func summaryFloat(t *testing.T, out, label string) float64 {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + `\s+([-0-9.e+]+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %q in:\n%s", label, out)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// Defect 1: multiplying every latency of the collector's ops table by 1000
// and passing it with --profile-dir changes the run (it changed nothing
// while the tables were announced but unused).
func TestProfileDirOpsTableChangesTheRun(t *testing.T) {
	dir := scaledTable(t, "../../profiles/measured/h200-sxm/ops_perf.csv", 1000)
	out, stderr, err := run(t, withTiny()...)
	require.NoError(t, err, stderr)
	slowOut, stderr, err := run(t, withTiny("--profile-dir", dir)...)
	require.NoError(t, err, stderr)
	tpot, slow := summaryFloat(t, out, "Mean TPOT (ms):"), summaryFloat(t, slowOut, "Mean TPOT (ms):")
	// 32 layers × 4 small ops + 3 per step, each ≥ 2 µs measured: ×1000
	// adds far more than 100 ms to every decode step.
	assert.Greater(t, slow, tpot+100, "TPOT %.2f ms with the ×1000 ops table vs %.2f ms", slow, tpot)
}

// Defect 4: a 21/3-head model gives the same summary on every run and its
// notes name both attention substitutions.
func TestOddHeadModelRepeats(t *testing.T) {
	data, err := os.ReadFile("../../profiles/models/llama-3.1-8b-instruct/config.json")
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["hidden_size"] = 21, 3, 128, 21*128
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	var first string
	for i := range 4 {
		out, stderr, err := run(t, withTiny("--model", path)...)
		require.NoError(t, err, stderr)
		assert.Contains(t, stderr, "note: decode attention 21/3 heads: no table rows with 7 query heads per kv head; priced as 16/2 (the nearest ratio, 8) with context × 1.5 (bytes-read rule)")
		assert.Contains(t, stderr, "note: prefill attention 21/3 heads: no table rows; priced from 16/16 × 1.31 (FLOPs rule)")
		if i == 0 {
			first = out
		}
		assert.Equal(t, first, out, "run %d", i)
	}
}

// Defect 3: a --profile-dir whose GEMM latencies are 1e12 or 1e9 ms is
// refused at load (exit 2) naming the table, row and value; on main it
// ran with negative step times and a wrapped clock, exit 0.
func TestImpossibleTableLatenciesRefused(t *testing.T) {
	for _, v := range []float64{1e12, 1e9} {
		src := scaledTable(t, "../../profiles/measured/h200-sxm/gemm_perf.csv", 1)
		rows := readCSV(t, filepath.Join(src, "gemm_perf.csv"))
		lat := column(t, rows, "latency")
		for _, r := range rows[1:] {
			r[lat] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		f, err := os.Create(filepath.Join(src, "gemm_perf.csv"))
		require.NoError(t, err)
		require.NoError(t, csv.NewWriter(f).WriteAll(rows))
		require.NoError(t, f.Close())
		result := filepath.Join(t.TempDir(), "r.json")
		_, _, err = run(t, withTiny("--profile-dir", src, "--save-result", "--result-filename", result)...)
		require.Error(t, err)
		assert.ErrorAs(t, err, new(usageError), "exit 2")
		assert.Contains(t, err.Error(), "gemm_perf.csv row 1: latency: "+strconv.FormatFloat(v, 'g', -1, 64)+" ms is past the physical maximum")
		assert.NoFileExists(t, result)
	}
}

// writeConfig writes the Llama-3.1-8B config with edit applied into a new
// folder and returns the config's path.
func writeConfig(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	return writeModelConfig(t, "llama-3.1-8b-instruct", edit)
}

// writeModelConfig writes the embedded config of folder (profiles/models)
// with edit applied into a new folder and returns the config's path.
func writeModelConfig(t *testing.T, folder string, edit func(map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile("../../profiles/models/" + folder + "/config.json")
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	edit(cfg)
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// Defect 6: no silent empty runs. A config without a length key runs at
// vLLM's 2048 with vLLM's warning (on main: 0 successes, exit 0, no
// note); a key at 0 or −1 is refused naming it; a run where every
// request fails warns as bench serve does and says why.
func TestNoSilentEmptyRuns(t *testing.T) {
	noKey := writeConfig(t, func(c map[string]any) { delete(c, "max_position_embeddings") })
	out, stderr, err := run(t, withTiny("--model", noKey)...)
	require.NoError(t, err, stderr)
	assert.Equal(t, 20, summaryInt(t, out, "Successful requests:"))
	assert.Contains(t, stderr, "note: The model's config.json does not contain any of the following keys to determine the original maximum length of the model: ['max_position_embeddings', ")
	assert.Contains(t, stderr, "Assuming the model's maximum length is 2048.")

	for _, v := range []int{0, -1} {
		bad := writeConfig(t, func(c map[string]any) { c["max_position_embeddings"] = v })
		_, _, err := run(t, withTiny("--model", bad)...)
		require.Error(t, err)
		assert.ErrorAs(t, err, new(usageError))
		assert.Contains(t, err.Error(), "--model: model "+bad+": config.json max_position_embeddings: must be > 0 (vLLM derives max_model_len from it), got "+strconv.Itoa(v))
	}

	short := writeConfig(t, func(c map[string]any) { c["seq_length"] = 4096 })
	_, _, err = run(t, withTiny("--model", short, "--max-model-len", "5000")...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "User-specified max_model_len (5000) is greater than the derived max_model_len (seq_length=4096 in model's config.json)")

	for _, c := range []struct{ flag, value, why string }{
		{"--timeout", "1e-9", "0 refused by the API server (prompt + output tokens over max_model_len, HTTP 400), 20 given up at the client timeout"},
		// Below half a ns: still a timeout (1 ns, the clock's unit), never none (attack10e).
		{"--timeout", "1e-10", "0 refused by the API server (prompt + output tokens over max_model_len, HTTP 400), 20 given up at the client timeout"},
		// tiny's requests are 64 + 8 tokens: the numbers a user needs to fix it (newcomer11).
		{"--max-model-len", "1", "20 refused by the API server (prompt + output tokens over max_model_len 1, the longest 72, HTTP 400), 0 given up at the client timeout"},
	} {
		out, stderr, err := run(t, withTiny(c.flag, c.value)...)
		require.NoError(t, err, "bench serve exits 0 and warns")
		assert.Equal(t, 0, summaryInt(t, out, "Successful requests:"))
		assert.Contains(t, stderr, "note: every request failed: "+c.why, c.flag)
		assert.Contains(t, stderr, "warning: All requests failed. This is likely due to a misconfiguration on the benchmark arguments.", c.flag)
	}
	_, stderr, err = run(t, withTiny()...)
	require.NoError(t, err)
	assert.NotContains(t, stderr, "warning:")
}
