package scenarios

import (
	"math"

	"gopkg.in/yaml.v3"
)

// Defaults of `vllm serve` (vLLM EngineArgs) used for omitted deployment keys.
// The batch defaults (max_num_seqs, max_num_batched_tokens) depend on the
// GPU: profiles.Hardware.ServeBatchDefaults.
const (
	DefaultGPUMemoryUtilization = 0.9
	DefaultBlockSize            = 16
)

// ExplicitZero stands for a max_num_seqs, max_num_batched_tokens or
// max_model_len given as 0. Those fields use 0 for "omitted: resolve
// vLLM's default later", so an explicit 0 is kept apart for Validate to
// reject ("must be ≥ 1, got 0") instead of silently taking the default.
const ExplicitZero = math.MinInt

// DefaultDeployment returns a Deployment holding vLLM's defaults. Model is
// empty; MaxNumSeqs, MaxNumBatchedTokens and MaxModelLen are 0 meaning
// "resolve later" (they depend on the GPU or the model's config).
func DefaultDeployment() Deployment {
	on := true
	return Deployment{
		Dtype:                "auto",
		TensorParallelSize:   1,
		PipelineParallelSize: 1,
		DataParallelSize:     1,
		GPUMemoryUtilization: DefaultGPUMemoryUtilization,
		BlockSize:            DefaultBlockSize,
		EnablePrefixCaching:  &on,
		KVCacheDtype:         "auto",
		AsyncScheduling:      &on,
	}
}

// DefaultArrivals returns `vllm bench serve`'s defaults: every request at
// t = 0 (rate inf), Poisson burstiness when a rate is given.
func DefaultArrivals() Arrivals {
	return Arrivals{RequestRate: Rate(math.Inf(1)), Burstiness: 1.0}
}

// UnmarshalYAML fills vLLM's defaults before reading the keys present,
// and marks an explicit 0 of the GPU- or model-dependent limits as
// ExplicitZero.
func (d *Deployment) UnmarshalYAML(n *yaml.Node) error {
	*d = DefaultDeployment()
	type plain Deployment
	if err := n.Decode((*plain)(d)); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var v int
		if val := n.Content[i+1]; val.Tag != "!!int" || val.Decode(&v) != nil || v != 0 {
			continue
		}
		switch n.Content[i].Value {
		case "max_num_seqs":
			d.MaxNumSeqs = ExplicitZero
		case "max_num_batched_tokens":
			d.MaxNumBatchedTokens = ExplicitZero
		case "max_model_len":
			d.MaxModelLen = ExplicitZero
		}
	}
	return nil
}

// UnmarshalYAML fills the client defaults before reading the keys present.
func (a *Arrivals) UnmarshalYAML(n *yaml.Node) error {
	*a = DefaultArrivals()
	type plain Arrivals
	return n.Decode((*plain)(a))
}

// UnmarshalYAML defaults the dataset to random and the arrivals to vLLM
// bench serve's.
func (w *Workload) UnmarshalYAML(n *yaml.Node) error {
	*w = Workload{Dataset: "random", Arrivals: DefaultArrivals()}
	type plain Workload
	return n.Decode((*plain)(w))
}

// UnmarshalYAML records which required keys the block leaves out.
func (r *RandomData) UnmarshalYAML(n *yaml.Node) error {
	type plain RandomData
	if err := n.Decode((*plain)(r)); err != nil {
		return err
	}
	r.omitted = omittedKeys(n, "num_prompts", "input_len", "output_len")
	return nil
}

// UnmarshalYAML records which required keys the block leaves out.
func (p *SharedPrefix) UnmarshalYAML(n *yaml.Node) error {
	type plain SharedPrefix
	if err := n.Decode((*plain)(p)); err != nil {
		return err
	}
	p.omitted = omittedKeys(n, "num_groups", "num_prompts_per_group", "question_len", "output_len")
	return nil
}

// omittedKeys lists the keys of required that mapping n lacks (or sets to
// null).
func omittedKeys(n *yaml.Node, required ...string) []string {
	var out []string
	for _, k := range required {
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k && n.Content[i+1].Tag != "!!null" {
				found = true
			}
		}
		if !found {
			out = append(out, k)
		}
	}
	return out
}

// PrefixCaching reports enable_prefix_caching (default on).
func (d *Deployment) PrefixCaching() bool {
	return d.EnablePrefixCaching == nil || *d.EnablePrefixCaching
}

// Async reports async scheduling (default on).
func (d *Deployment) Async() bool { return d.AsyncScheduling == nil || *d.AsyncScheduling }
