package profiles

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadWith writes a Llama-3.1-8B config.json with the keys of over set
// (a nil value deletes the key) and loads it.
func loadWith(t *testing.T, over map[string]any) (ModelSpec, error) {
	t.Helper()
	c := map[string]any{"architectures": []string{"LlamaForCausalLM"}, "model_type": "llama", "hidden_size": 4096,
		"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
		"vocab_size": 128256, "max_position_embeddings": 131072}
	for k, v := range over {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	dir := t.TempDir()
	writeFile(t, dir, "config.json", string(b))
	return LoadModel(dir)
}

// A config value no model has is refused naming its key, before any
// arithmetic on it (attack findings: on main num_key_value_heads -8 ran
// with a KV cache of 3.6 M tokens, exit 0; n_shared_experts -2 and
// first_k_dense_replace -3 ran as if absent; num_experts_per_tok 200 of
// 128 experts ran; intermediate_size 2^62 and vocab_size 2^62 wrapped the
// weight bytes (Model loading took 4.49 GiB) and then priced a 2.28-year
// step; num_hidden_layers 2^31 ran out of time building its layers).
func TestConfigValuesBounded(t *testing.T) {
	moe := map[string]any{"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768}
	with := func(base map[string]any, k string, v any) map[string]any {
		out := map[string]any{k: v}
		for bk, bv := range base {
			if bk != k {
				out[bk] = bv
			}
		}
		return out
	}
	cases := []struct {
		name string
		over map[string]any
		want string
	}{
		{"negative KV heads", map[string]any{"num_key_value_heads": -8}, "config.json num_key_value_heads: must be ≥ 0, got -8"},
		{"negative head_dim", map[string]any{"head_dim": -128}, "config.json head_dim: must be ≥ 0, got -128"},
		{"negative shared experts", with(moe, "n_shared_experts", -2), "config.json n_shared_experts: must be ≥ 0, got -2"},
		{"negative dense layers", with(moe, "first_k_dense_replace", -3), "config.json first_k_dense_replace: must be ≥ 0, got -3"},
		{"negative latent rank", map[string]any{"kv_lora_rank": -512}, "config.json kv_lora_rank: must be ≥ 0, got -512"},
		{"top-k past the experts", with(moe, "num_experts_per_tok", 200), "config.json num_experts_per_tok: 200 experts per token of 128 (num_experts)"},
		{"huge intermediate", map[string]any{"intermediate_size": int64(1) << 62}, "config.json intermediate_size: must be ≤ 16777216, got 4611686018427387904"},
		{"huge vocabulary", map[string]any{"vocab_size": int64(1) << 62}, "config.json vocab_size: must be ≤ 16777216, got 4611686018427387904"},
		{"huge hidden", map[string]any{"hidden_size": int64(1) << 40}, "config.json hidden_size: must be ≤ 16777216, got 1099511627776"},
		{"huge layer count", map[string]any{"num_hidden_layers": int64(1) << 31}, "config.json num_hidden_layers: must be ≤ 16384, got 2147483648"},
		{"huge expert count", with(moe, "num_experts", 1<<20), "config.json num_experts: must be ≤ 65536, got 1048576"},
		// 16,384 layers × (q, k, v, o of 2^13 heads × 128 × 2^20 = 4·2^40,
		// gate, up, down of 2^24 × 2^20 = 3·2^44) = 13·2^56 ≈ 9.37e17.
		{"too many parameters", map[string]any{"hidden_size": 1 << 20, "intermediate_size": 1 << 24, "num_attention_heads": 1 << 13, "num_key_value_heads": 1 << 13, "num_hidden_layers": 16384},
			"config.json describes 9.37e+17 parameters, past what Frontier counts exactly (at most 5.63e+14, 1 PiB in 16 bits)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := loadWith(t, c.over)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Less(t, time.Since(start), 10*time.Second, "refused before building its layers")
		})
	}
	// Zero stays "absent" as before (num_key_value_heads 0: the query
	// heads), and a real MoE loads.
	m, err := loadWith(t, map[string]any{"num_key_value_heads": 0})
	require.NoError(t, err)
	assert.Equal(t, 32, m.NumKVHeads)
	_, err = loadWith(t, moe)
	require.NoError(t, err)
}

// A quantization_config vLLM cannot read is refused naming it, not read
// as a 16-bit model (on main "quantization_config": "fp8" ran as bf16,
// exit 0; vLLM calls .get on it and fails) and a field of the wrong type
// names its value (on main "bits": 4.0 said "awq with 0-bit weights").
func TestQuantConfigShapes(t *testing.T) {
	_, err := quantOf(t, `"fp8"`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config.json quantization_config: want an object with quant_method, got "fp8"`)
	_, err = quantOf(t, `["fp8"]`)
	assert.ErrorContains(t, err, `config.json quantization_config: want an object with quant_method, got [fp8]`)
	q, err := quantOf(t, `null`)
	require.NoError(t, err)
	assert.Nil(t, q, "null is no quantization, as vLLM's getattr(…, None)")
	_, err = quantOf(t, `{"quant_method":"awq","bits":"4","group_size":128}`)
	assert.ErrorContains(t, err, `config.json quantization_config.bits: want an integer, got 4`)
	_, err = quantOf(t, `{"quant_method":"awq","bits":4,"group_size":-5}`)
	assert.ErrorContains(t, err, `config.json quantization_config.group_size: must be -1 (one group per row) or > 0, got -5`)
	_, err = quantOf(t, `{"quant_method":"fp8","weight_block_size":[0,0]}`)
	assert.ErrorContains(t, err, `config.json quantization_config.weight_block_size: must be two positive integers [n, k] (vLLM: 128 × 128 blocks), got [0 0]`)
	q, err = quantOf(t, `{"quant_method":"fp8","weight_block_size":[64,128]}`)
	require.NoError(t, err)
	n, k := q.BlockDims()
	assert.Equal(t, [2]int64{64, 128}, [2]int64{n, k})
	q, err = quantOf(t, `{"quant_method":"gptq","bits":4,"group_size":-1,"sym":true}`)
	require.NoError(t, err)
	assert.Equal(t, -1, q.GroupSize)
}
