package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/offline"
)

// latencyFlags are `vllm bench latency`'s flags (vllm/benchmarks/latency.py).
type latencyFlags struct {
	inputLen, outputLen, batchSize, n, warmup, iters int
	beamSearch, profile, disableDetokenize           bool
	outputJSON                                       string
}

func newBenchLatencyCmd() *cobra.Command {
	f := &latencyFlags{}
	cmd := &cobra.Command{
		Use:   "latency",
		Short: "vllm bench latency, simulated: the latency of one batch run to completion",
		Long: `Simulate 'vllm bench latency' (vllm/benchmarks/latency.py): --batch-size
prompts of --input-len random tokens each generate --output-len tokens
(ignore_eos) through vLLM's LLM class, --num-iters-warmup times, then
--num-iters times measured; an iteration's latency runs from handing the
batch to the engine to its last token. The same prompts every iteration,
so prefix caching is off unless --enable-prefix-caching is given (as
latency.py sets it). Prints latency.py's lines; --output-json writes its
keys (avg_latency, std_latency, latencies, percentiles).`,
		Args: listArgs,
	}
	simCmd, sf := engineFlags(cmd)
	caching := simCmd.Flags().Lookup("enable-prefix-caching")
	caching.DefValue, caching.Usage = "false", "enable prefix caching (off by default here, as latency.py sets it: its prompts repeat every iteration)"
	fl := cmd.Flags()
	fl.IntVar(&f.inputLen, "input-len", 32, "prompt tokens")
	fl.IntVar(&f.outputLen, "output-len", 128, "output tokens")
	fl.IntVar(&f.batchSize, "batch-size", 8, "prompts per batch")
	fl.IntVar(&f.n, "n", 1, "sequences per prompt (only 1 is simulated)")
	fl.BoolVar(&f.beamSearch, "use-beam-search", false, "not simulated")
	fl.IntVar(&f.warmup, "num-iters-warmup", 10, "warmup iterations (not measured)")
	fl.IntVar(&f.iters, "num-iters", 30, "measured iterations")
	fl.BoolVar(&f.profile, "profile", false, "not simulated")
	fl.StringVar(&f.outputJSON, "output-json", "", "write the latencies as JSON to FILE")
	fl.BoolVar(&f.disableDetokenize, "disable-detokenize", false, "accepted: detokenization is not simulated offline")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runBenchLatency(cmd, simCmd, sf, f) }
	return cmd
}

func runBenchLatency(cmd *cobra.Command, simCmd *cobra.Command, sf *simFlags, f *latencyFlags) error {
	if err := refuseUnsimulated(cmd, f.n, "use-beam-search", "profile"); err != nil {
		return bad(err)
	}
	for _, c := range []struct {
		flag    string
		v, min  int
		maximum int
	}{
		{"input-len", f.inputLen, 1, scenarios.MaxTokens}, {"output-len", f.outputLen, 1, scenarios.MaxTokens},
		{"batch-size", f.batchSize, 1, scenarios.MaxRequests}, {"num-iters", f.iters, 1, scenarios.MaxRequests},
		{"num-iters-warmup", f.warmup, 0, scenarios.MaxRequests},
	} {
		if c.v < c.min || c.v > c.maximum {
			return bad(fmt.Errorf("--%s: must be in [%d, %d], got %d", c.flag, c.min, c.maximum, c.v))
		}
	}
	if (f.warmup+f.iters)*f.batchSize > scenarios.MaxRequests {
		return bad(fmt.Errorf("--batch-size × (--num-iters-warmup + --num-iters) must be ≤ %d requests, got %d", scenarios.MaxRequests, (f.warmup+f.iters)*f.batchSize))
	}
	if err := checkWritable("--output-json", f.outputJSON); err != nil {
		return bad(err)
	}
	// latency.py: "V1 enables prefix caching by default which skews the
	// latency numbers": its parser defaults it off.
	if !simCmd.Flags().Changed("enable-prefix-caching") && !simCmd.Flags().Changed("no-enable-prefix-caching") {
		if err := simCmd.Flags().Set("no-enable-prefix-caching", "true"); err != nil {
			return err
		}
	}
	cfg := offline.LatencyConfig{InputLen: f.inputLen, OutputLen: f.outputLen, BatchSize: f.batchSize, NumItersWarmup: f.warmup, NumIters: f.iters}
	w := scenarios.Workload{Dataset: "random", Arrivals: scenarios.DefaultArrivals(),
		Random: &scenarios.RandomData{NumPrompts: f.batchSize, InputLen: f.inputLen, OutputLen: f.outputLen}}
	st, err := offlineSetup(cmd, simCmd, sf, w)
	if err != nil {
		return bad(err)
	}
	if f.inputLen+f.outputLen > st.Engine.MaxModelLen {
		return bad(fmt.Errorf("--input-len %d + --output-len %d > max_model_len %d: Please ensure that max_model_len is greater than the sum of input_len and output_len", f.inputLen, f.outputLen, st.Engine.MaxModelLen))
	}
	res, err := offline.Run(st, offline.LatencyPlan(cfg), sim.Options{})
	if err != nil {
		return bad(err)
	}
	s := offline.Stats(offline.Latencies(res, cfg))
	printNotes(cmd.ErrOrStderr(), append([]string{describeOffline("bench latency", st)}, res.Notes...)...)
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "Warming up...")
	fmt.Fprintf(out, "Avg latency: %s seconds\n", pyFloat(s.Avg))
	fmt.Fprintf(out, "Std latency: %s seconds\n", pyFloat(s.Std))
	percentiles := pyDict{}
	for i, p := range s.Percentages {
		fmt.Fprintf(out, "%d%% percentile latency: %s seconds\n", p, pyFloat(s.Percentiles[i]))
		percentiles = append(percentiles, pyPair{strconv.Itoa(p), s.Percentiles[i]})
	}
	if f.outputJSON == "" {
		return nil
	}
	return writeOutputJSON(f.outputJSON, []pyPair{{"avg_latency", s.Avg}, {"std_latency", s.Std}, {"latencies", s.Latencies}, {"percentiles", percentiles}})
}
