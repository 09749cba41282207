package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// llamaWith writes a Llama-3.1-8B-shaped config.json carrying quant as
// its quantization_config and returns its folder.
func llamaWith(t *testing.T, quant string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := `{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,
		"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,
		"max_position_embeddings":131072,"torch_dtype":"float16","quantization_config":` + quant + `}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644))
	return dir
}

// Each refusal kind of issue 15, with its exact text, exits 2.
func TestQuantizationAndHardwareRefusals(t *testing.T) {
	awq := llamaWith(t, `{"quant_method":"awq","bits":4,"group_size":128,"zero_point":true,"version":"gemm"}`)
	foo := llamaWith(t, `{"quant_method":"foo"}`)
	nvfp4 := llamaWith(t, `{"quant_method":"modelopt","quant_algo":"NVFP4"}`)
	allowed := "(allowed: awq, awq_marlin, compressed-tensors, fbgemm_fp8, fp8, gptq, gptq_marlin, modelopt, modelopt_fp4, mxfp4)"
	priced := "priced there: GEMM bfloat16 fp8 fp8_block, MoE bfloat16 fp8 fp8_block int4_wo"
	scout := "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"
	cases := []struct {
		name, hw string
		args     []string
		want     string
	}{
		{"FP8 on A100 (Marlin W8A16, unpriced)", "a100-sxm", []string{"-q", "fp8"},
			"deployment: quantization fp8: fp8 weights of the attention projections are not priced on a100-sxm: its tables have no such rows (no fp8 tensor cores before Ada: vLLM runs FP8 weights there as Marlin W8A16 weight-only kernels, which no table measures); priced there: GEMM bfloat16, MoE bfloat16"},
		{"MLA model on a GPU without MLA tables", "b200-sxm", []string{"--model", "deepseek-ai/DeepSeek-V2-Lite"},
			"deployment: multi-head latent attention (deepseek-ai/DeepSeek-V2-Lite) is not priced on b200-sxm: its tables have no MLA attention rows (aiconfigurator context_mla_perf, generation_mla_perf) for kv_cache_dtype bfloat16"},
		{"TP beyond the NVLink domain", "gb200", []string{"-t", "16", "--pipeline-parallel-size", "8"},
			"deployment: tensor_parallel_size × pipeline_parallel_size = 128 GPUs, but one gb200 NVLink domain has 72 (4 per node): vLLM would need a multi-node launch (--nnodes) with its collectives over the inter-node network, which Frontier does not price; use at most 72 GPUs per engine and data_parallel_size for more"},
		{"TP beyond a PCIe node", "l40s", []string{"-t", "16"},
			"deployment: tensor_parallel_size × pipeline_parallel_size = 16 GPUs, but one l40s node has 8 (PCIe, no NVLink): vLLM would need a multi-node launch (--nnodes) with its collectives over the inter-node network, which Frontier does not price; use at most 8 GPUs per engine and data_parallel_size for more"},
		{"table version not embedded", "b200-sxm", []string{"--vllm-version", "0.19.0"},
			"--vllm-version: no b200-sxm tables embedded for vLLM 0.19.0 (embedded: 0.24.0; other versions: --profile-dir with aiconfigurator's b200_sxm folder)"},
		{"table version malformed", "", []string{"--vllm-version", "latest"},
			`--vllm-version: must be a vLLM version such as 0.24.0, got "latest"`},
		{"unknown method flag", "", []string{"-q", "foo"},
			`--quantization: unknown quantization method "foo" ` + strings.TrimSuffix(allowed, ")") + `; or unset, --quantization None: the checkpoint's own, as vLLM reads an unset optional argument)`},
		{"unknown method in config", "", []string{"--model", foo},
			`--model: model ` + foo + `: config.json quantization_config.quant_method: unknown quantization method "foo" ` + allowed},
		{"vLLM method no table prices", "", []string{"-q", "bitsandbytes"},
			`--quantization: quantization method "bitsandbytes" is not priced: no operator table measures vLLM's bitsandbytes NF4/int8 kernels (priced: awq, awq_marlin, compressed-tensors, fbgemm_fp8, fp8, gptq, gptq_marlin, modelopt, modelopt_fp4, mxfp4)`},
		{"method the checkpoint does not have", "", []string{"--model", scout, "-t", "2", "--max-model-len", "4096", "-q", "awq"},
			"--quantization: Quantization method specified in the model config (compressed-tensors) does not match the quantization method specified in the `quantization` argument (awq)."},
		{"online quantization other than fp8", "", []string{"-q", "awq"},
			"--quantization awq: the model's config.json has no quantization_config; vLLM quantizes a 16-bit checkpoint online only with fp8 (a checkpoint quantized with awq carries its own quantization_config)"},
		{"dtype fp8", "", []string{"--dtype", "fp8"},
			`--dtype: must be one of auto, bfloat16, float16, half, got "fp8": fp8 weights are a quantization, not a dtype; use --quantization fp8 (scenario key deployment.quantization)`},
		{"int4 dense GEMMs have no table", "", []string{"--model", awq},
			"deployment: quantization awq: int4 weights of the attention projections are not priced on h100-sxm: its tables have no such rows (vLLM runs them with Marlin weight-only kernels, which aiconfigurator does not measure for dense layers); " + priced},
		{"nvfp4 on Hopper", "", []string{"--model", nvfp4},
			"deployment: quantization modelopt_fp4: nvfp4 weights of the attention projections are not priced on h100-sxm: its tables have no such rows (NVFP4 kernels need Blackwell); " + priced},
		{"TP beyond one node", "", []string{"-t", "16"},
			"deployment: tensor_parallel_size × pipeline_parallel_size = 16 GPUs, but one h100-sxm node has 8 (one NVLink domain): vLLM would need a multi-node launch (--nnodes) with its collectives over the inter-node network, which Frontier does not price; use at most 8 GPUs per engine and data_parallel_size for more"},
		{"Scout's default max_model_len", "", []string{"--model", scout, "-t", "2"},
			"deployment does not start: To serve at least one request with the models's max seq len (10485760), (960.00 GiB KV cache is needed, which is larger than the available KV cache memory (13.84 GiB). Based on the available memory, the estimated maximum model length is 151120. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"simulate", "--quiet", "--hardware", "h100-sxm", "--num-prompts", "2"}, c.args...)
			if c.hw != "" {
				args[3] = c.hw
			}
			_, _, err := run(t, args...)
			require.Error(t, err)
			var ue usageError
			assert.True(t, errors.As(err, &ue), "want exit 2, got %T", err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

// gemmRuleText is predictor's GEMM extrapolation rule as a note states it.
const gemmRuleText = "each (n, k) column's points the table lacks are first filled from the nearest measured (n, k) at the same m, " +
	"scaled by FLOPs, and the column made monotone in m (cost per unit of work never rising with size: a run of points breaking " +
	"that order takes its geometric mean); then a coordinate above the grid scales the edge latency linearly (FLOPs, m·n·k), " +
	"and one below keeps the edge latency"

// vLLM's start-up lines, with its formatting, on stderr: Mixtral-8x7B TP2
// on H100 as the gate's runs launched it (vLLM logged 440,176 tokens and
// 107.46x there; the plan gives 27,526 blocks, 0.05 % more). --quiet
// silences them (the summary's KV cache line says the same), not the notes.
func TestStartupLogLines(t *testing.T) {
	args := []string{"simulate", "--hardware", "h100-sxm", "--model", "mistralai/Mixtral-8x7B-v0.1", "-t", "2",
		"--max-num-seqs", "128", "--max-num-batched-tokens", "2048", "--max-model-len", "4096", "--num-prompts", "2"}
	_, quiet, err := run(t, append(args, "--quiet")...)
	require.NoError(t, err)
	// Its notes: H100's small ops priced by bytes, and the GEMM rule that
	// priced the router's n = 8 (under the table's 32).
	assert.Equal(t, "note: h100-sxm: rmsnorm, rotary, silu_and_mul, embedding, sampler priced by the bytes they move at 80 % of HBM bandwidth plus 3 µs a kernel (no measured rows)\n"+
		"note: gemm bfloat16: an extrapolated shape is priced so: "+gemmRuleText+"\n", quiet)
	_, quiet, err = run(t, withTiny()...) // H200: priced with the H100 host fit, a note
	require.NoError(t, err)
	assert.NotContains(t, quiet, "info:")
	assert.Contains(t, quiet, "note: host model: the h100-sxm calibration")
	_, stderr, err := run(t, args...)
	require.NoError(t, err)
	lines := strings.Split(stderr, "\n")
	assert.Equal(t, []string{
		"info: Model loading took 43.50 GiB",
		"info: Available KV cache memory: 26.88 GiB",
		"info: GPU KV cache size: 440,416 tokens",
		"info: Maximum concurrency for 4,096 tokens per request: 107.52x",
	}, lines[:4])
}
