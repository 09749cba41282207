package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"frontier/sim"
)

// checkFlagForms handles the bench serve / vllm serve flag spellings that
// are not settings of their own: --input-len and --output-len (bench
// serve's general forms of the random lengths), a switch given with its
// --no- form (refused: which one wins depends on an order we cannot see),
// and flags whose behaviour is not simulated (--save-detailed,
// --ignore-eos=false), which are refused with what to use instead.
func checkFlagForms(cmd *cobra.Command, f *simFlags) error {
	set := cmd.Flags().Changed
	if set("save-detailed") {
		return fmt.Errorf("--save-detailed: not written into the result JSON; --requests-csv FILE has one row per request (arrival, first token, finish, tokens)")
	}
	for _, alias := range [][2]string{{"input-len", "random-input-len"}, {"output-len", "random-output-len"}} {
		if !set(alias[0]) {
			continue
		}
		if set(alias[1]) {
			return fmt.Errorf("--%s and --%s: give one of them (the first maps to the second, as in vllm bench serve)", alias[0], alias[1])
		}
		v, _ := cmd.Flags().GetInt(alias[0])
		if err := cmd.Flags().Set(alias[1], strconv.Itoa(v)); err != nil {
			return fmt.Errorf("--%s: %w", alias[0], err)
		}
	}
	if set("ignore-eos") && !f.ignoreEOS {
		return fmt.Errorf("--ignore-eos=false: not simulated; every request generates its full output length (random-output-len, output_len, the trace's output_tokens), as with --ignore-eos")
	}
	for _, pair := range [][2]string{{"enable-expert-parallel", "no-enable-expert-parallel"},
		{"enable-prefix-caching", "no-enable-prefix-caching"}, {"async-scheduling", "no-async-scheduling"}} {
		if set(pair[0]) && set(pair[1]) {
			return fmt.Errorf("--%s and --%s: give one of them", pair[0], pair[1])
		}
	}
	return nil
}

// allFailedWarning is vllm bench serve's warning when no request succeeded
// (vllm/benchmarks/serve.py, calculate_metrics).
const allFailedWarning = "All requests failed. This is likely due to a misconfiguration on the benchmark arguments."

func anyCompleted(reqs []sim.RequestRecord) bool {
	for i := range reqs {
		if !reqs[i].Failed && reqs[i].FinishNs >= 0 {
			return true
		}
	}
	return false
}
