package predictor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// MLA's KV cache is the latent, kv_lora_rank 512 + qk_rope_head_dim 64
// values per token per layer, whole on every TP rank: DeepSeek-V2-Lite
// bf16, 27 layers, block 16 → 16 × 27 × 576 × 2 = 497,664 B per block at
// TP1 and TP2 alike (a GQA model's would halve).
func TestMLAKVCache(t *testing.T) {
	for _, tp := range []int{1, 2} {
		c := quantConfig(t, "deepseek-ai/DeepSeek-V2-Lite", "h100-sxm", tp)
		assert.Equal(t, int64(576*2), KVBytesPerTokenPerLayer(c))
		p, err := PlanMemory(c, 0.9, 8192, 16, 4096, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(497_664), p.BlockBytes)
	}
	c := quantConfig(t, "deepseek-ai/DeepSeek-V2-Lite", "h100-sxm", 1)
	c.KVDtype = "fp8"
	assert.Equal(t, int64(576), KVBytesPerTokenPerLayer(c))
}

// Decode and prefill attention of an MLA model come from the MLA core
// tables at the rank's heads over one latent head: DeepSeek-V2-Lite TP1
// (16 heads) at batch 64 and context 1,024 is the table's
// num_heads 16, batch 64, step 1,023 point (mean of its two repeats).
func TestMLAPricedFromMLATables(t *testing.T) {
	c := quantConfig(t, "deepseek-ai/DeepSeek-V2-Lite", "h100-sxm", 1)
	tb, err := profiles.DefaultTables("h100-sxm")
	require.NoError(t, err)
	c.Tables = tb
	p, err := New(c)
	require.NoError(t, err)
	var sum float64
	n := 0
	for _, r := range tb.GenerationMLA {
		if r.NumHeads == 16 && r.BatchSize == 64 && r.Step == 1023 && r.KVCacheDtype == "bfloat16" {
			sum += r.LatencyMs
			n++
		}
	}
	require.Equal(t, 2, n)
	assert.InDelta(t, sum/2, p.decodeAttnMs(64, 64*1024), 1e-12)
	// The model: 27 layers, the first dense, 26 MoE with 64 routed experts
	// (top-6) and 2 shared experts of 1,408; 15,706,484,224 parameters
	// (HuggingFace: 15.7B).
	assert.Equal(t, int64(15_706_484_224), c.Model.ParamCount())
	require.Len(t, p.kinds, 2)
	assert.Equal(t, layerKind{n: 1, attn: "bf16", mlp: "bf16"}, p.kinds[0])
	assert.Equal(t, layerKind{n: 26, moe: true, attn: "bf16", mlp: "bf16", expert: "bf16"}, p.kinds[1])
	assert.Equal(t, 2*2816, p.sharedN)
	assert.Empty(t, p.attn.Notes, "16 heads over one latent are in the table")
	// DeepSeek-V3 (published config values, fixtures/models): 671B.
	v3 := quantConfig(t, "../fixtures/models/deepseek-v3", "h200-sxm", 8)
	assert.Equal(t, int64(671_026_404_352), v3.Model.ParamCount())
}
