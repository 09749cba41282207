package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's sessions recipes (chat from flags, the agent example) run
// as written, from the repository root, and print what they show
// (scripts/update-recipes.sh regenerates them).
func TestREADMESessionRecipes(t *testing.T) {
	for _, sub := range []string{"simulate --dataset-name sessions", "simulate --scenario scenarios/examples/llama-3.1-8b-h200-agent-sessions.yaml"} {
		t.Run(sub, func(t *testing.T) {
			args, shown := readmeRecipe(t, sub)
			t.Chdir("../..")
			out, stderr, err := run(t, append(args, "--quiet")...)
			require.NoError(t, err, stderr)
			matchesShown(t, out, shown)
		})
	}
}

// The README's offline-benchmark recipes: Llama-3.1-8B on H100 and H200.
func TestREADMEBenchRecipes(t *testing.T) {
	for _, hw := range []string{"h100-sxm", "h200-sxm"} {
		for _, bench := range []string{"latency", "throughput"} {
			sub := "bench " + bench + " --model meta-llama/Llama-3.1-8B-Instruct --hardware " + hw
			t.Run(sub, func(t *testing.T) {
				if testing.Short() && bench == "throughput" {
					t.Skip("1,000 prompts")
				}
				args, shown := readmeRecipe(t, sub)
				out, stderr, err := run(t, args...)
				require.NoError(t, err, stderr)
				matchesShown(t, out, shown)
			})
		}
	}
}
