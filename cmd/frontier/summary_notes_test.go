package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/sim"
)

// The summary says, per operator family, how many distinct shapes were
// outside the tables' grids and the farthest one. tiny on the default
// deployment (Llama-3.1-8B, H200): the only shapes out are the LM head's
// GEMMs (n = vocab 128,256 over the grid's largest n, 65,536), at m = 1
// (the first request's prefill and decode steps), 20 (the step that
// prefills the other 19 beside it, then decode) and 19 (one finished):
// three shapes, tied in reach, the first kept. On main the summary listed
// up to five near-identical "e.g." shapes instead.
func TestSummaryOutOfGridByFamily(t *testing.T) {
	out, errOut, err := run(t, withTiny()...)
	require.NoError(t, err)
	assert.Contains(t, out, "  outside the tables' grids:             3 (extrapolated: each family's rule is in the notes)\n"+
		"    gemm bfloat16:                       3 shapes, farthest m=1 n=128256 k=4096 (n 128256 = 1.96× the table's 65536)\n")
	assert.NotContains(t, out, "e.g.")
	// The summary points to the notes: the rule is stated there, once.
	assert.Equal(t, 1, strings.Count(errOut, "note: gemm bfloat16: an extrapolated shape is priced so: "+gemmRuleText+"\n"), errOut)

	// Nothing out of the grids (Llama-2-7b on H100): a bare 0, no pointer
	// to rule notes that are not there (a newcomer's finding).
	out, errOut, err = run(t, "simulate", "--quiet", "--hardware", "h100-sxm", "--model", "meta-llama/Llama-2-7b-hf", "--num-prompts", "20")
	require.NoError(t, err)
	assert.Contains(t, out, "  outside the tables' grids:             0\n")
	assert.NotContains(t, errOut, "an extrapolated shape is priced so", "no family, no rule note")

	// Without a table (H800 has no collective tables) every shape of the
	// family is a bandwidth estimate: none is farther, one is an example.
	out, _, err = run(t, withTiny("--hardware", "h800", "-t", "2")...)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^    all_reduce:\s+\d+ shapes, e\.g\. gpus=2 elems=\d+ \(no table for 2 GPUs: bandwidth estimate\)$`, out)
}

// Invariant over every example: the families' shape counts add up to the
// extrapolated total, each family line names a shape and its reach, and
// each family's rule is stated in a note (the summary says it is).
func TestSummaryFamiliesAddUp(t *testing.T) {
	family := regexp.MustCompile(`(?m)^    (\S[^:]*):\s+(\d+) shapes?, (?:farthest|e\.g\.) (.+) \((.+)\)$`)
	// Dense, MoE with DP and EP (elementwise, GEMM and MoE families),
	// disaggregated (two pools' engines summed), quantized MoE.
	for _, f := range []string{"llama-3.1-8b-h200-random", "qwen3-30b-a3b-h200-dp8-ep", "llama-3.1-70b-h200-2p1d", "llama-4-scout-fp8-h100-tp2"} {
		out, errOut, err := run(t, "simulate", "--quiet", "--scenario", "../../scenarios/examples/"+f+".yaml")
		require.NoError(t, err, f)
		total := summaryInt(t, out, "outside the tables' grids:")
		sum := 0
		for _, m := range family.FindAllStringSubmatch(out, -1) {
			n, err := strconv.Atoi(m[2])
			require.NoError(t, err)
			sum += n
			assert.Regexp(t, `(?m)^note: (?:[^:]*, )?`+regexp.QuoteMeta(m[1])+`(?:, [^:]*)?: an extrapolated shape is priced so: \S`, errOut, "%s: %s's rule", f, m[1])
			assert.Contains(t, m[3], "=", "%s: a shape: %s", f, m[0])
			assert.True(t, strings.Contains(m[4], "× the table's") || strings.Contains(m[4], "× the nearest measured") || strings.Contains(m[4], "no table") ||
				strings.Contains(m[4], "unmeasured point") || strings.Contains(m[4], "expert shape"), "%s: a reach: %s", f, m[0])
		}
		assert.Equal(t, total, sum, f)
		assert.Positive(t, total, f)
	}
}

// A peak output token throughput at the API server's chunk rate gets a note
// pointing at --api-server-count; with four processes the same run's peak
// is the engine's (18,326 tok/s, under 95 % of 4 × 7,574) and no note is
// printed. The default run: 1,000 requests at once, peak 7,574 chunks/s =
// 1 s ÷ 0.132 ms (the fitted api_token_ns).
func TestPeakAtAPIServerCeilingNote(t *testing.T) {
	out, stderr, err := run(t, "simulate")
	require.NoError(t, err)
	assert.Contains(t, out, "Peak output token throughput (tok/s):    7574.00\n")
	assert.Contains(t, stderr, "note: peak output token throughput (7574 tok/s) is the API server's ceiling: 1 API server process streams one SSE chunk per 0.132 ms (~7574 chunks/s)")
	assert.Contains(t, stderr, "--api-server-count raises the ceiling")
	out, stderr, err = run(t, "simulate", "--api-server-count", "4")
	require.NoError(t, err)
	assert.Contains(t, out, "Peak output token throughput (tok/s):    18326.00\n")
	assert.NotContains(t, stderr, "ceiling")
}

// The per-stage table: median TTFT and mean E2EL of each stage's completed
// requests; a stage where none completed says "-" (on main: NaN here, and
// 0.00 ms in the per-replica table, which shares the cells now). Stages'
// requests interleave: each stage's latencies go into its own part of
// one slice.
func TestPerStageCells(t *testing.T) {
	done := func(stage int, send, first, finish int64) sim.RequestRecord {
		return sim.RequestRecord{Stage: int32(stage), SendNs: send, FirstTokenNs: first, FinishNs: finish}
	}
	res := &sim.Result{Requests: []sim.RequestRecord{
		done(0, 0, 10e6, 100e6),   // TTFT 10 ms, E2EL 100 ms
		done(2, 0, 50e6, 60e6),    // TTFT 50 ms, E2EL 60 ms
		done(0, 0, 30e6, 200e6),   // TTFT 30 ms, E2EL 200 ms
		done(0, 5e6, 25e6, 105e6), // TTFT 20 ms, E2EL 100 ms
		{Stage: 1, SendNs: 1e9, FirstTokenNs: -1, FinishNs: 301e9, Failed: true},
		done(2, 0, 70e6, 90e6), // TTFT 70 ms, E2EL 90 ms
	}}
	assert.Equal(t, "stage  completed   median TTFT ms     mean E2EL ms\n"+
		"0              3            20.00           133.33\n"+
		"1              0                -                -\n"+
		"2              2            60.00            75.00\n", perStage(res))
}

// The result JSON carries the summary's per-family coverage (a newcomer
// found only table_lookups and extrapolated_lookups there): tiny's three
// LM-head GEMM shapes with their farthest, reach and rule; [] when no
// shape left the grids.
func TestSaveResultCarriesCoverageFamilies(t *testing.T) {
	families := func(args ...string) []any {
		path := filepath.Join(t.TempDir(), "result.json")
		_, stderr, err := run(t, append(args, "--save-result", "--result-filename", path)...)
		require.NoError(t, err, stderr)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var res struct {
			Frontier struct {
				Extrapolated int64 `json:"extrapolated_lookups"`
				Families     []any `json:"extrapolated_families"`
			} `json:"frontier"`
		}
		require.NoError(t, json.Unmarshal(data, &res))
		require.NotNil(t, res.Frontier.Families, "a list, never null")
		return res.Frontier.Families
	}
	assert.Equal(t, []any{map[string]any{"family": "gemm bfloat16", "shapes": 3.0, "farthest": "m=1 n=128256 k=4096",
		"reach": "n 128256 = 1.96× the table's 65536", "rule": gemmRuleText}}, families(withTiny()...))
	assert.Equal(t, []any{}, families("simulate", "--quiet", "--hardware", "h100-sxm", "--model", "meta-llama/Llama-2-7b-hf", "--num-prompts", "20"))
}

// A sweep prints each rule once, naming every family any point priced by
// it (attack12: Qwen3-30B-A3B and Qwen3-14B printed the elementwise rule
// twice, with different family lists).
func TestSweepStatesEachRuleOnce(t *testing.T) {
	_, errOut, err := run(t, "sweep", "--quiet", "--num-prompts", "40", "--request-rate", "10", "--jobs", "1",
		"--vary", "model=Qwen/Qwen3-30B-A3B,Qwen/Qwen3-14B")
	require.NoError(t, err)
	rules := map[string]int{}
	for _, l := range strings.Split(errOut, "\n") {
		if _, rule, ok := strings.Cut(l, ": an extrapolated shape is priced so: "); ok {
			rules[rule]++
		}
	}
	require.NotEmpty(t, rules, errOut)
	for rule, n := range rules {
		assert.Equal(t, 1, n, rule)
	}
}
