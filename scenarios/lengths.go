package scenarios

import (
	"errors"
	"fmt"
)

// LengthsData draws requests from a file of length samples (dataset:
// lengths), as `vllm bench serve` draws from a dataset file: shuffled with
// the seed (unless DisableShuffle), the first NumPrompts taken, and, when
// the file has fewer, more drawn from them at random (unless
// NoOversample), as BenchmarkDataset.maybe_oversample_requests does
// (vllm/benchmarks/datasets.py).
type LengthsData struct {
	// Path is a JSONL file of {"prompt_len": P, "output_len": O[,
	// "prefix_group": G, "prefix_len": N]} objects, or a CSV file with
	// those columns.
	Path           string `yaml:"path"`
	NumPrompts     int    `yaml:"num_prompts"`
	DisableShuffle bool   `yaml:"disable_shuffle"` // bench serve's --disable-shuffle
	NoOversample   bool   `yaml:"no_oversample"`   // bench serve's --no-oversample
}

// Validate checks the lengths block.
func (l *LengthsData) Validate() error {
	if l == nil || l.Path == "" {
		return errors.New("workload.lengths.path: required when dataset is lengths (a JSONL or CSV file of prompt_len, output_len)")
	}
	if l.NumPrompts < 1 {
		return fmt.Errorf("workload.lengths.num_prompts: must be ≥ 1, got %d", l.NumPrompts)
	}
	return atMost("workload.lengths.num_prompts", l.NumPrompts, MaxRequests)
}
