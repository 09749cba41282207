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

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "frontier",
		Short:         "Frontier predicts what vLLM V1 does with a workload on given GPUs, without GPUs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return bad(err) })
	root.AddCommand(newSimulateCmd(), newSweepCmd(), newCapacityCmd(), newGateCmd(), newCalibrateCmd(), newHardwareCmd(), newModelsCmd(), newProfileCmd())
	root.AddCommand(newBenchCmd()) // vllm bench latency | throughput (bench.go)
	return root
}

func main() {
	err := newRoot().Execute()
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
