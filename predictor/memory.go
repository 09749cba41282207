package predictor

import (
	"fmt"
	"strconv"
)

const gib = float64(1 << 30)

// NonTorchBytes is memory outside PyTorch's allocator that vLLM's
// profiling subtracts (CUDA context share, cuBLAS workspace), bytes, plus
// NCCL buffers under TP from the hardware figures. 0.18 GiB: vLLM's
// profiling log on a TP1 H100 ("non_torch_memory takes 0.18GiB").
const NonTorchBytes = int64(193_273_528) // 0.18 GiB

// MemoryPlan is vLLM's start-up memory budget for one GPU, bytes: the
// GPU of the pipeline stage with the fewest KV blocks (vLLM gives every
// stage the smallest count, kv_cache_utils.get_kv_cache_configs).
type MemoryPlan struct {
	TotalBytes      int64 // torch-visible GPU memory
	BudgetBytes     int64 // total × gpu_memory_utilization
	WeightBytes     int64 // this rank's weights (WeightBytesPerRank)
	ActivationBytes int64 // peak activation of the profiling forward
	NonTorchBytes   int64
	KVBytes         int64 // left for the KV cache ("Available KV cache memory")
	BlockBytes      int64 // one KV block on this rank (all its layers)
	NumBlocks       int   // num_gpu_blocks
}

// MaxTokens is how many tokens the KV cache holds.
func (m MemoryPlan) MaxTokens(blockSize int) int { return m.NumBlocks * blockSize }

// MaxConcurrency is vLLM's "Maximum concurrency for N tokens per request":
// blocks ÷ the blocks one max_model_len request needs (full attention:
// ⌈max_model_len / block_size⌉; kv_cache_utils
// get_max_concurrency_for_kv_cache_config).
func (m MemoryPlan) MaxConcurrency(maxModelLen, blockSize int) float64 {
	per := (maxModelLen + blockSize - 1) / blockSize
	if per <= 0 {
		return 0
	}
	return float64(m.NumBlocks) / float64(per)
}

// StartupLog is what vLLM logs at start-up about this plan, with its
// formatting (vllm/v1/core/kv_cache_utils.py _report_kv_cache_config at
// the pinned commit, see KVCacheRefusal; the loading line from
// gpu_model_runner without its seconds, which are not simulated; the
// available memory from gpu_worker):
//
//	Model loading took 14.99 GiB
//	Available KV cache memory: 58.19 GiB
//	GPU KV cache size: 440,176 tokens
//	Maximum concurrency for 4,096 tokens per request: 107.46x
func (m MemoryPlan) StartupLog(maxModelLen, blockSize int) []string {
	return []string{
		fmt.Sprintf("Model loading took %.2f GiB", float64(m.WeightBytes)/gib),
		fmt.Sprintf("Available KV cache memory: %.2f GiB", float64(m.KVBytes)/gib),
		fmt.Sprintf("GPU KV cache size: %s tokens", Thousands(int64(m.MaxTokens(blockSize)))),
		fmt.Sprintf("Maximum concurrency for %s tokens per request: %.2fx", Thousands(int64(maxModelLen)), m.MaxConcurrency(maxModelLen, blockSize)),
	}
}

// Thousands formats n with comma thousands separators, as Python's
// f"{n:,}" (440176 → "440,176").
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, c)
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// ActivationPeakBytes is the peak activation of vLLM's profiling forward
// pass with tokens tokens on one rank: 2 bytes × tokens × (9·hidden +
// 4·intermediate/TP + QKV width/TP). Calibrated so Llama-2-7b on an H100
// gives vLLM's logged 1.39 GiB at 8,192 tokens (≈ 182 KB per token), and
// scaled by the shapes for other models (MoE: the routed tokens' top-k
// intermediates; MLA: the query width plus the latent).
func ActivationPeakBytes(cfg Config, tokens int) int64 {
	m := cfg.Model
	inter := m.IntermediateSize
	if m.IsMoE() {
		inter = m.MoEIntermediateSize * m.NumExpertsPerToken
	}
	qkv := (m.NumHeads + 2*m.NumKVHeads) * m.HeadDim
	if m.IsMLA() {
		qkv = m.NumHeads*(m.QKNopeHeadDim+m.QKRopeHeadDim) + m.KVLoraRank + m.QKRopeHeadDim
	}
	per := 9*m.HiddenSize + 4*inter/cfg.TP + qkv/cfg.TP
	return int64(tokens) * 2 * int64(per)
}

func dtypeBytes(d string) float64 {
	if d == "fp8" {
		return 1
	}
	return 2
}

// KVBytesPerTokenPerLayer is one token's KV cache in one layer on one
// rank, bytes: the model's per-layer size (ModelSpec.KVBytesPerTokenPerLayer)
// with the KV heads split over TP (at least one per rank); the MLA latent
// is whole on every rank.
func KVBytesPerTokenPerLayer(cfg Config) int64 {
	m := cfg.Model
	b := int(dtypeBytes(cfg.KVDtype))
	if m.IsMLA() {
		return m.KVBytesPerTokenPerLayer(b)
	}
	kvHeads := max(1, m.NumKVHeads/max(1, cfg.TP))
	return 2 * int64(kvHeads) * int64(m.HeadDim) * int64(b)
}

// PlanMemory computes num_gpu_blocks as vLLM does at start-up (VLLM.md,
// "KV capacity"): per pipeline stage, total × gpu_memory_utilization −
// weights − activation peak − non-torch memory, divided by the block's
// bytes over the stage's layers; the smallest count wins. Every layer
// keeps full-length KV: vLLM disables its hybrid KV cache manager for
// chunked local attention by default ("There is a latency regression when
// using chunked local attention with the hybrid KV cache manager.
// Disabling it, by default.", vllm/config/vllm.py) and then allocates
// Llama-4's chunked layers as full attention (unify_hybrid_kv_cache_specs).
// It returns vLLM's refusals (KVCacheRefusal) when nothing is left for
// the KV cache or one max_model_len sequence does not fit. override
// replaces the block count (num_gpu_blocks_override) after the weights
// check.
func PlanMemory(cfg Config, util float64, maxBatchedTokens, blockSize, maxModelLen int, override *int) (MemoryPlan, error) {
	m := cfg.Model
	pp := max(1, cfg.PP)
	total := cfg.Hardware.TorchTotalBytes // what torch sees (profiles.Hardware)
	if total == 0 {
		total = cfg.Hardware.MemCapacityBytes
	}
	perTok := KVBytesPerTokenPerLayer(cfg)
	stages := stageWeights(cfg)
	weightsAll := weightBytesPerRank(cfg, stages) // heaviest stage + per-GPU buffers
	heaviest := stages[heaviestStage(stages)]
	var best MemoryPlan
	for s, layers := range StageLayers(m.NumLayers, pp) {
		p := MemoryPlan{TotalBytes: total}
		p.BudgetBytes = int64(float64(total) * util)
		p.WeightBytes = weightsAll - heaviest + stages[s]
		p.ActivationBytes = ActivationPeakBytes(cfg, maxBatchedTokens)
		p.NonTorchBytes = NonTorchBytes + cfg.Hardware.NCCLMemBytes[cfg.TP]
		p.KVBytes = p.BudgetBytes - p.WeightBytes - p.ActivationBytes - p.NonTorchBytes
		p.BlockBytes = int64(blockSize) * int64(layers) * perTok
		if p.WeightBytes > p.TotalBytes {
			took := fmt.Sprintf("%.2f GiB", float64(p.WeightBytes)/gib)
			if weightsAll >= MaxWeightBytes {
				took = fmt.Sprintf("more than %d GiB", MaxWeightBytes>>30)
			}
			return p, memoryErrorf("model weights take %s per GPU, more than the %.2f GiB the GPU has (CUDA out of memory while loading weights): raise tensor_parallel_size or pipeline_parallel_size", took, float64(p.TotalBytes)/gib)
		}
		if override == nil {
			if err := KVCacheRefusal(p.KVBytes, p.BlockBytes, blockSize, maxModelLen); err != nil {
				return p, err
			}
			p.NumBlocks = int(p.KVBytes / p.BlockBytes)
		}
		if s == 0 || p.NumBlocks < best.NumBlocks {
			best = p
		}
	}
	if override != nil {
		best.NumBlocks = *override
		if best.NumBlocks < 1 {
			return best, fmt.Errorf("num_gpu_blocks_override: must be ≥ 1, got %d", best.NumBlocks)
		}
		// vLLM's block pool keeps one block as the null block, so N blocks
		// serve (N − 1) × block_size tokens (engine.BlockPool).
		if usable := (best.NumBlocks - 1) * blockSize; maxModelLen > usable {
			return best, fmt.Errorf("num_gpu_blocks_override %d holds %d tokens beside vLLM's null block, fewer than max_model_len %d: a max_model_len request could never be scheduled; raise the override or lower max_model_len", best.NumBlocks, usable, maxModelLen)
		}
	}
	return best, nil
}

// MemoryError is a start-up refusal for lack of GPU memory (weights that
// do not fit, no room for the KV cache): more GPUs or a shorter
// max_model_len may fix it, unlike an unpriced model.
type MemoryError struct{ msg string }

// Error is vLLM's refusal text.
func (e *MemoryError) Error() string { return e.msg }

func memoryErrorf(format string, args ...any) error {
	return &MemoryError{fmt.Sprintf(format, args...)}
}

// conservingMemoryURL ends vLLM's memory refusals.
const conservingMemoryURL = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."

// KVCacheRefusal is vLLM's start-up check that the KV cache holds one
// max_model_len request, with vLLM's words, from
// vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory at commit
// 001cabc1be16a59a70d720ed61a13b678c060a18 of vllm-project/vllm (a 2026
// main, past 0.13: it has max_model_len auto-fit and prefill context
// parallel), the version Frontier pins for start-up words:
//
//   - no memory left: "No available memory for the cache blocks. Try
//     increasing `gpu_memory_utilization` when initializing the engine.
//     See https://docs.vllm.ai/en/latest/configuration/conserving_memory/
//     for more details."
//   - too little: "To serve at least one request with the models's max
//     seq len (N), (X GiB KV cache is needed, which is larger than the
//     available KV cache memory (Y GiB). [Based on the available memory,
//     the estimated maximum model length is M. ]Try increasing
//     `gpu_memory_utilization` or decreasing `max_model_len` when
//     initializing the engine. See …" — "models's" is vLLM's spelling;
//     the bracketed clause appears only when M > 0.
//
// Needed memory is ⌈max_model_len / block_size⌉ blocks of blockBytes (all
// of this rank's layers); M is the longest length whose blocks fit (the
// binary search of estimate_max_model_len). GiB print with two decimals.
func KVCacheRefusal(availBytes, blockBytes int64, blockSize, maxModelLen int) error {
	if availBytes <= 0 {
		return memoryErrorf("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine. %s", conservingMemoryURL)
	}
	// Blocks and bytes are compared without multiplying (a config's
	// length can be near 2^63: blocks × blockBytes would wrap).
	blocks := int64((maxModelLen-1)/blockSize) + 1
	if blocks <= availBytes/blockBytes {
		return nil
	}
	needed := float64(blocks) * float64(blockBytes)
	estimated := ""
	if m := availBytes / blockBytes * int64(blockSize); m > 0 {
		estimated = fmt.Sprintf("Based on the available memory, the estimated maximum model length is %d. ", m)
	}
	return memoryErrorf("To serve at least one request with the models's max seq len (%d), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB). %sTry increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. %s",
		maxModelLen, needed/gib, float64(availBytes)/gib, estimated, conservingMemoryURL)
}
