// Command frontier simulates vLLM V1 serving on GPUs it does not need:
// `frontier simulate` predicts what `vllm bench serve` would report for a
// deployment and a workload; `frontier gate` compares predictions with
// measured runs. This package parses flags and formats output, nothing else.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// usageError marks bad user input: exit code 2 (like a flag error).
type usageError struct{ err error }

// Error is the wrapped error's message.
func (e usageError) Error() string { return e.err.Error() }

// Unwrap exposes the wrapped error to errors.Is / errors.As.
func (e usageError) Unwrap() error { return e.err }

func bad(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// subcommands are frontier's commands, in the order they are added.
var subcommands = []struct {
	name  string
	build func() *cobra.Command
}{
	{"simulate", newSimulateCmd}, {"sweep", newSweepCmd}, {"capacity", newCapacityCmd}, {"gate", newGateCmd},
	{"calibrate", newCalibrateCmd}, {"hardware", newHardwareCmd}, {"models", newModelsCmd}, {"profile", newProfileCmd},
	{"bench", newBenchCmd}, // vllm bench latency | throughput (bench.go)
}

func newRoot() *cobra.Command { return newRootOf("") }

// newRootOf is the root command with only the subcommand named only
// (every one when ""): a process runs one command, and building all of
// them and their flags cost a one-request simulate 1.2 M instructions
// and ~70 page faults (sweep, capacity and bench each register
// simulate's ~100 flags again).
func newRootOf(only string) *cobra.Command {
	root := &cobra.Command{
		Use:           "frontier",
		Short:         "Frontier predicts what vLLM V1 does with a workload on given GPUs, without GPUs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return bad(err) })
	root.SetGlobalNormalizationFunc(underscoresAsDashes)
	for _, c := range subcommands {
		if only == "" || c.name == only {
			root.AddCommand(c.build())
		}
	}
	return root
}

// underscoresAsDashes reads --max_num_seqs as --max-num-seqs, as vLLM's
// FlexibleArgumentParser (vllm/utils: "ArgumentParser that allows both
// underscore and dash in names") does for vllm serve and vllm bench serve.
func underscoresAsDashes(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}

// invoked is the subcommand args (the command line after the program's
// name) run, when its first word names one; "" for anything else (no
// arguments, help, completion, a flag first, a misspelt command), which
// needs every command (to list them, or to suggest one).
func invoked(args []string) string {
	for _, c := range subcommands {
		if len(args) > 0 && args[0] == c.name {
			return c.name
		}
	}
	return ""
}

func main() {
	err := newRootOf(invoked(os.Args[1:])).Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "frontier:", err)
	os.Exit(exitCode(err))
}

// exitCode is the process's exit status for Execute's error: 0 for none,
// 2 for bad input (a usageError, or cobra's own "unknown command" for a
// misspelt command), 1 for any other failure.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ") {
		return 2
	}
	return 1
}
