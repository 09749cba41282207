package scenarios

import "fmt"

// Upper bounds on sizes. They keep integer arithmetic (nanosecond clocks,
// byte counts) far from overflow and memory bounded, and are far beyond
// any real deployment: an out-of-range value is an error naming the key,
// never a silently wrong answer or an out-of-memory crash.
const (
	MaxTokens       = 10_000_000    // any length in tokens (prompt, output, max_model_len, budget)
	MaxRequests     = 2_000_000     // requests in one run (about 1 KB of state each)
	MaxSeqs         = 1_000_000     // max_num_seqs
	MaxBlocks       = 50_000_000    // num_gpu_blocks_override
	MaxEngines      = 1024          // data_parallel_size × instances, per pool
	MaxParallel     = 64            // tensor / pipeline parallel size
	MaxSeconds      = 100_000_000.0 // any time in seconds (≈ 3 years)
	MaxKVLatencyMs  = 10_000.0      // kv_transfer.latency_ms
	MinKVBandwidthG = 1e-3          // kv_transfer.bandwidth_gbps, GB/s
)

// BlockSizes are the block sizes vLLM accepts (CacheConfig.block_size).
var BlockSizes = []int{1, 8, 16, 32, 64, 128, 256}

func atMost(key string, v, limit int) error {
	if v > limit {
		return fmt.Errorf("%s: must be ≤ %d, got %d", key, limit, v)
	}
	return nil
}

// checkBounds applies the upper bounds; Validate calls it after the
// lower-bound and type checks.
func (s *Scenario) checkBounds() error {
	deps := map[string]*Deployment{}
	if s.Deployment != nil {
		deps["deployment"] = s.Deployment
	}
	if g := s.Disaggregation; g != nil {
		deps["disaggregation.prefill.deployment"] = &g.Prefill.Deployment
		deps["disaggregation.decode.deployment"] = &g.Decode.Deployment
		for name, p := range map[string]*Pool{"disaggregation.prefill": &g.Prefill, "disaggregation.decode": &g.Decode} {
			if err := atMost(name+".instances", p.Instances, MaxEngines); err != nil {
				return err
			}
		}
		if t := g.KVTransfer; t != nil {
			if t.BandwidthGbps < MinKVBandwidthG {
				return fmt.Errorf("disaggregation.kv_transfer.bandwidth_gbps: must be ≥ %g GB/s, got %g", MinKVBandwidthG, t.BandwidthGbps)
			}
			if t.LatencyMs > MaxKVLatencyMs {
				return fmt.Errorf("disaggregation.kv_transfer.latency_ms: must be ≤ %g ms, got %g", MaxKVLatencyMs, t.LatencyMs)
			}
		}
		if a, b := g.Prefill.Deployment.KVCacheDtype, g.Decode.Deployment.KVCacheDtype; a != b {
			return fmt.Errorf("disaggregation: prefill and decode must share kv_cache_dtype for the KV transfer (got %q and %q)", a, b)
		}
	}
	for path, d := range deps {
		for _, c := range []struct {
			key      string
			v, limit int
		}{
			{"tensor_parallel_size", d.TensorParallelSize, MaxParallel},
			{"pipeline_parallel_size", d.PipelineParallelSize, MaxParallel},
			{"data_parallel_size", d.DataParallelSize, MaxEngines},
			{"max_num_seqs", d.MaxNumSeqs, MaxSeqs},
			{"max_num_batched_tokens", d.MaxNumBatchedTokens, MaxTokens},
			{"max_model_len", d.MaxModelLen, MaxTokens},
			{"long_prefill_token_threshold", d.LongPrefillTokenThreshold, MaxTokens},
		} {
			if err := atMost(path+"."+c.key, c.v, c.limit); err != nil {
				return err
			}
		}
		if d.NumGPUBlocksOverride != nil {
			if err := atMost(path+".num_gpu_blocks_override", *d.NumGPUBlocksOverride, MaxBlocks); err != nil {
				return err
			}
		}
		if !containsInt(BlockSizes, d.BlockSize) {
			return fmt.Errorf("%s.block_size: must be one of %v (vLLM's block sizes), got %d", path, BlockSizes, d.BlockSize)
		}
		for i, c := range d.CUDAGraphSizes {
			if err := atMost(fmt.Sprintf("%s.cuda_graph_sizes[%d]", path, i), c, MaxTokens); err != nil {
				return err
			}
		}
	}
	w := &s.Workload
	switch w.Dataset {
	case "random":
		r := w.Random
		for _, c := range []struct {
			key      string
			v, limit int
		}{{"num_prompts", r.NumPrompts, MaxRequests}, {"input_len", r.InputLen, MaxTokens}, {"output_len", r.OutputLen, MaxTokens}, {"prefix_len", r.PrefixLen, MaxTokens}} {
			if err := atMost("workload.random."+c.key, c.v, c.limit); err != nil {
				return err
			}
		}
	case "shared_prefix":
		p := w.SharedPrefix
		if p.NumGroups > MaxRequests || p.NumPromptsPerGroup > MaxRequests || p.NumGroups*p.NumPromptsPerGroup > MaxRequests {
			return fmt.Errorf("workload.shared_prefix: num_groups × num_prompts_per_group must be ≤ %d prompts, got %d × %d", MaxRequests, p.NumGroups, p.NumPromptsPerGroup)
		}
		for _, c := range []struct {
			key string
			v   int
		}{{"system_prompt_len", p.SystemPromptLen}, {"question_len", p.QuestionLen}, {"output_len", p.OutputLen}, {"prompt_len", p.PromptLen}} {
			if err := atMost("workload.shared_prefix."+c.key, c.v, MaxTokens); err != nil {
				return err
			}
		}
	}
	a := &w.Arrivals
	total := 0.0
	for i, st := range a.Stages {
		if st.DurationS > MaxSeconds {
			return fmt.Errorf("workload.arrivals.stages[%d].duration_s: must be ≤ %g s, got %g", i, MaxSeconds, st.DurationS)
		}
		total += st.Rate * st.DurationS
	}
	if total > MaxRequests {
		return fmt.Errorf("workload.arrivals.stages: Σ rate × duration_s must be ≤ %d requests, got %g", MaxRequests, total)
	}
	if a.TimeoutS != nil && *a.TimeoutS > MaxSeconds {
		return fmt.Errorf("workload.arrivals.timeout_s: must be ≤ %g s, got %g", MaxSeconds, *a.TimeoutS)
	}
	if a.MaxConcurrency != nil {
		if err := atMost("workload.arrivals.max_concurrency", *a.MaxConcurrency, MaxRequests); err != nil {
			return err
		}
	}
	return nil
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
