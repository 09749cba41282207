package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim/plan"
)

// words splits a shell line, keeping single-quoted words whole.
func words(line string) []string {
	var out []string
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		if strings.HasPrefix(line, "'") {
			end := strings.Index(line[1:], "'") + 1
			out = append(out, line[1:end])
			line = line[end+1:]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		if w != "" {
			out = append(out, w)
		}
		line = rest
	}
	return out
}

// parseBack reads a `vllm serve` or `vllm bench serve` line as simulate
// would: every flag must be in the pinned lists; the model positional
// becomes --model, nargs lists become simulate's comma lists, and the
// flags that place processes (--port, --kv-transfer-config, env) are
// dropped. It returns simulate's scenario for them.
func parseBack(t *testing.T, line string, pinned []string) *scenarios.Scenario {
	t.Helper()
	w := words(line)
	for len(w) > 0 && strings.Contains(w[0], "=") && !strings.HasPrefix(w[0], "--") {
		w = w[1:] // CUDA_VISIBLE_DEVICES=…
	}
	var args []string
	switch {
	case len(w) > 2 && w[0] == "vllm" && w[1] == "serve":
		args = []string{"--model=" + w[2]}
		w = w[3:]
	case len(w) > 3 && w[0] == "vllm" && w[1] == "bench" && w[2] == "serve":
		w = w[3:]
	default:
		t.Fatalf("not a vllm line: %s", line)
	}
	for i := 0; i < len(w); i++ {
		name, ok := strings.CutPrefix(w[i], "--")
		require.True(t, ok, "%q in %s", w[i], line)
		require.True(t, slices.Contains(pinned, name), "--%s is not in the pinned flag list (%s)", name, line)
		var vals []string
		for i+1 < len(w) && !strings.HasPrefix(w[i+1], "--") {
			i++
			vals = append(vals, w[i])
		}
		if name == "port" || name == "kv-transfer-config" {
			continue
		}
		if len(vals) == 0 {
			args = append(args, "--"+name)
			continue
		}
		args = append(args, "--"+name+"="+strings.Join(vals, ","))
	}
	cmd, f := simulateCommand()
	require.NoError(t, cmd.Flags().Parse(args), line)
	sc, err := buildScenario(cmd, f)
	require.NoError(t, err, line)
	return sc
}

func scenarioFor(t *testing.T, args ...string) *scenarios.Scenario {
	t.Helper()
	cmd, f := simulateCommand()
	require.NoError(t, cmd.Flags().Parse(args))
	sc, err := buildScenario(cmd, f)
	require.NoError(t, err)
	require.NoError(t, sc.Validate())
	return sc
}

// Every launch line parses back through simulate's flags to the same
// deployment and workload, and uses only pinned vLLM flags.
func TestLaunchLinesRoundTrip(t *testing.T) {
	serve := append(append([]string{}, plan.ServeFlags...), plan.FrontendFlags...)
	for _, args := range [][]string{
		nil,
		{"--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2", "--data-parallel-size", "2",
			"--max-num-seqs", "128", "--max-num-batched-tokens", "4096", "--max-model-len", "8192", "--gpu-memory-utilization", "0.85",
			"--block-size", "32", "--no-enable-prefix-caching", "--long-prefill-token-threshold", "512", "--kv-cache-dtype", "fp8",
			"--num-gpu-blocks-override", "5000", "--cuda-graph-sizes", "1,2,4,8", "--no-async-scheduling", "--api-server-count", "2",
			"--random-range-ratio", "0.5", "--burstiness", "0.5", "--seed", "7", "--num-prompts", "300"},
		{"--model", "mistralai/Mixtral-8x7B-v0.1", "--tensor-parallel-size", "2", "--data-parallel-size", "4", "--enable-expert-parallel", "--enforce-eager", "--dtype", "float16"},
	} {
		sc := scenarioFor(t, append(args, "--request-rate", "12.5")...)
		l := plan.LaunchLines(sc, 12.5, false)
		require.Len(t, l.Serve, 1)
		assert.Empty(t, l.Proxy)
		back := parseBack(t, l.Serve[0], serve)
		assert.Equal(t, sc.Deployment, back.Deployment, l.Serve[0])
		bench := parseBack(t, l.Bench, plan.BenchFlags)
		assert.Equal(t, sc.Workload, bench.Workload, l.Bench)
	}
	// Closed loop: rate inf at a max concurrency.
	sc := scenarioFor(t, "--max-concurrency", "64")
	l := plan.LaunchLines(sc, 64, true)
	assert.Equal(t, sc.Workload, parseBack(t, l.Bench, plan.BenchFlags).Workload, l.Bench)
	assert.Contains(t, l.Bench, "--request-rate inf --max-concurrency 64")
}

// A disaggregated deployment: one line per instance on its own GPUs and
// port, the NIXL connector, the proxy naming every instance, and each
// instance's line parsing back to its pool's deployment.
func TestLaunchLinesDisaggregated(t *testing.T) {
	sc := scenarioFor(t, "--request-rate", "3")
	d := *sc.Deployment
	d.TensorParallelSize, d.MaxNumSeqs = 2, 64
	dec := *sc.Deployment
	dec.TensorParallelSize = 4
	sc.Deployment = nil
	sc.Disaggregation = &scenarios.Disaggregation{Prefill: scenarios.Pool{Instances: 2, Deployment: d}, Decode: scenarios.Pool{Instances: 1, Deployment: dec}}
	require.NoError(t, sc.Validate())
	l := plan.LaunchLines(sc, 3, false)
	require.Len(t, l.Serve, 3)
	assert.True(t, strings.HasPrefix(l.Serve[0], "CUDA_VISIBLE_DEVICES=0,1 "), l.Serve[0])
	assert.True(t, strings.HasPrefix(l.Serve[1], "CUDA_VISIBLE_DEVICES=2,3 "), l.Serve[1])
	assert.True(t, strings.HasPrefix(l.Serve[2], "CUDA_VISIBLE_DEVICES=4,5,6,7 "), l.Serve[2])
	serve := append(append([]string{}, plan.ServeFlags...), plan.FrontendFlags...)
	for i, line := range l.Serve {
		assert.Contains(t, line, `--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'`)
		want := &d
		if i == 2 {
			want = &dec
		}
		assert.Equal(t, want, parseBack(t, line, serve).Deployment, line)
	}
	assert.Contains(t, l.Serve[1], "--port 8101")
	assert.Contains(t, l.Serve[2], "--port 8200")
	assert.Equal(t, "python3 "+plan.ProxyScript+" --port 8000 --prefiller-hosts localhost localhost --prefiller-ports 8100 8101 --decoder-hosts localhost --decoder-ports 8200", l.Proxy)
	assert.Equal(t, sc.Workload, parseBack(t, l.Bench, plan.BenchFlags).Workload)
}

// Settings added after the launch lines were written reach them (on main
// a deployment with --quantization fp8 or --scheduling-policy priority
// launched without them, and a workload with --random-prefix-len 256
// was measured without the prefix), and every line still parses back.
// What vLLM or bench serve cannot say is a "# " note, never a wrong
// flag: sjf (frontier's worked example), replicas behind a router, a
// dataset or request classes bench serve has no form of.
func TestLaunchLinesCarryEverySetting(t *testing.T) {
	serve := append(append([]string{}, plan.ServeFlags...), plan.FrontendFlags...)
	sc := scenarioFor(t, "--quantization", "fp8", "--scheduling-policy", "priority", "--random-prefix-len", "256", "--request-rate", "4")
	l := plan.LaunchLines(sc, 4, false)
	require.Len(t, l.Serve, 1)
	assert.Contains(t, l.Serve[0], " --quantization fp8")
	assert.Contains(t, l.Serve[0], " --scheduling-policy priority")
	assert.Equal(t, sc.Deployment, parseBack(t, l.Serve[0], serve).Deployment, l.Serve[0])
	assert.Contains(t, l.Bench, " --random-prefix-len 256")
	assert.Equal(t, sc.Workload, parseBack(t, l.Bench, plan.BenchFlags).Workload, l.Bench)
	assert.Empty(t, l.Notes)

	sc = scenarioFor(t, "--scheduling-policy", "sjf", "--replicas", "3", "--router", "least-requests", "--request-rate", "4")
	l = plan.LaunchLines(sc, 4, false)
	require.Len(t, l.Serve, 1)
	assert.NotContains(t, l.Serve[0], "sjf")
	assert.Equal(t, []string{
		"--scheduling-policy sjf is frontier's worked example, not a vLLM policy (vLLM: fcfs, priority); the line keeps vLLM's default fcfs",
		"3 replicas: run the vllm serve line once per replica (each on its own GPUs and --port) behind a router on port 8000 sending to them by least-requests (frontier's --router); vLLM ships no router (llm-d's inference gateway and vLLM's production-stack router are two)",
	}, l.Notes)
	lines := l.Lines()
	assert.Equal(t, "# "+l.Notes[1], lines[len(lines)-1])

	dir := t.TempDir()
	path := writeFile(t, dir, "l.csv", "prompt_len,output_len\n100,10\n200,20\n")
	sc = scenarioFor(t, "--dataset-name", "lengths", "--dataset-path", path, "--request-rate", "4")
	l = plan.LaunchLines(sc, 4, false)
	assert.Empty(t, l.Bench)
	assert.Equal(t, []string{"no vllm bench serve line: bench serve has no form of the lengths dataset (the simulated workload)"}, l.Notes)
}
