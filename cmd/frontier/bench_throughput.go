package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/offline"
)

// throughputFlags are `vllm bench throughput`'s flags
// (vllm/benchmarks/throughput.py).
type throughputFlags struct {
	backend, dataset, datasetPath, outputJSON string
	inputLen, outputLen, n, numPrompts        int
	prefixLen                                 int
	rangeRatio                                float64
	seed                                      int64
	asyncEngine, profile, disableDetokenize   bool
}

func newBenchThroughputCmd() *cobra.Command {
	f := &throughputFlags{}
	cmd := &cobra.Command{
		Use:   "throughput",
		Short: "vllm bench throughput, simulated: every prompt handed to the engine at once",
		Long: `Simulate 'vllm bench throughput' (vllm/benchmarks/throughput.py): every
prompt is handed to vLLM's LLM class at once and the elapsed time runs to
the last output. The random dataset (--input-len, --output-len, default
128, --random-range-ratio, --prefix-len shared prefix tokens, --num-prompts,
--seed) is vLLM's default without --dataset-path; --dataset-name lengths
--dataset-path FILE draws prompt and output lengths from a JSONL or CSV
file. Prints throughput.py's lines; --output-json writes its keys
(elapsed_time, num_requests, total_num_tokens, requests_per_second,
tokens_per_second).`,
		Args: listArgs,
	}
	simCmd, sf := engineFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", "vllm", "only vllm (the LLM class) is simulated")
	fl.StringVar(&f.dataset, "dataset-name", "sharegpt", "random, or lengths with --dataset-path (without a path: random, as vLLM)")
	fl.StringVar(&f.datasetPath, "dataset-path", "", "lengths dataset: JSONL or CSV of prompt_len, output_len[, prefix_group, prefix_len]")
	fl.IntVar(&f.inputLen, "input-len", 0, "prompt tokens (required for the random dataset)")
	fl.IntVar(&f.outputLen, "output-len", 0, "output tokens (random dataset: default 128; overrides a lengths file's)")
	fl.IntVar(&f.n, "n", 1, "sequences per prompt (only 1 is simulated)")
	fl.IntVar(&f.numPrompts, "num-prompts", 1000, "prompts")
	fl.IntVar(&f.prefixLen, "prefix-len", 0, "random dataset: tokens of one prefix shared by every prompt, before its --input-len tokens")
	fl.Float64Var(&f.rangeRatio, "random-range-ratio", 0, "random dataset: lengths uniform in len × [1−r, 1+r]")
	fl.Int64Var(&f.seed, "seed", 0, "seed of the dataset draw")
	fl.StringVar(&f.outputJSON, "output-json", "", "write the throughput as JSON to FILE")
	fl.BoolVar(&f.asyncEngine, "async-engine", false, "not simulated")
	fl.BoolVar(&f.profile, "profile", false, "not simulated")
	fl.BoolVar(&f.disableDetokenize, "disable-detokenize", false, "accepted: detokenization is not simulated offline")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runBenchThroughput(cmd, simCmd, sf, f) }
	return cmd
}

// throughputWorkload is the dataset throughput.py's get_requests samples.
func throughputWorkload(cmd *cobra.Command, f *throughputFlags) (scenarios.Workload, error) {
	w := scenarios.Workload{Seed: f.seed, Arrivals: scenarios.DefaultArrivals()}
	set := cmd.Flags().Changed
	switch {
	case f.dataset == "lengths":
		if set("input-len") || set("prefix-len") || set("random-range-ratio") {
			return w, fmt.Errorf("--input-len, --prefix-len, --random-range-ratio: for the random dataset; the lengths file sets the prompts")
		}
		w.Dataset, w.Lengths = "lengths", &scenarios.LengthsData{Path: f.datasetPath, NumPrompts: f.numPrompts}
		return w, nil
	case f.datasetPath != "":
		return w, fmt.Errorf("--dataset-name %s --dataset-path: not simulated (no tokenizer); give the lengths as --dataset-name lengths --dataset-path FILE (JSONL or CSV of prompt_len, output_len)", f.dataset)
	case f.dataset != "random" && f.dataset != "sharegpt":
		return w, fmt.Errorf("--dataset-name: random, or lengths with --dataset-path (got %q)", f.dataset)
	case !set("input-len"):
		return w, fmt.Errorf("--input-len: input_len must be provided for a random dataset")
	}
	out := f.outputLen
	if !set("output-len") {
		out = 128 // RandomDataset.DEFAULT_OUTPUT_LEN
	}
	w.Dataset = "random"
	w.Random = &scenarios.RandomData{NumPrompts: f.numPrompts, InputLen: f.inputLen, OutputLen: out, RangeRatio: f.rangeRatio, PrefixLen: f.prefixLen}
	return w, nil
}

func runBenchThroughput(cmd *cobra.Command, simCmd *cobra.Command, sf *simFlags, f *throughputFlags) error {
	if f.backend != "vllm" {
		return bad(fmt.Errorf("--backend %s: only vllm (the LLM class) is simulated", f.backend))
	}
	if err := refuseUnsimulated(cmd, f.n, "async-engine", "profile"); err != nil {
		return bad(err)
	}
	w, err := throughputWorkload(cmd, f)
	if err != nil {
		return bad(err)
	}
	if err := checkWritable("--output-json", f.outputJSON); err != nil {
		return bad(err)
	}
	st, err := offlineSetup(cmd, simCmd, sf, w)
	if err != nil {
		return bad(err)
	}
	plan := st.Plan
	if f.dataset == "lengths" && cmd.Flags().Changed("output-len") {
		if f.outputLen < 1 || f.outputLen > scenarios.MaxTokens {
			return bad(fmt.Errorf("--output-len: must be in [1, %d], got %d", scenarios.MaxTokens, f.outputLen))
		}
		for i := range plan.Stages[0].Requests {
			plan.Stages[0].Requests[i].OutputTokens = int32(f.outputLen) // "Overrides the output length from the dataset"
		}
	}
	if err := offline.CheckLengths(plan, st.Engine.MaxModelLen); err != nil {
		return bad(err)
	}
	out := cmd.OutOrStdout()
	if f.dataset == "sharegpt" {
		fmt.Fprintln(out, "When dataset path is not set, it will default to random dataset")
	}
	res, err := offline.Run(st, plan, sim.Options{})
	if err != nil {
		return bad(err)
	}
	t := offline.Throughput(res)
	printNotes(cmd.ErrOrStderr(), append([]string{describeOffline("bench throughput", st)}, res.Notes...)...)
	fmt.Fprintf(out, "Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output tokens/s\n", t.RequestsPerS, t.TokensPerS, t.OutputTokensPerS)
	fmt.Fprintf(out, "Total num prompt tokens:  %d\n", t.PromptTokens)
	fmt.Fprintf(out, "Total num output tokens:  %d\n", t.OutputTokens)
	if f.outputJSON == "" {
		return nil
	}
	return writeOutputJSON(f.outputJSON, []pyPair{{"elapsed_time", t.ElapsedS}, {"num_requests", t.NumRequests},
		{"total_num_tokens", t.TotalTokens}, {"requests_per_second", t.RequestsPerS}, {"tokens_per_second", t.TokensPerS}})
}
