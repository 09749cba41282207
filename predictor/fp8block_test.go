package predictor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// blockFP8 is model with its linear layers and experts in fp8 128×128
// blocks (DeepSeek-V3 / Qwen3-FP8 style weight_block_size [128, 128]).
func blockFP8(t *testing.T, model string) profiles.ModelSpec {
	t.Helper()
	m, err := profiles.LoadModel(model)
	require.NoError(t, err)
	m.Quant = &profiles.Quant{Method: "fp8", Linear: profiles.FormatFP8Block, Experts: profiles.FormatFP8Block, Source: "quantization_config"}
	return m
}

// vLLM refuses fp8-block weights whose tensor-parallel shards cut a
// 128 × 128 block (Fp8MoEMethod.create_weights, validate_fp8_block_shape
// in vllm/model_executor/layers/quantization/): Qwen3-30B-A3B's experts
// of 768 split 8 ways are 96 wide, 4 ways 192 ("The output_size of
// gate's and up's weight = 192 is not divisible by weight quantization
// block_n = 128.", the error users report for Qwen3-FP8 at TP4/TP8);
// expert parallelism keeps them whole. DeepSeek-V2-Lite's dense layer
// (intermediate 10,944 = 85.5 blocks) fails even at TP1, its fused
// gate_up's first shard being checked. On main all of these ran.
func TestFP8BlockShardsRefused(t *testing.T) {
	qwen := blockFP8(t, "Qwen/Qwen3-30B-A3B")
	lite := blockFP8(t, "deepseek-ai/DeepSeek-V2-Lite")
	llama := blockFP8(t, "meta-llama/Llama-3.1-8B-Instruct")
	cases := []struct {
		name   string
		cfg    Config
		refuse string
	}{
		{"Qwen3 TP2: 384 = 3 blocks", Config{Model: qwen, TP: 2, DP: 1}, ""},
		{"Qwen3 TP4", Config{Model: qwen, TP: 4, DP: 1}, "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128. (model.layers.0.mlp.experts over a MoE group of 4 GPUs: --enable-expert-parallel keeps experts whole)"},
		{"Qwen3 TP8", Config{Model: qwen, TP: 8, DP: 1}, "The output_size of gate's and up's weight = 96 is not divisible by weight quantization block_n = 128. (model.layers.0.mlp.experts over a MoE group of 8 GPUs: --enable-expert-parallel keeps experts whole)"},
		{"Qwen3 TP2 DP2: experts over 4 ranks", Config{Model: qwen, TP: 2, DP: 2}, "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128. (model.layers.0.mlp.experts over a MoE group of 4 GPUs: --enable-expert-parallel keeps experts whole)"},
		{"Qwen3 TP8 EP", Config{Model: qwen, TP: 8, DP: 1, ExpertParallel: true}, ""},
		{"V2-Lite TP1: gate of the fused gate_up", Config{Model: lite, TP: 1, DP: 1}, "Weight output_partition_size = 10944 is not divisible by weight quantization block_n = 128. (model.layers.0.mlp.gate_proj at tensor_parallel_size 1)"},
		{"Llama-3.1-8B TP8: 1792 = 14 blocks", Config{Model: llama, TP: 8, DP: 1}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckBlockShards(c.cfg)
			if c.refuse == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, c.refuse, err.Error())
		})
	}
	// The checkpoint's ignore list exempts what stays 16-bit, and other
	// formats are never checked.
	lite.Quant.Ignore = []string{"model.layers.0.mlp"}
	assert.NoError(t, CheckBlockShards(Config{Model: lite, TP: 1, DP: 1}))
	assert.NoError(t, CheckBlockShards(quantConfig(t, "Qwen/Qwen3-30B-A3B", "h100-sxm", 8)))
}

// A config's rotary cache past int64 (max_position_embeddings 2^55 × 128
// × 2 B = 2^64 B) no longer wraps the weight bytes: on main it wrapped to
// a negative count and the refusal blamed the KV cache ("No available
// memory for the cache blocks"); vLLM fails loading the model. The count
// saturates and the refusal is the weights'.
func TestWeightBytesSaturate(t *testing.T) {
	c := quantConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h100-sxm", 1)
	c.Model.MaxPositionEmbeddings = 1 << 55
	assert.Equal(t, MaxWeightBytes, WeightBytesPerRank(c))
	_, err := PlanMemory(c, 0.9, 8192, 16, 4096, nil)
	require.Error(t, err)
	assert.Equal(t, "model weights take more than 4294967296 GiB per GPU, more than the 79.19 GiB the GPU has (CUDA out of memory while loading weights): raise tensor_parallel_size or pipeline_parallel_size", err.Error())
	// An int4 group past the row keeps one group per row (on main
	// ceilDiv(in, 2^62) wrapped negative).
	assert.Equal(t, formatBytes(profiles.FormatInt4, 8, 4096, -1, false), formatBytes(profiles.FormatInt4, 8, 4096, 1<<62, false))
	assert.Equal(t, int64(8*4096/2+2*8), formatBytes(profiles.FormatInt4, 8, 4096, 1<<62, false))
}
