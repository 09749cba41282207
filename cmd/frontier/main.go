// Command frontier simulates vLLM V1 serving on GPUs it does not need:
// `frontier simulate` predicts what `vllm bench serve` would report for a
// deployment and a workload; `frontier gate` compares predictions with
// measured runs. This package parses flags and formats output, nothing else.
package main

import (
	"errors"
	"fmt"
	"os"

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
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}
