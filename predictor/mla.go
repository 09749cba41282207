package predictor

import (
	"fmt"

	"frontier/profiles"
)

// deepSeekMLA are the latent dimensions of the kernels in the MLA tables
// (aiconfigurator measured DeepSeek-V3's attention core): kv_lora_rank,
// qk_rope_head_dim, qk_nope_head_dim, v_head_dim.
var deepSeekMLA = [4]int{512, 64, 128, 128}

// NewMLAAttention builds the latent-attention core of a DeepSeek-style
// model from the tables' MLA rows (profiles.Tables.ContextMLA,
// GenerationMLA), looked up like attention with the rank's query heads
// over one latent KV head (Attention's rules). The tables measure
// DeepSeek's latent dimensions only: another shape, or tables without MLA
// rows for the KV cache dtype, is refused (*UnpricedError).
func NewMLAAttention(t *profiles.Tables, m profiles.ModelSpec, kvDtype string) (*Attention, error) {
	hw := tablesName(t)
	if dims := [4]int{m.KVLoraRank, m.QKRopeHeadDim, m.QKNopeHeadDim, m.VHeadDim}; dims != deepSeekMLA {
		return nil, &UnpricedError{fmt.Sprintf("multi-head latent attention of %s (kv_lora_rank %d, qk_rope_head_dim %d, qk_nope_head_dim %d, v_head_dim %d) is not priced: the MLA tables measure DeepSeek's kernels only (512, 64, 128, 128)",
			m.ID, dims[0], dims[1], dims[2], dims[3])}
	}
	view := &profiles.Tables{ContextAttn: meanOfRepeats(t.ContextMLA), GenerationAttn: meanOfRepeats(t.GenerationMLA), DecodeContextOffset: 1}
	a, err := NewAttention(view, profiles.MLAHeadDim, kvDtype)
	if err != nil {
		return nil, &UnpricedError{fmt.Sprintf("multi-head latent attention (%s) is not priced on %s: its tables have no MLA attention rows (aiconfigurator context_mla_perf, generation_mla_perf) for kv_cache_dtype %s",
			m.ID, hw, kvDtype)}
	}
	a.latent = true
	return a, nil
}

// meanOfRepeats merges rows measured twice at one shape into one at
// their mean latency. aiconfigurator's MLA tables hold each per-GPU head
// count twice (as a 64- and a 128-head model's TP split: 16 heads is
// 64/TP4 and 128/TP8), runs of the same kernel shape that differ by up
// to 30 % at batch 1.
func meanOfRepeats(rows []profiles.AttnRow) []profiles.AttnRow {
	type key struct {
		b, isl, step, h int64
		attn, kv        string
	}
	sum := map[key]float64{}
	n := map[key]int{}
	var order []key
	for _, r := range rows {
		k := key{r.BatchSize, r.ISL, r.Step, r.NumHeads, r.AttnDtype, r.KVCacheDtype}
		if n[k] == 0 {
			order = append(order, k)
		}
		sum[k] += r.LatencyMs
		n[k]++
	}
	out := make([]profiles.AttnRow, 0, len(order))
	for _, k := range order {
		out = append(out, profiles.AttnRow{BatchSize: k.b, ISL: k.isl, Step: k.step, NumHeads: k.h, NumKVHeads: 1,
			HeadDim: profiles.MLAHeadDim, AttnDtype: k.attn, KVCacheDtype: k.kv, LatencyMs: sum[k] / float64(n[k])})
	}
	return out
}

// mlaProjMs is one MLA layer's token-parallel projections at t tokens in
// GEMM g, milliseconds, as vLLM's DeepseekV2MLAAttention runs them: with a
// query LoRA, the fused q_a + kv_a projection (replicated) and the q_a and
// kv_a RMSNorms, then q_b (column-parallel); without, q_proj and
// kv_a_proj_with_mqa; rotary on the rope dimensions; o_proj
// (row-parallel).
func (p *Predictor) mlaProjMs(g *Gemm, t int) float64 {
	m := p.cfg.Model
	bw := p.cfg.Hardware.MemBandwidth
	h := m.HiddenSize
	ft := float64(t)
	qk := m.QKNopeHeadDim + m.QKRopeHeadDim
	kvA := m.KVLoraRank + m.QKRopeHeadDim
	var ms float64
	if m.QLoraRank > 0 {
		ms += g.Ms(t, m.QLoraRank+kvA, h)
		ms += memBoundMs(ft*float64(m.QLoraRank)*2*2, bw)
		ms += g.Ms(t, p.heads*qk, m.QLoraRank)
	} else {
		ms += g.Ms(t, p.heads*qk, h)
		ms += g.Ms(t, kvA, h)
	}
	ms += memBoundMs(ft*float64(m.KVLoraRank)*2*2, bw)                // kv_a RMSNorm
	ms += memBoundMs(ft*float64((p.heads+1)*m.QKRopeHeadDim)*2*2, bw) // rotary
	ms += g.Ms(t, h, p.heads*m.VHeadDim)                              // o_proj
	return ms
}

// mlaDecodeMs is one layer's per-decode MLA work beside the attention
// core, milliseconds: vLLM absorbs kv_b into the query and output
// (W_UK, W_UV, 16-bit batched matmuls per head), priced as GEMMs of the
// same FLOPs and weight bytes, n × (heads·kv_lora_rank) × qk_nope and
// n × (heads·v_head_dim) × kv_lora_rank.
func (p *Predictor) mlaDecodeMs(n int) float64 {
	if n == 0 {
		return 0
	}
	if n < len(p.mlaDecode) && p.mlaDecode[n] > 0 {
		return p.mlaDecode[n]
	}
	m := p.cfg.Model
	ms := p.bf16.Ms(n, p.heads*m.KVLoraRank, m.QKNopeHeadDim) + p.bf16.Ms(n, p.heads*m.VHeadDim, m.KVLoraRank)
	if n < 1<<16 {
		for len(p.mlaDecode) <= n {
			p.mlaDecode = append(p.mlaDecode, 0)
		}
		p.mlaDecode[n] = ms
	}
	return ms
}

// mlaPrefillMs is one layer's per-chunk MLA work beside the attention
// core, milliseconds: prefill is not absorbed, kv_b_proj expands the
// latent of the chunk and its prefix to keys and values (column-parallel,
// in the attention weights' format).
func (p *Predictor) mlaPrefillMs(c Chunk) float64 {
	m := p.cfg.Model
	g := p.gemmFor(p.kinds[0].attn)
	return g.Ms(c.NewTokens+c.PrefixTokens, p.heads*(m.QKNopeHeadDim+m.VHeadDim), m.KVLoraRank)
}
