package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/offline"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "vLLM's offline benchmarks, simulated: frontier bench latency | throughput",
		Long: `vLLM's offline benchmarks (vllm bench latency, vllm bench throughput), simulated:
the LLM class hands prompts to the engine in-process, so there is no API
server, no HTTP and no streaming in the times. Flags are vLLM's; the engine
flags (--model, --tensor-parallel-size, --max-num-seqs, …) are vllm serve's,
with the LLM class's batch defaults.`,
		Args: cobra.ArbitraryArgs,
		// Without a benchmark it shows its help; anything else (a vLLM user
		// typing `bench serve`, say) is bad input, not a help page and exit 0.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			hint := ""
			if args[0] == "serve" {
				hint = "; vllm bench serve (the online benchmark, through the API server) is frontier simulate, with bench serve's flags"
			}
			return bad(fmt.Errorf("bench: unknown benchmark %q: frontier bench latency | throughput%s", args[0], hint))
		},
	}
	cmd.AddCommand(newBenchLatencyCmd(), newBenchThroughputCmd())
	return cmd
}

// engineFlags gives an offline benchmark command the engine flags of
// `frontier simulate` (vllm serve's names, plus --hardware, --profile-dir,
// --vllm-version, --predictor and --calibration): a simulate command's
// flags, shared, so its buildScenario reads them.
func engineFlags(cmd *cobra.Command) (*cobra.Command, *simFlags) {
	simCmd, f := simulateCommand()
	for _, n := range append([]string{"hardware", "profile-dir", "vllm-version", "predictor", "calibration"}, deploymentFlags...) {
		if n == "api-server-count" {
			continue // a vllm serve front-end flag, not EngineArgs': the LLM class has no API server
		}
		cmd.Flags().AddFlag(simCmd.Flags().Lookup(n))
	}
	// This command's own copies of the flags: their help states the LLM
	// class's defaults.
	simCmd.Flags().Lookup("max-num-batched-tokens").Usage = "token budget per step (default: the LLM class's, 16384 on GPUs of ≥ 70 GiB but A100s, else 8192)"
	simCmd.Flags().Lookup("max-num-seqs").Usage = "max running requests per step (default: the LLM class's, 1024 on GPUs of ≥ 70 GiB but A100s, else 256, at most --max-num-batched-tokens)"
	return simCmd, f
}

// offlineSetup resolves the embedded default deployment with the engine
// flags applied, the LLM class's batch defaults for flags not given
// (offline.LLMClassBatchDefaults) and w as the workload, and refuses what
// vLLM's offline benchmarks refuse. Errors about a value a flag of cmd
// set name the flag (nameTheFlag), as simulate's do.
func offlineSetup(cmd, simCmd *cobra.Command, f *simFlags, w scenarios.Workload) (*sim.Setup, error) {
	sc, err := offlineScenario(simCmd, f, w)
	if err != nil {
		return nil, nameTheFlag(err, cmd.Flags().Changed, "")
	}
	st, err := sim.Resolve(sc)
	if err != nil {
		return nil, nameTheFlag(err, cmd.Flags().Changed, "")
	}
	return st, offline.Check(st)
}

func offlineScenario(simCmd *cobra.Command, f *simFlags, w scenarios.Workload) (*scenarios.Scenario, error) {
	sc, err := buildScenario(simCmd, f)
	if err != nil {
		return nil, err
	}
	hw, err := profiles.LookupHardware(sc.Hardware)
	if err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	tokens, seqs := offline.LLMClassBatchDefaults(hw)
	set := simCmd.Flags().Changed
	if !set("max-num-batched-tokens") {
		sc.Deployment.MaxNumBatchedTokens = tokens
	}
	if !set("max-num-seqs") { // capped at the budget, as vLLM caps a defaulted max_num_seqs
		sc.Deployment.MaxNumSeqs = seqs
		if b := sc.Deployment.MaxNumBatchedTokens; b > 0 { // a bad budget is refused for its own flag
			sc.Deployment.MaxNumSeqs = min(seqs, b)
		}
	}
	sc.Name, sc.Workload = "offline", w
	return sc, sc.Validate()
}

// describeOffline is the note saying what was simulated.
func describeOffline(bench string, st *sim.Setup) string {
	caching := "on"
	if !st.Engine.EnablePrefixCaching {
		caching = "off"
	}
	return fmt.Sprintf("simulated vllm %s: %s on %s, TP %d PP %d; the LLM class (no API server): max_num_batched_tokens %d, max_num_seqs %d, prefix caching %s, KV cache %d blocks",
		bench, st.Model.ID, st.Hardware.Name, st.Pred.TP, st.PP, st.Engine.MaxNumBatchedTokens, st.Engine.MaxNumSeqs, caching, st.Memory.NumBlocks)
}

// refuseUnsimulated refuses vLLM flags whose behaviour is not simulated.
func refuseUnsimulated(cmd *cobra.Command, n int, flags ...string) error {
	if n != 1 {
		return fmt.Errorf("--n %d: parallel sampling (several sequences per prompt) is not simulated; use --n 1", n)
	}
	for _, fl := range flags {
		if cmd.Flags().Changed(fl) {
			return fmt.Errorf("--%s: not simulated", fl)
		}
	}
	return nil
}

// printNotes writes notes to w as "note: …" lines.
func printNotes(w io.Writer, notes ...string) {
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// pyJSON writes ordered key/value pairs as Python's json.dump(obj, f,
// indent=4) writes a dict: floats as repr, lists and dicts one item per
// line; values are int, float64, []float64 or a pyDict.
func pyJSON(pairs []pyPair) string {
	var b strings.Builder
	writePyValue(&b, pyDict(pairs), 0)
	return b.String()
}

type pyPair struct {
	key string
	val any
}

type pyDict []pyPair

func writePyValue(b *strings.Builder, v any, depth int) {
	in := strings.Repeat("    ", depth+1)
	switch v := v.(type) {
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		b.WriteString(pyFloat(v))
	case []float64:
		b.WriteString("[\n")
		for i, x := range v {
			b.WriteString(in + pyFloat(x))
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(strings.Repeat("    ", depth) + "]")
	case pyDict:
		b.WriteString("{\n")
		for i, p := range v {
			b.WriteString(in + strconv.Quote(p.key) + ": ")
			writePyValue(b, p.val, depth+1)
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(strings.Repeat("    ", depth) + "}")
	}
}

// writeOutputJSON writes --output-json, all at once (nothing partial).
func writeOutputJSON(path string, pairs []pyPair) error {
	if err := os.WriteFile(path, []byte(pyJSON(pairs)), 0o644); err != nil {
		return fmt.Errorf("--output-json: %w", err)
	}
	return nil
}
