package profiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ModelOpt checkpoints name the modules they keep 16-bit as vLLM's
// ModelOptQuantConfigBase reads them (vllm/model_executor/layers/
// quantization/modelopt.py from_config, is_layer_excluded): config.json's
// compressed-tensors-style form lists them under "ignore", the
// hf_quant_config form under quantization.exclude_modules, and entries
// match exactly, as substrings or as fnmatch wildcards. On main the
// "ignore" list and every wildcard were dropped: the excluded attention
// was priced and counted as fp8.
func TestModelOptExcludes(t *testing.T) {
	cases := []struct {
		name, cfg string
	}{
		{"config.json ignore, wildcard", `{"quant_method":"modelopt","quant_algo":"FP8","ignore":["lm_head","model.layers.*.self_attn*"]}`},
		{"hf_quant_config exclude_modules, wildcard", `{"quant_method":"modelopt","quantization":{"quant_algo":"FP8","exclude_modules":["lm_head","*self_attn*"]}}`},
		{"substring", `{"quant_method":"modelopt","quant_algo":"FP8","ignore":["self_attn"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := quantOf(t, c.cfg)
			require.NoError(t, err)
			assert.Equal(t, FormatBF16, q.FormatOf("model.layers.1.self_attn.q_proj"))
			assert.Equal(t, FormatFP8Tensor, q.FormatOf("model.layers.1.mlp.gate_proj"))
		})
	}
	// fp8's ignored_layers stay exact names, as vLLM's is_layer_skipped
	// without skip_with_substr: "self_attn" names no layer there.
	q, err := quantOf(t, `{"quant_method":"fp8","ignored_layers":["self_attn"]}`)
	require.NoError(t, err)
	assert.Equal(t, FormatFP8Tensor, q.FormatOf("model.layers.1.self_attn.q_proj"))
}

// AWQ's modules_to_not_convert match as substrings of the module's name
// (vLLM's is_layer_skipped_awq and AWQ-Marlin's skip_with_substr=True):
// ["self_attn"] keeps every attention projection 16-bit. On main it kept
// none, and the int4 attention was refused as unpriced.
func TestAWQSkipsBySubstring(t *testing.T) {
	q, err := quantOf(t, `{"quant_method":"awq","bits":4,"group_size":128,"zero_point":true,"modules_to_not_convert":["self_attn"]}`)
	require.NoError(t, err)
	assert.Equal(t, FormatBF16, q.FormatOf("model.layers.7.self_attn.k_proj"))
	assert.Equal(t, FormatInt4, q.FormatOf("model.layers.7.mlp.down_proj"))
}

// ModelOpt's FP8_PER_CHANNEL_PER_TOKEN is an fp8 per-channel format
// vLLM loads (ModelOptFp8PcPtLinearMethod); on main it was refused as
// "not priced (FP8, NVFP4)".
func TestModelOptFP8PerChannel(t *testing.T) {
	q, err := quantOf(t, `{"quant_method":"modelopt","quant_algo":"FP8_PER_CHANNEL_PER_TOKEN"}`)
	require.NoError(t, err)
	assert.Equal(t, FormatFP8Channel, q.Linear)
	_, err = quantOf(t, `{"quant_method":"modelopt","quant_algo":"W4A8_AWQ"}`)
	assert.ErrorContains(t, err, `config.json quantization_config.quant_algo: modelopt "W4A8_AWQ" is not priced (FP8, FP8_PER_CHANNEL_PER_TOKEN, NVFP4)`)
}

// vLLM resolves --kv-cache-dtype auto to fp8 when a ModelOpt checkpoint
// quantized its KV cache (vllm/utils/torch_utils.py
// get_kv_cache_quant_algo_string: kv_cache_scheme or kv_cache_quant_algo,
// in "quantization" or at the top): Quant.KVCache says so. Other
// methods never set it.
func TestModelOptKVCache(t *testing.T) {
	cases := []struct{ cfg, want string }{
		{`{"quant_method":"modelopt","quant_algo":"FP8","kv_cache_quant_algo":"FP8"}`, "fp8"},
		{`{"quant_method":"modelopt","quantization":{"quant_algo":"NVFP4","kv_cache_quant_algo":"fp8"}}`, "fp8"},
		{`{"quant_method":"modelopt","quant_algo":"FP8","kv_cache_scheme":{"dynamic":false,"num_bits":8,"type":"float"}}`, "fp8"},
		{`{"quant_method":"modelopt","quant_algo":"NVFP4","kv_cache_scheme":{"num_bits":4,"type":"float"}}`, "nvfp4"},
		{`{"quant_method":"modelopt","quant_algo":"FP8","kv_cache_quant_algo":"INT8"}`, ""}, // vLLM: unknown, falls back to auto
		{`{"quant_method":"modelopt","quant_algo":"FP8"}`, ""},
		{`{"quant_method":"fp8","kv_cache_quant_algo":"FP8"}`, ""},
	}
	for _, c := range cases {
		q, err := quantOf(t, c.cfg)
		require.NoError(t, err, c.cfg)
		assert.Equal(t, c.want, q.KVCache, c.cfg)
	}
}

// compressed-tensors "re:" patterns match as Python's re.match does
// (anchored at the start of the module name): "re:.*mlp.*" keeps every
// MLP 16-bit, "re:mlp.*" names none. On main the pattern was searched
// anywhere in the name and "re:mlp.*" kept them all.
func TestIgnoreRegexAnchored(t *testing.T) {
	q := &Quant{Method: "compressed-tensors", Linear: FormatFP8Channel, Ignore: []string{"re:mlp.*"}}
	require.NoError(t, q.compileIgnore())
	assert.Equal(t, FormatFP8Channel, q.FormatOf("model.layers.2.mlp.gate_proj"))
	q.Ignore = []string{"re:.*mlp.*"}
	require.NoError(t, q.compileIgnore())
	assert.Equal(t, FormatBF16, q.FormatOf("model.layers.2.mlp.gate_proj"))
}

// Where vLLM finds a checkpoint's quantization besides config.json's
// quantization_config (vllm/transformers_utils/config.py get_config,
// vllm/config/model.py _parse_quant_hf_config): ModelOpt ≤ 0.29's
// hf_quant_config.json beside config.json (method from its producer and
// quant_algo), older compressed-tensors checkpoints' compression_config,
// and a multimodal config's text_config. On main all three loaded as
// 16-bit models, priced and sized as bf16 without a word.
func TestQuantConfigElsewhere(t *testing.T) {
	llama := `{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"num_hidden_layers":2,
		"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000`
	dir := t.TempDir()
	writeFile(t, dir, "config.json", llama+`}`)
	writeFile(t, dir, "hf_quant_config.json", `{"producer":{"name":"modelopt","version":"0.23.0"},
		"quantization":{"quant_algo":"FP8","kv_cache_quant_algo":"FP8","exclude_modules":["lm_head"]}}`)
	m, err := LoadModel(dir)
	require.NoError(t, err)
	require.NotNil(t, m.Quant)
	assert.Equal(t, "modelopt", m.Quant.Method)
	assert.Equal(t, FormatFP8Tensor, m.Quant.Linear)
	assert.Equal(t, "fp8", m.Quant.KVCache)

	dir = t.TempDir()
	writeFile(t, dir, "config.json", llama+`}`)
	writeFile(t, dir, "hf_quant_config.json", `{"producer":{"name":"modelopt"},"quantization":{"quant_algo":"NVFP4"}}`)
	m, err = LoadModel(dir)
	require.NoError(t, err)
	assert.Equal(t, "modelopt_fp4", m.Quant.Method)

	writeFile(t, dir, "hf_quant_config.json", `{"producer":{"name":"modelopt"},"quantization":{"quant_algo":"INT4_AWQ"}}`)
	_, err = LoadModel(dir)
	assert.ErrorContains(t, err, `hf_quant_config.json quantization_config.quant_algo: modelopt "INT4_AWQ" is not priced`)
	writeFile(t, dir, "hf_quant_config.json", `{"producer":`)
	_, err = LoadModel(dir)
	assert.ErrorContains(t, err, "hf_quant_config.json: unexpected EOF")

	dir = t.TempDir()
	writeFile(t, dir, "config.json", llama+`,"compression_config":{"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
		"weights":{"num_bits":8,"type":"float","strategy":"channel"}}},"ignore":["lm_head"]}}`)
	m, err = LoadModel(dir)
	require.NoError(t, err)
	assert.Equal(t, FormatFP8Channel, m.Quant.FormatOf("model.layers.0.mlp.up_proj"))

	dir = t.TempDir()
	writeFile(t, dir, "config.json", `{"architectures":["Foo"],"text_config":`+llama+`,"quantization_config":{"quant_method":"fp8"}}}`)
	m, err = LoadModel(dir)
	require.NoError(t, err)
	assert.Equal(t, "fp8", m.Quant.Method)
}

// A quantization that leaves every weight 16-bit says so on the summary
// (on main an mxfp4 config on a dense model read "weights mxfp4 (mxfp4)"
// and an ignore-everything compressed-tensors one "fp8 per-tensor
// (compressed-tensors) with attention and MLP bfloat16", both loading
// 16-bit weights only).
func TestDescribeWeightsAllSixteenBit(t *testing.T) {
	m, err := LoadModel("meta-llama/Llama-3.1-8B-Instruct")
	require.NoError(t, err)
	m.Quant = &Quant{Method: "mxfp4", Linear: FormatBF16, Experts: FormatMXFP4}
	assert.Equal(t, "bfloat16 (mxfp4 quantizes none of this model's weights)", m.DescribeWeights("bfloat16"))
	m.Quant = &Quant{Method: "compressed-tensors", Linear: FormatFP8Tensor, Experts: FormatFP8Tensor, Ignore: []string{"re:.*"}}
	require.NoError(t, m.Quant.compileIgnore())
	assert.Equal(t, "bfloat16 (compressed-tensors quantizes none of this model's weights)", m.DescribeWeights("bfloat16"))
	mix, err := LoadModel("mistralai/Mixtral-8x7B-v0.1")
	require.NoError(t, err)
	mix.Quant = &Quant{Method: "mxfp4", Linear: FormatBF16, Experts: FormatMXFP4}
	assert.Equal(t, "mxfp4 (mxfp4)", mix.DescribeWeights("bfloat16"))
}
