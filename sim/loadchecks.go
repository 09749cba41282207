package sim

import (
	"fmt"

	"frontier/profiles"
)

// checkpointKVCache resolves --kv-cache-dtype auto for a checkpoint whose
// quantization_config asks for a quantized KV cache (ModelOpt's
// kv_cache_quant_algo or kv_cache_scheme), as vLLM's
// resolve_kv_cache_dtype_string does (vllm/utils/torch_utils.py): the
// table dtype, the summary's name and a note. An nvfp4 KV cache no
// attention table prices is refused naming kv_cache_dtype under path.
func checkpointKVCache(ckpt, path string) (kv, shown, note string, err error) {
	if ckpt != "fp8" {
		return "", "", "", fmt.Errorf("%s.kv_cache_dtype: auto resolves to the %s KV cache the checkpoint's quantization_config asks for (vLLM's resolve_kv_cache_dtype_string), which no attention table prices; pass --kv-cache-dtype fp8 or bfloat16", path, ckpt)
	}
	return "fp8", "fp8", "kv_cache_dtype auto: fp8, the KV cache the checkpoint's quantization_config asks for (vLLM's resolve_kv_cache_dtype_string); an explicit --kv-cache-dtype overrides it", nil
}

// checkKVHeadSplit applies vLLM's QKVParallelLinear division of the KV
// heads (vllm/model_executor/layers/linear.py): tp ranks split them
// evenly, or, with fewer heads than ranks, replicate each on an even
// share; divide() otherwise fails loading the model with "{n} is not
// divisible by {d}". MLA keeps one latent per rank and is exempt.
func checkKVHeadSplit(m profiles.ModelSpec, tp int, path string) error {
	kv := m.NumKVHeads
	if m.IsMLA() || kv <= 0 || tp <= 1 {
		return nil
	}
	switch {
	case kv >= tp && kv%tp != 0:
		return fmt.Errorf("%s.tensor_parallel_size: %d is not divisible by %d (vLLM's QKVParallelLinear splits the %d KV heads (num_key_value_heads) over tensor_parallel_size %d GPUs)", path, kv, tp, kv, tp)
	case kv < tp && tp%kv != 0:
		return fmt.Errorf("%s.tensor_parallel_size: %d is not divisible by %d (vLLM's QKVParallelLinear replicates the %d KV heads (num_key_value_heads) over tensor_parallel_size %d GPUs)", path, tp, kv, kv, tp)
	}
	return nil
}
