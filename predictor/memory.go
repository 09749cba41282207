package predictor

import "fmt"

const gib = float64(1 << 30)

// TorchTotalBytes is the GPU memory vLLM sees (torch.cuda.mem_get_info
// total), bytes. H100-SXM 80GB (and H800): 79.19 GiB, the figure vLLM's
// memory profiling log prints on that GPU. H200: 150,109,880,320 bytes
// (139.80 GiB), torch.cuda.mem_get_info on our H200 (nvidia-smi: 143,771
// MiB), measured 2026-11-29. Other hardware: the spec capacity.
func TorchTotalBytes(hardware string, specBytes int64) int64 {
	switch hardware {
	case "h100-sxm", "h800":
		return int64(85_029_615_042) // 79.19 GiB
	case "h200-sxm":
		return int64(150_109_880_320) // measured on our H200
	}
	return specBytes
}

// NonTorchBytes is memory outside PyTorch's allocator that vLLM's
// profiling subtracts (CUDA context share, cuBLAS workspace), bytes, plus
// NCCL buffers under TP from the hardware figures. 0.18 GiB: vLLM's
// profiling log on a TP1 H100 ("non_torch_memory takes 0.18GiB").
const NonTorchBytes = int64(193_273_528) // 0.18 GiB

// MemoryPlan is vLLM's start-up memory budget for one GPU, bytes.
type MemoryPlan struct {
	TotalBytes      int64 // torch-visible GPU memory
	BudgetBytes     int64 // total × gpu_memory_utilization
	WeightBytes     int64 // this rank's weights
	ActivationBytes int64 // peak activation of the profiling forward
	NonTorchBytes   int64
	KVBytes         int64 // left for the KV cache
	BlockBytes      int64 // one KV block on this rank (all its layers)
	NumBlocks       int   // num_gpu_blocks
}

// MaxTokens is how many tokens the KV cache holds.
func (m MemoryPlan) MaxTokens(blockSize int) int { return m.NumBlocks * blockSize }

// WeightBytesPerRank is the model's weights on one GPU: parameters × dtype
// bytes, split over TP and PP ranks.
func WeightBytesPerRank(cfg Config) int64 {
	return int64(float64(cfg.Model.ParamCount()) * dtypeBytes(cfg.Dtype) / float64(cfg.TP*cfg.PP))
}

// ActivationPeakBytes is the peak activation of vLLM's profiling forward
// pass with tokens tokens on one rank: 2 bytes × tokens × (9·hidden +
// 4·intermediate/TP + QKV width/TP). Calibrated so Llama-2-7b on an H100
// gives vLLM's logged 1.39 GiB at 8,192 tokens (≈ 182 KB per token), and
// scaled by the shapes for other models.
func ActivationPeakBytes(cfg Config, tokens int) int64 {
	m := cfg.Model
	inter := m.IntermediateSize
	if m.IsMoE() {
		inter = m.MoEIntermediateSize * m.NumExpertsPerToken
	}
	qkv := (m.NumHeads + 2*m.NumKVHeads) * m.HeadDim
	per := 9*m.HiddenSize + 4*inter/cfg.TP + qkv/cfg.TP
	return int64(tokens) * 2 * int64(per)
}

func dtypeBytes(d string) float64 {
	if d == "fp8" {
		return 1
	}
	return 2
}

// PlanMemory computes num_gpu_blocks as vLLM does at start-up (VLLM.md,
// "KV capacity"): total × gpu_memory_utilization − weights − activation
// peak − non-torch memory, divided by the block's bytes over this rank's
// layers. It returns vLLM's refusal when nothing is left for the KV cache
// or one max_model_len sequence does not fit. override replaces the block
// count (num_gpu_blocks_override) after the weights check.
func PlanMemory(cfg Config, util float64, maxBatchedTokens, blockSize, maxModelLen int, override *int) (MemoryPlan, error) {
	m := cfg.Model
	p := MemoryPlan{TotalBytes: TorchTotalBytes(cfg.Hardware.Name, cfg.Hardware.MemCapacityBytes)}
	p.BudgetBytes = int64(float64(p.TotalBytes) * util)
	p.WeightBytes = WeightBytesPerRank(cfg)
	p.ActivationBytes = ActivationPeakBytes(cfg, maxBatchedTokens)
	p.NonTorchBytes = NonTorchBytes + cfg.Hardware.NCCLMemBytes[cfg.TP]
	p.KVBytes = p.BudgetBytes - p.WeightBytes - p.ActivationBytes - p.NonTorchBytes
	kvHeads := max(1, m.NumKVHeads/cfg.TP)
	layers := (m.NumLayers + cfg.PP - 1) / cfg.PP
	p.BlockBytes = int64(blockSize) * int64(layers) * 2 * int64(kvHeads) * int64(m.HeadDim) * int64(dtypeBytes(cfg.KVDtype))
	if p.WeightBytes > p.TotalBytes {
		return p, fmt.Errorf("model weights take %.2f GiB per GPU, more than the %.2f GiB the GPU has (CUDA out of memory while loading weights): raise tensor_parallel_size or pipeline_parallel_size", float64(p.WeightBytes)/gib, float64(p.TotalBytes)/gib)
	}
	if override != nil {
		p.NumBlocks = *override
	} else {
		if p.KVBytes <= 0 {
			return p, fmt.Errorf("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine. (weights %.2f GiB + activation %.2f GiB + non-torch %.2f GiB exceed %.2f GiB = %.2f × %.2f GiB)",
				float64(p.WeightBytes)/gib, float64(p.ActivationBytes)/gib, float64(p.NonTorchBytes)/gib, float64(p.BudgetBytes)/gib, util, float64(p.TotalBytes)/gib)
		}
		p.NumBlocks = int(p.KVBytes / p.BlockBytes)
	}
	if p.NumBlocks < 1 {
		return p, fmt.Errorf("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")
	}
	if maxTok := p.MaxTokens(blockSize); maxModelLen > maxTok {
		return p, fmt.Errorf("The model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV cache (%d). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.", maxModelLen, maxTok)
	}
	return p, nil
}
