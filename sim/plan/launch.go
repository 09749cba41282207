package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"frontier/scenarios"
)

// ServeFlags are the `vllm serve` engine flags launch lines may use,
// pinned from vllm/engine/arg_utils.py (EngineArgs.add_cli_args) at
// vllm-project/vllm commit 99d7eb5d6a51 (the v0.11 line: its deprecation
// notes say "will be removed in v0.12.0"). Boolean flags there are
// argparse BooleanOptionalAction, so each has its --no- form.
var ServeFlags = []string{
	"model", "dtype", "max-model-len", "enforce-eager", "seed",
	"pipeline-parallel-size", "tensor-parallel-size", "data-parallel-size",
	"enable-expert-parallel", "no-enable-expert-parallel", "all2all-backend",
	"block-size", "gpu-memory-utilization", "kv-cache-dtype", "num-gpu-blocks-override",
	"enable-prefix-caching", "no-enable-prefix-caching",
	"max-num-batched-tokens", "max-num-seqs", "long-prefill-token-threshold",
	"async-scheduling", "no-async-scheduling", "cuda-graph-sizes", "cudagraph-capture-sizes",
	"kv-transfer-config", "quantization", "scheduling-policy",
}

// FrontendFlags are the `vllm serve` API-server flags launch lines use,
// from vllm/entrypoints/openai/cli_args.py (FrontendArgs and
// make_arg_parser) of the same vLLM line.
var FrontendFlags = []string{"port", "api-server-count"}

// BenchFlags are the `vllm bench serve` flags the measuring line uses
// (vllm/benchmarks/serve.py and the random dataset's flags in
// vllm/benchmarks/datasets.py); simulate takes each with the same name.
var BenchFlags = []string{"model", "dataset-name", "random-input-len", "random-output-len", "random-range-ratio",
	"random-prefix-len", "num-prompts", "request-rate", "burstiness", "max-concurrency", "seed", "ignore-eos",
	"percentile-metrics", "metric-percentiles", "port"}

// ProxyScript is the proxy a disaggregated deployment's lines assume:
// vLLM ships only example proxies; this one is the NIXL connector's
// round-robin proxy of vLLM's own test suite (run it from a vLLM source
// checkout). It spreads requests round-robin over the instances, where
// the simulator's default router picks the least loaded.
const ProxyScript = "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py"

// KVTransferConfig is the --kv-transfer-config of every instance of a
// disaggregated deployment: vLLM's NIXL connector, each instance both
// producer and consumer as vLLM's NIXL examples run it.
const KVTransferConfig = `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`

// Launch is the command lines that would run and measure a deployment.
type Launch struct {
	Serve []string // one `vllm serve` per engine process (one when co-located)
	Proxy string   // disaggregated: the proxy in front of the pools
	Bench string   // `vllm bench serve` at the given load; "" when it has no form of the workload
	// Notes say what the lines cannot: a setting vLLM or bench serve has
	// no flag for (rather than a flag they would refuse or misread).
	Notes []string
}

// Lines is every line, in the order to run them, then the notes as
// "# " comments.
func (l Launch) Lines() []string {
	out := append([]string{}, l.Serve...)
	if l.Proxy != "" {
		out = append(out, l.Proxy)
	}
	if l.Bench != "" {
		out = append(out, l.Bench)
	}
	for _, n := range l.Notes {
		out = append(out, "# "+n)
	}
	return out
}

// LaunchLines writes the lines for scenario sc under load x (a request
// rate in req/s, +Inf for inf; with closed, a max concurrency at rate
// inf). Every flag whose value differs from vLLM's default is written;
// async scheduling is always written (--async-scheduling or
// --no-async-scheduling): vLLM's default changed to on around 0.12, and
// the pinned v0.11 line defaults it off. Disaggregated pools get one line
// per instance on their own GPUs (CUDA_VISIBLE_DEVICES), ports 8100+ for
// prefill and 8200+ for decode, the NIXL connector, and the proxy on
// port 8000, where bench serve sends by default. What the lines cannot
// say is a note (Launch.Notes): a policy vLLM lacks, replicas behind a
// router, and a workload bench serve has no form of (a dataset other
// than random, arrival stages: then no bench line; request classes).
func LaunchLines(sc *scenarios.Scenario, x float64, closed bool) Launch {
	var l Launch
	if d := sc.Deployment; d != nil {
		l.Serve = []string{"vllm serve " + d.Model + serveFlags(d)}
		l.Notes = append(l.Notes, policyNote(d)...)
		if r := sc.Replicas; r != nil && r.Count > 1 {
			router := r.Router
			if router == "" {
				router = "round-robin"
			}
			l.Notes = append(l.Notes, fmt.Sprintf("%d replicas: run the vllm serve line once per replica (each on its own GPUs and --port) behind a router on port 8000 sending to them by %s (frontier's --router); "+
				"vLLM ships no router (llm-d's inference gateway and vLLM's production-stack router are two)", r.Count, router))
		}
	} else {
		g := sc.Disaggregation
		gpu := 0
		var pre, dec []string
		for k, pool := range []*scenarios.Pool{&g.Prefill, &g.Decode} {
			for i := 0; i < pool.Instances; i++ {
				var devs []string
				for j := 0; j < pool.Deployment.TensorParallelSize*pool.Deployment.PipelineParallelSize; j++ {
					devs = append(devs, strconv.Itoa(gpu))
					gpu++
				}
				port := 8100 + 100*k + i
				if k == 0 {
					pre = append(pre, strconv.Itoa(port))
				} else {
					dec = append(dec, strconv.Itoa(port))
				}
				l.Serve = append(l.Serve, fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s VLLM_NIXL_SIDE_CHANNEL_PORT=%d vllm serve %s --port %d%s --kv-transfer-config '%s'",
					strings.Join(devs, ","), 5600+gpu, pool.Deployment.Model, port, serveFlags(&pool.Deployment), KVTransferConfig))
			}
			for _, n := range policyNote(&pool.Deployment) {
				if !slices.Contains(l.Notes, n) {
					l.Notes = append(l.Notes, n)
				}
			}
		}
		l.Proxy = fmt.Sprintf("python3 %s --port 8000 --prefiller-hosts%s --prefiller-ports %s --decoder-hosts%s --decoder-ports %s",
			ProxyScript, strings.Repeat(" localhost", len(pre)), strings.Join(pre, " "), strings.Repeat(" localhost", len(dec)), strings.Join(dec, " "))
	}
	if w := sc.Workload; w.Dataset != "random" {
		l.Notes = append(l.Notes, fmt.Sprintf("no vllm bench serve line: bench serve has no form of the %s dataset (the simulated workload)", w.Dataset))
		return l
	} else if len(w.Arrivals.Stages) > 0 {
		l.Notes = append(l.Notes, fmt.Sprintf("no vllm bench serve line: workload.arrivals.stages (%d rates in turn) have no vllm bench serve form", len(w.Arrivals.Stages)))
		return l
	} else if len(w.Classes) > 0 {
		l.Notes = append(l.Notes, fmt.Sprintf("workload.classes (%d request classes, their priorities and lengths) have no vllm bench serve form: the line sends the random dataset's requests as one class", len(w.Classes)))
	}
	l.Bench = benchLine(sc, x, closed)
	return l
}

// policyNote says why a deployment's line has no --scheduling-policy for
// a policy vLLM does not have (sjf, frontier's worked example of adding
// one: docs/POLICIES.md).
func policyNote(d *scenarios.Deployment) []string {
	if p := d.SchedulingPolicy; p != "" && p != "fcfs" && p != "priority" {
		return []string{fmt.Sprintf("--scheduling-policy %s is frontier's worked example, not a vLLM policy (vLLM: fcfs, priority); the line keeps vLLM's default fcfs", p)}
	}
	return nil
}

func serveFlags(d *scenarios.Deployment) string {
	var b strings.Builder
	flag := func(name string, v any) { fmt.Fprintf(&b, " --%s %v", name, v) }
	if d.Dtype != "" && d.Dtype != "auto" {
		flag("dtype", d.Dtype)
	}
	if d.Quantization != "" {
		flag("quantization", d.Quantization)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"tensor-parallel-size", d.TensorParallelSize}, {"pipeline-parallel-size", d.PipelineParallelSize}, {"data-parallel-size", d.DataParallelSize}} {
		if f.v > 1 {
			flag(f.name, f.v)
		}
	}
	if d.EnableExpertParallel {
		b.WriteString(" --enable-expert-parallel")
	}
	if d.All2AllBackend != "" {
		flag("all2all-backend", d.All2AllBackend)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max-num-seqs", d.MaxNumSeqs}, {"max-num-batched-tokens", d.MaxNumBatchedTokens}, {"max-model-len", d.MaxModelLen}} {
		if f.v > 0 {
			flag(f.name, f.v)
		}
	}
	if d.GPUMemoryUtilization != 0 && d.GPUMemoryUtilization != scenarios.DefaultGPUMemoryUtilization {
		flag("gpu-memory-utilization", strconv.FormatFloat(d.GPUMemoryUtilization, 'g', -1, 64))
	}
	if d.BlockSize != 0 && d.BlockSize != scenarios.DefaultBlockSize {
		flag("block-size", d.BlockSize)
	}
	if !d.PrefixCaching() {
		b.WriteString(" --no-enable-prefix-caching")
	}
	if d.LongPrefillTokenThreshold > 0 {
		flag("long-prefill-token-threshold", d.LongPrefillTokenThreshold)
	}
	if d.EnforceEager {
		b.WriteString(" --enforce-eager")
	}
	if d.KVCacheDtype != "" && d.KVCacheDtype != "auto" {
		flag("kv-cache-dtype", d.KVCacheDtype)
	}
	if d.NumGPUBlocksOverride != nil {
		flag("num-gpu-blocks-override", *d.NumGPUBlocksOverride)
	}
	if len(d.CUDAGraphSizes) > 0 {
		var s []string
		for _, c := range d.CUDAGraphSizes {
			s = append(s, strconv.Itoa(c))
		}
		flag("cuda-graph-sizes", strings.Join(s, " "))
	}
	if d.Async() {
		b.WriteString(" --async-scheduling")
	} else {
		b.WriteString(" --no-async-scheduling")
	}
	if d.APIServerCount != nil {
		flag("api-server-count", *d.APIServerCount)
	}
	if d.SchedulingPolicy == "priority" {
		flag("scheduling-policy", d.SchedulingPolicy)
	}
	return b.String()
}

// benchLine is the `vllm bench serve` line that sends the scenario's
// random workload at load x (ignore-eos: simulated requests generate
// their full output length).
func benchLine(sc *scenarios.Scenario, x float64, closed bool) string {
	w := sc.Workload
	model := ""
	if sc.Deployment != nil {
		model = sc.Deployment.Model
	} else {
		model = sc.Disaggregation.Decode.Deployment.Model
	}
	var b strings.Builder
	fmt.Fprintf(&b, "vllm bench serve --model %s --dataset-name random", model)
	if r := w.Random; r != nil {
		fmt.Fprintf(&b, " --random-input-len %d --random-output-len %d", r.InputLen, r.OutputLen)
		if r.RangeRatio > 0 {
			fmt.Fprintf(&b, " --random-range-ratio %s", strconv.FormatFloat(r.RangeRatio, 'g', -1, 64))
		}
		if r.PrefixLen > 0 {
			fmt.Fprintf(&b, " --random-prefix-len %d", r.PrefixLen)
		}
		fmt.Fprintf(&b, " --num-prompts %d", r.NumPrompts)
	}
	rate := "inf"
	if !closed && !math.IsInf(x, 1) {
		rate = strconv.FormatFloat(x, 'f', -1, 64)
	}
	fmt.Fprintf(&b, " --request-rate %s", rate)
	if w.Arrivals.Burstiness != 1 && rate != "inf" {
		fmt.Fprintf(&b, " --burstiness %s", strconv.FormatFloat(w.Arrivals.Burstiness, 'g', -1, 64))
	}
	switch {
	case closed:
		fmt.Fprintf(&b, " --max-concurrency %d", int(x))
	case w.Arrivals.MaxConcurrency != nil:
		fmt.Fprintf(&b, " --max-concurrency %d", *w.Arrivals.MaxConcurrency)
	}
	fmt.Fprintf(&b, " --seed %d --ignore-eos --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 99", w.Seed)
	return b.String()
}
