package main

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kvBlocks reads the "KV cache per engine: N blocks" line of a summary.
func kvBlocks(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`KV cache per engine:\s+(\d+) blocks`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// A ModelOpt checkpoint that quantized its KV cache gets an fp8 KV cache
// under --kv-cache-dtype auto, as vLLM's resolve_kv_cache_dtype_string
// gives it (vllm/utils/torch_utils.py): half the bytes per token, so
// twice the blocks (one more where the division rounds), said on the
// Deployment line and in a note. On main it stayed bfloat16: half of
// vLLM's KV capacity. An explicit --kv-cache-dtype wins, as in vLLM; an
// nvfp4 KV cache no table prices is refused naming the key (the flag
// was not typed: auto is the default).
func TestModelOptKVCacheDtype(t *testing.T) {
	fp8KV := llamaWith(t, `{"quant_method":"modelopt","quant_algo":"FP8","kv_cache_quant_algo":"FP8","ignore":["lm_head"]}`)
	out, stderr, err := run(t, withTiny("--hardware", "h100-sxm", "--model", fp8KV)...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "weights fp8 per-tensor (modelopt), KV cache fp8\n")
	assert.Contains(t, stderr, "note: kv_cache_dtype auto: fp8, the KV cache the checkpoint's quantization_config asks for (vLLM's resolve_kv_cache_dtype_string); an explicit --kv-cache-dtype overrides it\n")
	fp8Blocks := kvBlocks(t, out)

	out, stderr, err = run(t, withTiny("--hardware", "h100-sxm", "--model", fp8KV, "--kv-cache-dtype", "bfloat16")...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "KV cache bfloat16\n")
	bf16Blocks := kvBlocks(t, out)
	assert.Contains(t, []int{2 * bf16Blocks, 2*bf16Blocks + 1}, fp8Blocks)

	nvfp4KV := llamaWith(t, `{"quant_method":"modelopt","quant_algo":"FP8","kv_cache_scheme":{"num_bits":4,"type":"float"}}`)
	_, _, err = run(t, withTiny("--hardware", "h100-sxm", "--model", nvfp4KV)...)
	require.Error(t, err)
	var ue usageError
	assert.True(t, errors.As(err, &ue), "want exit 2, got %T", err)
	assert.Equal(t, "deployment.kv_cache_dtype: auto resolves to the nvfp4 KV cache the checkpoint's quantization_config asks for (vLLM's resolve_kv_cache_dtype_string), which no attention table prices; pass --kv-cache-dtype fp8 or bfloat16", err.Error())
}

// An fp8-block MoE whose experts' shards cut a 128 × 128 block does not
// start, with vLLM's words (Qwen3-30B-A3B-FP8 at TP8: 768 / 8 = 96); on
// main it ran. Expert parallelism keeps the experts whole and runs.
func TestFP8BlockTPRefused(t *testing.T) {
	cfg := writeQwenMoE(t, `{"quant_method":"fp8","activation_scheme":"dynamic","fmt":"e4m3","weight_block_size":[128,128]}`)
	_, _, err := run(t, withTiny("--hardware", "h100-sxm", "--model", cfg, "-t", "8", "--max-model-len", "4096")...)
	require.Error(t, err)
	var ue usageError
	assert.True(t, errors.As(err, &ue), "want exit 2, got %T", err)
	assert.Equal(t, "deployment does not start: The output_size of gate's and up's weight = 96 is not divisible by weight quantization block_n = 128. (model.layers.0.mlp.experts over a MoE group of 8 GPUs: --enable-expert-parallel keeps experts whole)", err.Error())
	_, stderr, err := run(t, withTiny("--hardware", "h100-sxm", "--model", cfg, "-t", "8", "--max-model-len", "4096", "--enable-expert-parallel")...)
	require.NoError(t, err, stderr)
}

// writeQwenMoE writes the embedded Qwen3-30B-A3B config with quant as its
// quantization_config and returns its path.
func writeQwenMoE(t *testing.T, quant string) string {
	t.Helper()
	return writeModelConfig(t, "qwen3-30b-a3b", func(c map[string]any) { c["quantization_config"] = json.RawMessage(quant) })
}
