package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim"
)

// simFlags are `frontier simulate`'s flags: vLLM serve's and vLLM bench
// serve's names, plus the scenario, hardware and output files.
type simFlags struct {
	scenario string
	hardware string
	profile  string
	calib    string

	model, dtype, kvDtype                           string
	tp, pp, dp                                      int
	ep, noEP, prefixCaching, noPrefixCaching, eager bool
	async, noAsync                                  bool
	apiServers                                      int
	maxNumSeqs, maxBatched, maxModelLen, blockSize  int
	gpuUtil                                         float64
	longPrefill, blocksOverride                     int
	graphSizes                                      []int

	dataset                         string
	numPrompts, inLen, outLen       int
	rangeRatio, burstiness, timeout float64
	rate                            string
	maxConcurrency                  int
	seed                            int64

	result                         resultFlags
	ignoreEOS                      bool
	requestsCSV, stepsCSV          string
	goodput                        []string
	inputLen, outputLen            int
	saveDetailed                   bool
	percentiles, percentileMetrics string
	quiet                          bool
	policy                         policyFlags
	quant                          quantFlags    // --quantization (quant_flags.go)
	report                         reportFlags   // report_flags.go
	pred                           predictorFlag // --predictor (predictor_flags.go)

	data datasetFlags // sessions, lengths, --random-prefix-len (session_flags.go)
}

func newSimulateCmd() *cobra.Command {
	cmd, _ := simulateCommand()
	return cmd
}

// simulateCommand builds `frontier simulate` and returns its flags too:
// sweep and capacity parse every point through a fresh one (so every
// flag registered here is a sweep key).
func simulateCommand() (*cobra.Command, *simFlags) {
	f := &simFlags{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate a vLLM deployment serving a workload and report what vllm bench serve would",
		Long: `Simulate one vLLM V1 deployment serving one workload and print what
'vllm bench serve' would print. With no arguments it runs the embedded
default: Llama-3.1-8B-Instruct bf16 on one H200-SXM, random dataset, 1000
prompts of 512 tokens in / 128 out, all sent at once (--request-rate inf).

The deployment and workload come from --scenario FILE (see
scenarios/README.md) and/or flags named as in 'vllm serve' and
'vllm bench serve'; flags override the file.`,
		// A stray argument is bad input (exit 2), like a bad flag.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.Flags().Changed("save-result") {
				return bad(fmt.Errorf("--save-result is a switch, as in vllm bench serve (it takes no value; got %q after it?): name the file with --result-filename FILE", args[0]))
			}
			return listArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario YAML file (default: the embedded default)")
	fl.StringVar(&f.hardware, "hardware", defaultHardware, "GPU: "+strings.Join(profiles.KnownHardware(), " | ")+" (frontier hardware says what each is built from)")
	fl.StringVar(&f.profile, "profile-dir", "", "operator table folder (aiconfigurator layout or the collector's CSVs); default: embedded tables for the hardware")
	fl.StringVar(&f.calib, "calibration", "", "host-overhead calibration JSON (frontier calibrate)")
	// vllm serve
	fl.StringVar(&f.model, "model", defaultModel, "model id (list: frontier models) or path to a HF config.json")
	fl.StringVar(&f.dtype, "dtype", "auto", "weights dtype: auto | bfloat16 | float16 | half (fp8 weights: --quantization fp8)")
	fl.IntVarP(&f.tp, "tensor-parallel-size", "t", 1, "tensor-parallel size")
	fl.IntVar(&f.pp, "pipeline-parallel-size", 1, "pipeline-parallel size")
	fl.IntVar(&f.dp, "data-parallel-size", 1, "data-parallel size")
	fl.BoolVar(&f.ep, "enable-expert-parallel", false, "spread MoE experts over TP × DP ranks")
	fl.BoolVar(&f.noEP, "no-enable-expert-parallel", false, "keep MoE experts sharded by TP (the default)")
	fl.IntVar(&f.maxNumSeqs, "max-num-seqs", 0, "max running requests per step (default: vllm serve's for the GPU, 1024; 256 on A100 and GPUs under 70 GiB; at most --max-num-batched-tokens)")
	fl.IntVar(&f.maxBatched, "max-num-batched-tokens", 0, "token budget per step (default: vllm serve's for the GPU, 8192; 2048 on A100 and GPUs under 70 GiB)")
	fl.IntVar(&f.maxModelLen, "max-model-len", 0, "context length limit (default: vLLM's derived length, the smallest of the config's max_position_embeddings, n_positions, max_seq_len, seq_length, …; 2048 when it has none)")
	fl.Float64Var(&f.gpuUtil, "gpu-memory-utilization", scenarios.DefaultGPUMemoryUtilization, "fraction of GPU memory vLLM may use")
	fl.IntVar(&f.blockSize, "block-size", scenarios.DefaultBlockSize, "KV block size, tokens")
	fl.BoolVar(&f.prefixCaching, "enable-prefix-caching", true, "enable prefix caching")
	fl.BoolVar(&f.noPrefixCaching, "no-enable-prefix-caching", false, "disable prefix caching")
	fl.IntVar(&f.longPrefill, "long-prefill-token-threshold", 0, "cap on a prefill chunk's tokens per step (0 = off)")
	fl.BoolVar(&f.eager, "enforce-eager", false, "disable CUDA graphs")
	fl.StringVar(&f.kvDtype, "kv-cache-dtype", "auto", "KV cache dtype: "+strings.Join(scenarios.KVCacheDtypes, " | "))
	fl.IntVar(&f.blocksOverride, "num-gpu-blocks-override", 0, "use this many KV blocks instead of the memory plan")
	fl.IntSliceVar(&f.graphSizes, "cuda-graph-sizes", nil, "CUDA-graph capture sizes, space- or comma-separated (default: vLLM's)")
	fl.BoolVar(&f.async, "async-scheduling", true, "schedule one step ahead (vLLM default)")
	fl.IntVar(&f.apiServers, "api-server-count", 0, "API server processes (default: data-parallel-size, as vLLM)")
	fl.BoolVar(&f.noAsync, "no-async-scheduling", false, "turn async scheduling off")
	// vllm bench serve
	fl.StringVar(&f.dataset, "dataset-name", "random", "dataset: random | shared_prefix | trace | sessions | lengths")
	fl.IntVar(&f.numPrompts, "num-prompts", defaultRandom().NumPrompts, "number of requests (random dataset)")
	fl.IntVar(&f.inLen, "random-input-len", defaultRandom().InputLen, randomInputLenHelp)
	fl.IntVar(&f.outLen, "random-output-len", defaultRandom().OutputLen, "output tokens (random dataset)")
	fl.IntVar(&f.inputLen, "input-len", 0, "same as --random-input-len (bench serve's general form)")
	fl.IntVar(&f.outputLen, "output-len", 0, "same as --random-output-len (bench serve's general form)")
	fl.Float64Var(&f.rangeRatio, "random-range-ratio", 0, "lengths uniform in len × [1−r, 1+r]")
	fl.StringVar(&f.rate, "request-rate", "inf", "requests/s, or inf to send all at once")
	fl.Float64Var(&f.burstiness, "burstiness", 1, "gamma shape of the gaps (1 = Poisson)")
	fl.IntVar(&f.maxConcurrency, "max-concurrency", 0, "max requests in flight (0 = unlimited)")
	fl.Int64Var(&f.seed, "seed", 0, "random seed")
	fl.Float64Var(&f.timeout, "timeout", 0, "client timeout, s (the request fails and vLLM aborts it)")
	// outputs
	fl.BoolVar(&f.result.save, "save-result", false, "write vllm bench serve's result JSON (name: --result-filename, or bench serve's default name)")
	fl.BoolVar(&f.result.appendTo, "append-result", false, "append the result JSON as one line to the result file")
	fl.StringVar(&f.result.dir, "result-dir", "", "folder for the result file (created if missing)")
	fl.StringVar(&f.result.name, "result-filename", "", "result file name (default {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json)")
	fl.StringVar(&f.result.label, "label", "", "label that starts the default result file name (default: --backend)")
	fl.StringVar(&f.result.backend, "backend", "openai", "endpoint bench serve would call: "+strings.Join(resultBackends, " | ")+" (names the result; the simulation is the same)")
	fl.BoolVar(&f.ignoreEOS, "ignore-eos", false, "accepted as in vllm bench serve: simulated requests always generate their full output length")
	fl.StringVar(&f.requestsCSV, "requests-csv", "", "write one row per request to FILE")
	fl.StringVar(&f.stepsCSV, "steps-csv", "", "write one row per engine step to FILE")
	fl.StringVar(&f.percentiles, "metric-percentiles", "99", "comma-separated percentiles to report, each in [0, 100] (np.percentile: 0 is the minimum, 100 the maximum)")
	fl.StringSliceVar(&f.goodput, "goodput", nil, "SLOs for request goodput, KEY:VALUE in ms with KEY ttft, tpot or e2el (space-separated as in vllm bench serve, comma-separated or repeated)")
	fl.BoolVar(&f.saveDetailed, "save-detailed", false, "not written: per-request detail is --requests-csv FILE")
	fl.StringVar(&f.percentileMetrics, "percentile-metrics", "ttft,tpot,itl", "metrics whose percentiles are printed (ttft,tpot,itl,e2el)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress, start-up (info:) or result: lines on stderr; notes and warnings still print")
	addPolicyFlags(fl, &f.policy)
	addDatasetFlags(fl, &f.data)
	addQuantFlags(fl, &f.quant)
	f.report.register(fl)
	addPredictorFlag(fl, &f.pred)
	return cmd, f
}

func parsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v >= 0 && v <= 100) || len(p) > 12 { // np.percentile's range, as bench serve takes it
			return nil, fmt.Errorf("--metric-percentiles: each must be a number in [0, 100], got %q", p)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--metric-percentiles: give at least one percentile in [0, 100], for example 99 or 50,90,99; got %q", s)
	}
	return out, nil
}

func runSimulate(cmd *cobra.Command, f *simFlags) error {
	slo, err := sim.ParseGoodput(f.goodput)
	if err != nil {
		return bad(err)
	}
	percentiles, err := parsePercentiles(f.percentiles)
	if err != nil {
		return bad(err)
	}
	shown, err := parseMetrics(f.percentileMetrics)
	if err != nil {
		return bad(err)
	}
	sc, err := buildScenario(cmd, f)
	if err != nil {
		return bad(err)
	}
	if err := sc.Validate(); err != nil {
		return bad(nameTheFlag(err, cmd.Flags().Changed, f.scenario))
	}
	opt := sim.Options{}
	stderr := cmd.ErrOrStderr()
	if !f.quiet {
		opt.Progress = progressPrinter(stderr)
	}
	f.result.now = time.Now()
	resultPath, err := f.result.path(sc, modelName(sc))
	if err != nil {
		return bad(err)
	}
	if err := probe(resultPath); err != nil {
		return bad(err)
	}
	if err := checkWritable("--requests-csv", f.requestsCSV); err != nil {
		return bad(err)
	}
	if err := f.report.check(outputPath{"--save-result", resultPath}, outputPath{"--requests-csv", f.requestsCSV}, outputPath{"--steps-csv", f.stepsCSV}); err != nil {
		return bad(err)
	}
	var steps *stepWriter
	if f.stepsCSV != "" {
		if steps, err = newStepWriter(f.stepsCSV); err != nil {
			return bad(err)
		}
		opt.StepSink = steps.add
	}
	rep := f.report.observer(&opt)
	s, setup, err := buildRun(sc, opt)
	if err != nil {
		return bad(nameTheFlag(err, cmd.Flags().Changed, f.scenario))
	}
	if !f.quiet { // vLLM always logs them; --quiet is ours, for loops and scripts
		for _, l := range setup.StartupLog() {
			fmt.Fprintln(stderr, "info:", l)
		}
	}
	if err := rep.begin(s, setup); err != nil {
		return err
	}
	res := s.Run()
	if res.Err != nil {
		rep.abort()
		return bad(abandon(res.Err, steps, f.stepsCSV))
	}
	setup.Finish(s, res)
	if err := rep.finish(stderr, sc, setup, res, f.quiet); err != nil {
		return abandon(err, steps, f.stepsCSV)
	}
	rate, single := singleRate(sc)
	res.Notes = append(res.Notes, sim.Diagnose(res, single && !math.IsInf(rate, 1))...)
	if n := sim.PeakNote(setup, res); n != "" {
		res.Notes = append(res.Notes, n)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	if len(res.Requests) > 0 && !anyCompleted(res.Requests) {
		fmt.Fprintln(stderr, "warning:", allFailedWarning) // as vllm bench serve warns
	}
	if steps != nil {
		if err := steps.close(); err != nil {
			return err
		}
	}
	sum := sim.Summarize(res.Requests, res.ITL, percentiles, slo)
	sum.MaxOutputTokensPerS = res.MaxOutputTokensPerS
	printSummary(cmd.OutOrStdout(), sc, setup, res, sum, shown)
	if resultPath != "" {
		if err := saveResult(resultPath, f.result, sc, setup, res, sum); err != nil {
			return err
		}
		if !f.quiet {
			fmt.Fprintln(stderr, "result:", resultPath)
		}
	}
	if f.requestsCSV != "" {
		if err := writeRequests(f.requestsCSV, res.Requests, setup.Plan.SessionLabels); err != nil {
			return err
		}
	}
	return nil
}

func parseMetrics(s string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		ok := false
		for _, k := range sim.Metrics {
			ok = ok || k == m
		}
		if !ok {
			return nil, fmt.Errorf("--percentile-metrics: unknown metric %q (allowed: ttft, tpot, itl, e2el)", m)
		}
		out = append(out, m)
	}
	return out, nil
}
