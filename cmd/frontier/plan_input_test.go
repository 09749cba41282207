package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/sim/plan"
)

// Errors of sweep and capacity points name what the user wrote, as
// simulate's do (nameTheFlag): the flag, base or --vary KEY; a --sweep
// file's deployment key with the file and the deployment; a --scenario
// file's key with the file. On main every one named the scenario key
// (--vary max-num-seqs=-3 said deployment.max_num_seqs), and capacity
// prefixed "base:" to a run without axes.
func TestPlanErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	sweepFile := writeFile(t, dir, "bad.yaml", "deployments:\n  - name: bad\n    deployment: {model: meta-llama/Llama-3.1-8B-Instruct, max_num_seqs: -3}\n")
	scen := writeFile(t, dir, "s.yaml", `hardware: h200-sxm
deployment: {model: meta-llama/Llama-3.1-8B-Instruct}
workload:
  dataset: random
  random: {num_prompts: 4, input_len: 64, output_len: 4}
  arrivals: {request_rate: -5}
`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{sweepArgs("--vary", "max-num-seqs=-3,2"), "point 0 (max-num-seqs=-3): --max-num-seqs: must be ≥ 1, got -3"},
		{sweepArgs("--vary", "max-num-seqs=1,2", "--gpu-memory-utilization", "2"), "point 0 (max-num-seqs=1): --gpu-memory-utilization: must be in (0, 1], got 2"},
		{sweepArgs("--vary", "request-rate=-5,2"), "point 0 (request-rate=-5): --request-rate: must be > 0 requests/s or inf, got -5"},
		{sweepArgs("--sweep", sweepFile), "point 0 (deployment=bad): " + sweepFile + ": deployments bad: deployment.max_num_seqs: must be ≥ 1, got -3"},
		{sweepArgs("--sweep", sweepFile, "--max-num-seqs", "-2"), "point 0 (deployment=bad): --max-num-seqs: must be ≥ 1, got -2"},
		{[]string{"sweep", "--quiet", "--scenario", scen, "--vary", "max-num-seqs=1,2"},
			"point 0 (max-num-seqs=1): " + scen + ": workload.arrivals.request_rate: must be > 0 requests/s or inf, got -5"},
		{capacityArgs("--slo", "ttft:p99<=1s", "--max-num-seqs", "0"), "--max-num-seqs: must be ≥ 1, got 0"},
		{capacityArgs("--slo", "ttft:p99<=1s", "--vary", "max-num-seqs=0,4"), "max-num-seqs=0: --max-num-seqs: must be ≥ 1, got 0"},
	} {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.want)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, 2, exitCode(err), c.want)
	}
}

// Capacity probes the random dataset only, and says why, naming where the
// dataset came from (on main a trace or sessions scenario was refused
// for --num-prompts, a flag the user may never have typed, and the
// lengths dataset for "its length is --num-prompts", which it also has).
// A probe too short to judge steady state (sim.GrowthMinRequests) and
// --replicas with --gpus (a layout, as TP and DP) are refused by flag.
func TestCapacityInputRefusals(t *testing.T) {
	examples := filepath.Join("..", "..", "scenarios", "examples")
	why := ": capacity probes the random dataset only: it lengthens a probe by doubling --num-prompts"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"capacity", "--quiet", "--slo", "ttft:p99<=1s", "--dataset-name", "sessions"}, "--dataset-name sessions" + why},
		{[]string{"capacity", "--quiet", "--slo", "ttft:p99<=1s", "--scenario", filepath.Join(examples, "llama-3.1-8b-h200-chat-sessions.yaml")},
			filepath.Join(examples, "llama-3.1-8b-h200-chat-sessions.yaml") + ": workload.dataset: sessions" + why},
		{[]string{"capacity", "--quiet", "--slo", "ttft:p99<=1s", "--scenario", filepath.Join(examples, "llama-3.1-8b-h100-trace.yaml")},
			filepath.Join(examples, "llama-3.1-8b-h100-trace.yaml") + ": workload.dataset: trace" + why},
		{capacityArgs("--slo", "ttft:p99<=1s", "--num-prompts", "39"), "--num-prompts: a capacity probe needs at least 40 requests to show whether its queue keeps growing (sim.GrowthMinRequests), got 39"},
		{capacityArgs("--slo", "ttft:p99<=1s", "--gpus", "2", "--replicas", "2"), "--replicas: --gpus enumerates the layout"},
	} {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
		assert.Equal(t, 2, exitCode(err), c.want)
	}
	_, err := os.Stat(examples)
	require.NoError(t, err)
}

// A point's own --KEY=VALUE comes after its sweep-file deployment (as
// docs/SWEEP.md says): --vary hardware over a deployment that names its
// hardware runs on each value. On main the deployment's hardware won
// silently: the row labelled hardware=h100-sxm ran on h200-sxm.
func TestSweepAxisHardwareOverDeploymentHardware(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "hw.yaml", "deployments:\n  - name: a\n    hardware: h200-sxm\n    deployment: {model: meta-llama/Llama-3.1-8B-Instruct}\n")
	jsonl := filepath.Join(dir, "s.jsonl")
	_, stderr, err := run(t, sweepArgs("--sweep", file, "--vary", "hardware=h100-sxm,h200-sxm", "--out-jsonl", jsonl)...)
	require.NoError(t, err, stderr)
	lines := readLinesFile(t, jsonl)
	require.Len(t, lines, 2)
	for i, hw := range []string{"h100-sxm", "h200-sxm"} {
		assert.Equal(t, map[string]any{"deployment": "a", "hardware": hw}, lines[i]["keys"])
		assert.Equal(t, hw, lines[i]["result"].(map[string]any)["frontier"].(map[string]any)["hardware"], "point %d", i)
	}
}

// --hardware cannot move a pool that names its own GPU: a disaggregated
// scenario (or sweep-file deployment) whose pool sets hardware is refused
// with the key, where on main the flag (or axis) was silently ignored
// for that pool.
func TestHardwareFlagAgainstPoolHardware(t *testing.T) {
	dir := t.TempDir()
	pools := `disaggregation:
      prefill: {instances: 1, hardware: h200-sxm, deployment: {model: meta-llama/Llama-3.1-8B-Instruct}}
      decode: {instances: 1, deployment: {model: meta-llama/Llama-3.1-8B-Instruct}}
`
	file := writeFile(t, dir, "pd.yaml", "deployments:\n  - name: pd\n    "+pools)
	_, _, err := run(t, sweepArgs("--sweep", file, "--vary", "hardware=h100-sxm,h200-sxm")...)
	require.Error(t, err)
	assert.Equal(t, "point 0 (deployment=pd hardware=h100-sxm): --hardware: the deployment pd sets its prefill pool's hardware (h200-sxm), which the flag would not change", err.Error())
	assert.Equal(t, 2, exitCode(err))

	scen := writeFile(t, dir, "s.yaml", "hardware: h200-sxm\n"+strings.ReplaceAll(pools, "\n    ", "\n")+`workload:
  dataset: random
  random: {num_prompts: 4, input_len: 64, output_len: 4}
  arrivals: {request_rate: 5}
`)
	_, _, err = run(t, "simulate", "--quiet", "--scenario", scen, "--hardware", "h100-sxm")
	require.Error(t, err)
	assert.Equal(t, "--hardware: "+scen+" sets its prefill pool's hardware (h200-sxm), which the flag would not change", err.Error())
	assert.Equal(t, 2, exitCode(err))
	_, stderr, err := run(t, "simulate", "--quiet", "--scenario", scen)
	require.NoError(t, err, stderr)
}

// A --plot the sweep cannot draw is refused before any run, leaving no
// file (on main: the whole sweep ran, wrote --out-csv, then exited 2 for
// want of a numeric axis); request_goodput without --goodput (null in
// every row: on main an empty plot and exit 0) is refused too.
func TestSweepPlotCheckedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{sweepArgs("--vary", "model=meta-llama/Llama-3.1-8B-Instruct,meta-llama/Llama-2-7b-hf", "--plot", filepath.Join(dir, "p.png"), "--out-csv", filepath.Join(dir, "c.csv")),
			"--plot: the sweep has no numeric axis to draw p99_ttft_ms against (keys: model)"},
		{sweepArgs("--vary", "max-num-seqs=2,4", "--plot", filepath.Join(dir, "p.png"), "--plot-metric", "request_goodput", "--out-csv", filepath.Join(dir, "c.csv")),
			"--plot-metric request_goodput: null without --goodput (bench serve's SLOs, e.g. --goodput ttft:500)"},
	} {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.want)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, 2, exitCode(err))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}

// sweep merge --plot draws what the unsharded sweep's --plot draws,
// byte for byte, SLO line included (the --goodput bounds travel in every
// line, "goodput"); a merge plot is checked before anything is written.
func TestSweepMergePlot(t *testing.T) {
	dir := t.TempDir()
	axes := []string{"--vary", "max-num-seqs=2,4,16", "--goodput", "ttft:300"}
	whole := filepath.Join(dir, "whole.svg")
	_, stderr, err := run(t, sweepArgs(append([]string{"--plot", whole}, axes...)...)...)
	require.NoError(t, err, stderr)
	var shards []string
	for i := range 2 {
		file := filepath.Join(dir, "shard"+string(rune('0'+i))+".jsonl")
		_, stderr, err := run(t, sweepArgs(append([]string{"--shard", string(rune('0'+i)) + "/2", "--out-jsonl", file}, axes...)...)...)
		require.NoError(t, err, stderr)
		shards = append(shards, file)
	}
	merged := filepath.Join(dir, "merged.svg")
	_, stderr, err = run(t, append([]string{"sweep", "merge", "--plot", merged}, shards...)...)
	require.NoError(t, err, stderr)
	want, err := os.ReadFile(whole)
	require.NoError(t, err)
	got, err := os.ReadFile(merged)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Contains(t, string(got), "SLO ttft ≤ 300 ms")

	csv := filepath.Join(dir, "m.csv")
	_, _, err = run(t, append([]string{"sweep", "merge", "--plot", filepath.Join(dir, "x.svg"), "--plot-metric", "p95_ttft_ms", "--out-csv", csv}, shards...)...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--plot-metric "p95_ttft_ms": one of bench serve's keys`)
	assert.Equal(t, 2, exitCode(err))
	assert.NoFileExists(t, csv)
}

// sweep --launch gives every point its vllm serve line, and says why
// there is no bench serve line when the workload has no bench serve form
// (on main a trace or staged sweep printed no launch lines at all, and
// said nothing).
func TestSweepLaunchWithoutBenchForm(t *testing.T) {
	trace := filepath.Join("..", "..", "scenarios", "examples", "llama-3.1-8b-h100-trace.yaml")
	out, stderr, err := run(t, "sweep", "--quiet", "--scenario", trace, "--vary", "max-num-seqs=64,128", "--launch")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "# point 1: max-num-seqs=128\nvllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 128")
	assert.Contains(t, out, "# no vllm bench serve line: bench serve has no form of the trace dataset (the simulated workload)\n")

	staged := writeFile(t, t.TempDir(), "staged.yaml", `hardware: h200-sxm
deployment: {model: meta-llama/Llama-3.1-8B-Instruct}
workload:
  dataset: random
  random: {num_prompts: 24, input_len: 64, output_len: 8}
  arrivals: {stages: [{rate: 5, duration_s: 2}, {rate: 10, duration_s: 2}]}
`)
	out, stderr, err = run(t, "sweep", "--quiet", "--scenario", staged, "--vary", "max-num-seqs=64,128", "--launch")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "# no vllm bench serve line: workload.arrivals.stages (2 rates in turn) have no vllm bench serve form\n")
}

// The bench serve line at capacity sends as many requests as the probe
// that held there: a probe lengthened (×2, ×4) to show its steady state
// held at that length, not at --num-prompts (on main the line said
// --num-prompts 200 for a capacity that held only at 800).
func TestCapacityLaunchAtTheProbeLengthThatHeld(t *testing.T) {
	cmd, f := capacityCommand()
	require.NoError(t, cmd.ParseFlags(capacityArgs("--slo", "ttft:p99<=1s")[1:]))
	r, err := prepareCapacity(cmd, f)
	require.NoError(t, err)
	at := plan.Probe{X: 12.5, Held: true, Requests: 800, GPUs: 1, Values: []float64{100}, OutputThroughput: 100}
	c := &plan.Capacity{X: 12.5, At: &at, Probes: []plan.Probe{at}}
	var b bytes.Buffer
	require.NoError(t, printCapacity(&b, nil, r, f, r.candidates[0], c))
	assert.Contains(t, b.String(), " --num-prompts 800 --request-rate 12.5 ")
}

// A config whose length keys pass int64 once rope-scaled, or whose KV
// need for one max-length request passes int64 bytes, is refused with
// vLLM's KV-cache reason (exit 2). On main 2^62 positions × linear rope 4
// wrapped to a negative max_model_len (every request failed, "0 refused
// by the API server, 0 given up"), and 2^62 positions ran, the KV check's
// product having wrapped. (The refusal comes first from the weights:
// vLLM's rotary cos/sin cache of 2^62 positions × 128 × 2 B = 2^70 B
// fails the model load, which main hid by wrapping it to exactly 0; the
// KV-cache check past int64 is TestKVCacheRefusalHugeLength's.)
func TestHugeConfigLengthRefused(t *testing.T) {
	for _, rope := range []any{map[string]any{"rope_type": "linear", "factor": 4.0}, nil} {
		cfg := writeConfig(t, func(c map[string]any) {
			c["max_position_embeddings"] = int64(1) << 62
			c["rope_scaling"] = rope
		})
		_, _, err := run(t, withTiny("--model", cfg)...)
		require.Error(t, err)
		assert.Equal(t, 2, exitCode(err))
		assert.Contains(t, err.Error(), "deployment does not start: model weights take more than 4294967296 GiB per GPU")
	}
}

// The capacity report's deployment line says --replicas (on main
// "TP 1 PP 1 DP 1 (2 GPUs)" for two replicas of one GPU each).
func TestCapacityDeploymentLineSaysReplicas(t *testing.T) {
	out, stderr, err := run(t, capacityArgs("--slo", "ttft:p99<=200ms", "--replicas", "2", "--num-prompts", "100")...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Deployment:                        meta-llama/Llama-3.1-8B-Instruct on h200-sxm, 2 replicas of TP 1 PP 1 DP 1 (2 GPUs)\n")
}

// Two sweep outputs naming one file are refused before any run, as
// simulate refuses them (distinctOutputs); on main --out-jsonl and
// --out-csv on one path exited 0 with the JSON lines overwritten by the
// CSV.
func TestSweepOutputsDistinct(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same.out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{sweepArgs("--vary", "max-num-seqs=2,4", "--out-jsonl", same, "--out-csv", same), "--out-csv and --out-jsonl both write " + same + ": give each output its own file"},
		{sweepArgs("--vary", "max-num-seqs=2,4", "--out-csv", same+".svg", "--plot", same+".svg"), "--out-csv and --plot both write " + same + ".svg: give each output its own file"},
		{[]string{"sweep", "merge", "--out-csv", same, "--out-jsonl", same, "x.jsonl"}, "--out-csv and --out-jsonl both write " + same},
	} {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
		assert.Equal(t, 2, exitCode(err))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// bench latency and throughput name the flag too (on main
// --max-num-seqs -1 said deployment.max_num_seqs, --num-prompts -4
// workload.random.num_prompts).
func TestBenchErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "throughput", "--input-len", "100", "--max-num-seqs", "-1"}, "--max-num-seqs: must be ≥ 1, got -1"},
		{[]string{"bench", "throughput", "--input-len", "100", "--num-prompts", "-4"}, "--num-prompts: must be ≥ 1, got -4"},
		{[]string{"bench", "latency", "--gpu-memory-utilization", "3"}, "--gpu-memory-utilization: must be in (0, 1], got 3"},
		{[]string{"bench", "latency", "--max-model-len", "-5"}, "--max-model-len: must be ≥ 1, got -5"},
	} {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.want)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, 2, exitCode(err))
	}
}

// A name outside frontier's lists (a typo) is bad input on sweep and
// capacity as on simulate: exit 2 before anything runs, naming the flag.
// On main an unknown --scheduling-policy, --model, --hardware, --router,
// --quantization or --vllm-version became a "refused" row, as if vLLM
// had refused the deployment, and the sweep exited 0. A method vLLM has
// and frontier cannot price stays a row.
func TestPlanUnknownNamesAreBadInput(t *testing.T) {
	for _, c := range []struct {
		vary, want string
	}{
		{"scheduling-policy=bogus,fcfs", `--scheduling-policy: unknown scheduling policy "bogus" (allowed: fcfs, priority, sjf)`},
		{"model=acme/x,meta-llama/Llama-3.1-8B-Instruct", `--model: model "acme/x": not a known model id nor an existing config.json path`},
		{"hardware=bogus,h200-sxm", `--hardware: unknown hardware "bogus" (allowed: `},
		{"router=bogus,round-robin", `--router: unknown router policy "bogus" (allowed: `},
		{"quantization=bogus,fp8", `--quantization: unknown quantization method "bogus" (allowed: `},
		{"vllm-version=9.9.9,0.19.0", `--vllm-version: no h200-sxm tables embedded for vLLM 9.9.9 (embedded: `},
	} {
		_, _, err := run(t, sweepArgs("--replicas", "2", "--vary", c.vary)...)
		require.Error(t, err, c.vary)
		assert.Contains(t, err.Error(), "point 0 (", c.vary)
		assert.Contains(t, err.Error(), c.want, c.vary)
		assert.Equal(t, 2, exitCode(err), c.vary)
	}
	_, _, err := run(t, capacityArgs("--slo", "ttft:p99<=1s", "--scheduling-policy", "bogus")...)
	require.Error(t, err)
	assert.Equal(t, `--scheduling-policy: unknown scheduling policy "bogus" (allowed: fcfs, priority, sjf)`, err.Error())
	assert.Equal(t, 2, exitCode(err))

	out, stderr, err := run(t, sweepArgs("--vary", "quantization=gguf,fp8")...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, `refused: deployment.quantization: quantization method "gguf" is not priced`)
}
