package predictor

import (
	"math"
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

// A MoE expert shape the table lacks is priced from the nearest measured
// one at equal routed pairs, scaled by the roofline work ratio. Measured:
// hidden 64, inter 128, top-2 of 8 experts, latency 1 ms at 2 tokens and
// 4 ms at 64. Asked: hidden 64, inter 256, top-4 of 4 experts, 1 token,
// on a GPU so memory-bound that the ridge never binds: 1 token × top-4 =
// 4 pairs = 2 measured tokens (1 ms); work = active experts × weights per
// expert, A = E(1 − (1 − 1/E)^4): 4 × (1 − 0.75⁴) = 2.734 experts of
// 3·64·256 against 8 × (1 − 0.875⁴) = 3.310 of 3·64·128, a ratio of
// 2 × 2.734 / 3.310 = 1.652.
func TestMoEShapeSubstitution(t *testing.T) {
	row := func(tokens int64, ms float64) profiles.MoERow {
		return profiles.MoERow{Dtype: "bfloat16", NumTokens: tokens, Hidden: 64, Inter: 128, TopK: 2, NumExperts: 8,
			MoETP: 1, MoEEP: 1, Distribution: "balanced", LatencyMs: ms}
	}
	m, err := NewMoE([]profiles.MoERow{row(2, 1), row(64, 4)}, "bfloat16", 64, 256, 4, 4, 1, 1, "balanced")
	require.NoError(t, err)
	m.SetRoofline(1e30, 1, 1) // ridge 1e30 FLOP/B: memory-bound everywhere
	want := 2 * (4 * (1 - math.Pow(0.75, 4))) / (8 * (1 - math.Pow(0.875, 4)))
	assert.InDelta(t, 1.652, want, 5e-4)
	assert.InDelta(t, want, m.Ms(1), 1e-12)
	assert.Equal(t, int64(1), m.Cov.Extrapolated, "a substituted shape counts as extrapolated")
	assert.Contains(t, m.Notes[0], "no rows for hidden 64, inter 256, top-4 of 4 experts; priced from hidden 64, inter 128, top-2 of 8")
}

// Llama-4's chunked local attention: 3 of every 4 layers attend within
// their 8,192-token chunk, so a decode at 20,000 tokens of context costs
// those layers what one at 8,192 costs; the NoPE layers pay the full
// context (Scout, TP2: 36 chunked and 12 global layers).
func TestChunkedLocalAttention(t *testing.T) {
	c := quantConfig(t, "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "h100-sxm", 2)
	p, err := New(c)
	require.NoError(t, err)
	assert.Equal(t, 48, p.layers)
	assert.Equal(t, 36, p.chunked)
	b := &Batch{NumDecodes: 8, DecodeCtxSum: 8 * 20000}
	want := 12*p.decodeAttnMs(8, 8*20000) + 36*p.decodeAttnMs(8, 8*8192)
	assert.InDelta(t, want, p.attentionMs(b), 1e-12)
	assert.Greater(t, p.decodeAttnMs(8, 8*20000), p.decodeAttnMs(8, 8*8192))
}

// Compute-bound (ridge near 0), the same lookup scales by FLOPs: equal
// pairs, per-expert weights 2×, so 2 × the measured 1 ms.
func TestMoEShapeSubstitutionComputeBound(t *testing.T) {
	m, err := NewMoE([]profiles.MoERow{{Dtype: "bfloat16", NumTokens: 2, Hidden: 64, Inter: 128, TopK: 2, NumExperts: 8,
		MoETP: 1, MoEEP: 1, Distribution: "balanced", LatencyMs: 1}}, "bfloat16", 64, 256, 4, 4, 1, 1, "balanced")
	require.NoError(t, err)
	m.SetRoofline(1, 1e30, 1)
	assert.InDelta(t, 2.0, m.Ms(1), 1e-12)
}
