package sim

import "fmt"

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
