package profiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func quantOf(t *testing.T, cfg string) (*Quant, error) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "config.json", `{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"num_hidden_layers":2,
		"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000,"quantization_config":`+cfg+`}`)
	m, err := LoadModel(dir)
	return m.Quant, err
}

// Each method's quantization_config reads as the format vLLM stores.
func TestParseQuantMethods(t *testing.T) {
	tests := []struct {
		name, cfg      string
		linear, expert WeightFormat
		group          int
		zeros          bool
	}{
		{"fp8 per-tensor", `{"quant_method":"fp8","activation_scheme":"dynamic"}`, FormatFP8Tensor, FormatFP8Tensor, 0, false},
		{"fp8 blocks (DeepSeek-V3, GLM)", `{"quant_method":"fp8","weight_block_size":[128,128]}`, FormatFP8Block, FormatFP8Block, 0, false},
		{"fbgemm", `{"quant_method":"fbgemm_fp8","modules_to_not_convert":["lm_head"]}`, FormatFP8Channel, FormatFP8Channel, 0, false},
		{"awq", `{"quant_method":"awq","bits":4,"group_size":128,"zero_point":true}`, FormatInt4, FormatInt4, 128, true},
		{"gptq symmetric", `{"quant_method":"gptq","bits":4,"group_size":64,"sym":true}`, FormatInt4, FormatInt4, 64, false},
		{"gptq 8-bit", `{"quant_method":"gptq","bits":8,"group_size":128,"sym":true}`, FormatInt8, FormatInt8, 128, false},
		{"mxfp4 experts only", `{"quant_method":"mxfp4"}`, FormatBF16, FormatMXFP4, 0, false},
		{"modelopt fp8", `{"quant_method":"modelopt","quant_algo":"FP8"}`, FormatFP8Tensor, FormatFP8Tensor, 0, false},
		{"modelopt nvfp4 (hf_quant_config form)", `{"quant_method":"modelopt","quantization":{"quant_algo":"NVFP4","exclude_modules":["lm_head"]}}`, FormatNVFP4, FormatNVFP4, 0, false},
		{"compressed-tensors fp8 channel", `{"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
			"weights":{"num_bits":8,"type":"float","strategy":"channel"}}},"ignore":["lm_head"]}`, FormatFP8Channel, FormatFP8Channel, 0, false},
		{"compressed-tensors w4a16", `{"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
			"weights":{"num_bits":4,"type":"int","strategy":"group","group_size":128,"symmetric":false}}}}`, FormatInt4, FormatInt4, 128, true},
		{"compressed-tensors nvfp4", `{"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
			"weights":{"num_bits":4,"type":"float","strategy":"tensor_group","group_size":16}}}}`, FormatNVFP4, FormatNVFP4, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := quantOf(t, tc.cfg)
			require.NoError(t, err)
			require.NotNil(t, q)
			assert.Equal(t, tc.linear, q.Linear)
			assert.Equal(t, tc.expert, q.Experts)
			assert.Equal(t, tc.group, q.GroupSize)
			assert.Equal(t, tc.zeros, q.ZeroPoints)
		})
	}
	_, err := quantOf(t, `{"quant_method":"compressed-tensors","config_groups":{"g":{"targets":["Linear"],"weights":{"num_bits":2,"type":"int"}}}}`)
	assert.ErrorContains(t, err, `: config.json quantization_config.config_groups.g.weights: int 2-bit weights (strategy "") are not priced (fp8 tensor/channel/block, int4 group, int8, nvfp4)`)
}

// Ignore lists keep modules 16-bit: full names (with or without the
// wrapper prefixes), parent modules, and compressed-tensors "re:" patterns.
func TestQuantIgnore(t *testing.T) {
	q := &Quant{Method: "compressed-tensors", Linear: FormatFP8Channel, Experts: FormatFP8Channel,
		Ignore: []string{"language_model.model.layers.3.self_attn.q_proj", "model.layers.0.mlp", "re:.*down_proj$", "lm_head"}}
	require.NoError(t, q.compileIgnore())
	assert.Equal(t, FormatBF16, q.FormatOf("model.layers.3.self_attn.q_proj"))
	assert.Equal(t, FormatFP8Channel, q.FormatOf("model.layers.4.self_attn.q_proj"))
	assert.Equal(t, FormatBF16, q.FormatOf("model.layers.0.mlp.gate_proj"), "parent module")
	assert.Equal(t, FormatFP8Channel, q.FormatOf("model.layers.10.mlp.gate_proj"), "layers.1 is not a prefix of layers.10")
	assert.Equal(t, FormatBF16, q.FormatOf("model.layers.9.mlp.down_proj"), "regex")
	var none *Quant
	assert.Equal(t, FormatBF16, none.FormatOf("model.layers.0.mlp.gate_proj"))

	// Scout's checkpoint keeps attention and routers bf16, not the experts
	// or the shared expert.
	m, err := LoadModel("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic")
	require.NoError(t, err)
	for i := 0; i < m.NumLayers; i++ {
		attn, mlp, experts := m.LayerFormats(i)
		assert.Equal(t, FormatBF16, attn, "layer %d attention", i)
		assert.Equal(t, FormatFP8Channel, mlp, "layer %d shared expert", i)
		assert.Equal(t, FormatFP8Channel, experts, "layer %d experts", i)
	}
	assert.Equal(t, "fp8 per-channel (compressed-tensors) with attention bfloat16", m.DescribeWeights("bfloat16"))
	assert.Equal(t, 8192, m.AttentionChunkSize)
	assert.Equal(t, 4, m.NoPELayerInterval, "empty no_rope_layers: transformers' default, every 4th layer NoPE")
	assert.True(t, m.IsChunkedLayer(0))
	assert.False(t, m.IsChunkedLayer(3))
}

// --quantization follows vLLM: fp8 online on a 16-bit checkpoint; on a
// quantized one the same method or its Marlin variant only.
func TestQuantFlag(t *testing.T) {
	q, err := QuantFromFlag("--quantization", "fp8")
	require.NoError(t, err)
	assert.Equal(t, FormatFP8Tensor, q.Linear)
	assert.Equal(t, "fp8 per-tensor (fp8, online)", q.Describe())
	awq := &Quant{Method: "awq"}
	assert.NoError(t, CheckQuantFlag("k", "awq_marlin", awq))
	assert.NoError(t, CheckQuantFlag("k", "awq", awq))
	assert.EqualError(t, CheckQuantFlag("k", "gptq", awq),
		"k: Quantization method specified in the model config (awq) does not match the quantization method specified in the `quantization` argument (gptq).")
}
