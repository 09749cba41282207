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

// A compressed-tensors W8A8 int8 checkpoint is refused for what vLLM
// runs it with, CUTLASS int8 GEMMs (CompressedTensorsW8A8Int8), not
// Marlin weight-only kernels as main said; GPTQ 8-bit keeps the Marlin
// reason.
func TestInt8RefusalReasons(t *testing.T) {
	w8a8 := llamaWith(t, `{"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
		"weights":{"num_bits":8,"type":"int","strategy":"channel","symmetric":true},
		"input_activations":{"num_bits":8,"type":"int","strategy":"token","dynamic":true}}},"ignore":["lm_head"]}`)
	gptq8 := llamaWith(t, `{"quant_method":"gptq","bits":8,"group_size":128,"sym":true}`)
	priced := "priced there: GEMM bfloat16 fp8 fp8_block, MoE bfloat16 fp8 fp8_block int4_wo"
	for _, c := range []struct{ model, want string }{
		{w8a8, "deployment: quantization compressed-tensors: int8 weights of the attention projections are not priced on h100-sxm: its tables have no such rows (vLLM runs W8A8 int8 with CUTLASS int8 GEMMs, which aiconfigurator does not measure); " + priced},
		{gptq8, "deployment: quantization gptq: int8 weights of the attention projections are not priced on h100-sxm: its tables have no such rows (vLLM runs them with Marlin weight-only kernels, which aiconfigurator does not measure for dense layers); " + priced},
	} {
		_, _, err := run(t, withTiny("--hardware", "h100-sxm", "--model", c.model)...)
		require.Error(t, err)
		assert.Equal(t, c.want, err.Error())
	}
}

// TP must split the KV heads evenly or replicate them evenly, as vLLM's
// QKVParallelLinear divides them (vllm/model_executor/layers/linear.py,
// divide() asserts "{} is not divisible by {}"): Qwen2.5-7B's 4 KV heads
// at TP7 and Yi-34B's 8 at TP7 fail loading the model. On main both ran
// (each rank priced and sized with one whole KV head).
func TestKVHeadsSplitRefused(t *testing.T) {
	for _, c := range []struct{ model, want string }{
		{"Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size: 7 is not divisible by 4 (vLLM's QKVParallelLinear replicates the 4 KV heads (num_key_value_heads) over tensor_parallel_size 7 GPUs)"},
		{"01-ai/Yi-34B", "--tensor-parallel-size: 8 is not divisible by 7 (vLLM's QKVParallelLinear splits the 8 KV heads (num_key_value_heads) over tensor_parallel_size 7 GPUs)"},
	} {
		_, _, err := run(t, withTiny("--hardware", "h100-sxm", "--model", c.model, "-t", "7", "--max-model-len", "4096")...)
		require.Error(t, err, c.model)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, 2, exitCode(err))
	}
	_, stderr, err := run(t, withTiny("--hardware", "h100-sxm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "-t", "8", "--max-model-len", "4096")...)
	require.NoError(t, err, stderr)
}

// The fp16 note holds on every preset, not only the two it named: on
// main an L40S run said "(same tensor-core rate and bytes on H100/H200)".
func TestFloat16NoteNamesEveryPreset(t *testing.T) {
	_, stderr, err := run(t, withTiny("--hardware", "l40s", "--dtype", "float16")...)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "note: dtype float16: priced from bfloat16 tables (same tensor-core rate and bytes on every preset GPU: A100, L40S, H100/H200, B200/GB200, RTX PRO 6000)\n")
}

// mxfp4 refusals give a reason that fits: on main mxfp4 experts on a
// table set without mxfp4 MoE rows were refused "(vLLM quantizes only MoE
// experts with mxfp4)", a non sequitur; a compressed-tensors mxfp4
// linear layer (group 32 floats) names what the tables lack.
func TestMXFP4RefusalReasons(t *testing.T) {
	experts := writeQwenMoE(t, `{"quant_method":"mxfp4"}`)
	linear := llamaWith(t, `{"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
		"weights":{"num_bits":4,"type":"float","strategy":"group","group_size":32}}}}`)
	priced := "priced there: GEMM bfloat16 fp8 fp8_block, MoE bfloat16 fp8 fp8_block int4_wo"
	for _, c := range []struct{ model, want string }{
		{experts, "deployment: quantization mxfp4: mxfp4 weights of the MoE experts are not priced on h100-sxm: its tables have no such rows; " + priced},
		{linear, "deployment: quantization compressed-tensors: mxfp4 weights of the attention projections are not priced on h100-sxm: its tables have no such rows (aiconfigurator measures mxfp4 experts only, not mxfp4 linear layers); " + priced},
	} {
		_, _, err := run(t, withTiny("--hardware", "h100-sxm", "--model", c.model, "--max-model-len", "4096")...)
		require.Error(t, err)
		assert.Equal(t, c.want, err.Error())
	}
	// The 0.24.0 set of the same GPU measured w4a16_mxfp4 experts.
	_, stderr, err := run(t, withTiny("--hardware", "h100-sxm", "--vllm-version", "0.24.0", "--model", experts, "--max-model-len", "4096")...)
	require.NoError(t, err, stderr)
}

// An fp8 KV cache on a GPU whose attention tables hold bf16 KV rows only
// (A100) names the GPU and what it prices.
func TestKVCacheDtypeRefusalNamesTheGPU(t *testing.T) {
	_, _, err := run(t, withTiny("--hardware", "a100-sxm", "--kv-cache-dtype", "fp8")...)
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Equal(t, "deployment: attention tables have no rows for head_dim 128 with kv_cache_dtype fp8 on a100-sxm (kv_cache_dtype priced there at head_dim 128: bfloat16)", err.Error())
}
