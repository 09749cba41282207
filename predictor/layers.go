package predictor

import (
	"fmt"
	"sort"
	"strings"

	"frontier/profiles"
)

// layerKind is a set of identical layers on the priced pipeline stage:
// same MLP kind (dense or MoE) and same stored weight formats. A
// homogeneous model has one kind; DeepSeek has leading dense layers, and
// a checkpoint may keep some layers 16-bit (ignore lists).
type layerKind struct {
	n      int
	moe    bool
	attn   profiles.WeightFormat // q/k/v/o (MLA: q, kv_a, kv_b, o)
	mlp    profiles.WeightFormat // dense MLP, or the shared expert of a MoE layer
	expert profiles.WeightFormat // routed experts
}

// stageKinds groups the layers of the pipeline stage Frontier prices into
// kinds. The priced stage is the one with the most MoE layers, then the
// most layers (stages as StageLayers): the slowest stage sets the pace of
// a pipeline.
func stageKinds(m profiles.ModelSpec, pp int) (kinds []layerKind, lo, hi int) {
	parts := StageLayers(m.NumLayers, pp)
	bestMoE, bestN := -1, -1
	start := 0
	for _, n := range parts {
		moe := 0
		for i := start; i < start+n; i++ {
			if m.IsMoELayer(i) {
				moe++
			}
		}
		if moe > bestMoE || (moe == bestMoE && n > bestN) {
			bestMoE, bestN, lo, hi = moe, n, start, start+n
		}
		start += n
	}
	byKey := map[layerKind]int{}
	for i := lo; i < hi; i++ {
		k := layerKind{moe: m.IsMoELayer(i)}
		k.attn, k.mlp, k.expert = m.LayerFormats(i)
		byKey[k]++
	}
	for k, n := range byKey {
		k.n = n
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kindLess(kinds[i], kinds[j]) })
	return kinds, lo, hi
}

func kindLess(a, b layerKind) bool {
	if a.moe != b.moe {
		return !a.moe
	}
	if a.attn != b.attn {
		return a.attn < b.attn
	}
	if a.mlp != b.mlp {
		return a.mlp < b.mlp
	}
	return a.expert < b.expert
}

// chunkedLayers counts the stage's layers with chunked local attention.
func chunkedLayers(m profiles.ModelSpec, lo, hi int) int {
	n := 0
	for i := lo; i < hi; i++ {
		if m.IsChunkedLayer(i) {
			n++
		}
	}
	return n
}

// UnpricedError is a refusal: a weight format or operator the chosen
// hardware's tables do not measure. The message names what is missing,
// the tables (hardware) and what they do price.
type UnpricedError struct{ msg string }

// Error is the refusal text.
func (e *UnpricedError) Error() string { return e.msg }

// PricedDtypes lists the GEMM and MoE dtypes the tables hold rows for,
// sorted: what a quantized model can be priced from.
func PricedDtypes(t *profiles.Tables) (gemm, moe []string) {
	g, e := map[string]bool{}, map[string]bool{}
	// A corrupt embedded rows file failed New first (gemmFrom).
	_ = t.EachGemm(func(r *profiles.GemmRow) { g[r.Dtype] = true })
	for _, r := range t.MoE {
		e[r.Dtype] = true
	}
	for d := range g {
		gemm = append(gemm, d)
	}
	for d := range e {
		moe = append(moe, d)
	}
	sort.Strings(gemm)
	sort.Strings(moe)
	return gemm, moe
}

// tablesName names tables t in a refusal: their GPU (Tables.Hardware),
// or where they were read from (Tables.Source) when they name none.
func tablesName(t *profiles.Tables) string {
	if t.Hardware == "" {
		return t.Source
	}
	return t.Hardware
}

// unpriced builds the refusal for weights in format f of the layers named
// by what, on tables t.
func unpriced(t *profiles.Tables, hw profiles.Hardware, q *profiles.Quant, f profiles.WeightFormat, what string) error {
	gemm, moe := PricedDtypes(t)
	method := "bf16"
	if q.Quantized() {
		method = q.Method
	}
	where := tablesName(t)
	why := ""
	switch f {
	case profiles.FormatFP8Tensor, profiles.FormatFP8Channel, profiles.FormatFP8Block:
		if hw.SMVersion > 0 && hw.SMVersion < 89 {
			why = " (no fp8 tensor cores before Ada: vLLM runs FP8 weights there as Marlin W8A16 weight-only kernels, which no table measures)"
		}
	case profiles.FormatInt8:
		why = " (vLLM runs them with Marlin weight-only kernels, which aiconfigurator does not measure for dense layers)"
		if q != nil && q.Activations == "int" {
			why = " (vLLM runs W8A8 int8 with CUTLASS int8 GEMMs, which aiconfigurator does not measure)"
		}
	case profiles.FormatInt4:
		why = " (vLLM runs them with Marlin weight-only kernels, which aiconfigurator does not measure for dense layers)"
	case profiles.FormatNVFP4:
		why = " (NVFP4 kernels need Blackwell)"
	case profiles.FormatMXFP4:
		if what != "MoE experts" {
			why = " (aiconfigurator measures mxfp4 experts only, not mxfp4 linear layers)"
		}
	}
	return &UnpricedError{fmt.Sprintf("quantization %s: %s weights of the %s are not priced on %s: its tables have no such rows%s; priced there: GEMM %s, MoE %s",
		method, f, what, where, why, strings.Join(gemm, " "), strings.Join(moe, " "))}
}

// buildGemms builds one GEMM predictor per table dtype the stage's
// layers use (bfloat16 always: LM head, router), refusing a format no
// table row prices.
func (p *Predictor) buildGemms() error {
	cfg := p.cfg
	p.gemms = map[string]*Gemm{}
	need := func(f profiles.WeightFormat, what string) error {
		d := profiles.GemmDtype(f)
		if d == "" {
			return unpriced(cfg.Tables, cfg.Hardware, cfg.Model.Quant, f, what)
		}
		if _, ok := p.gemms[d]; ok {
			return nil
		}
		g, err := gemmFrom(cfg.Tables, d)
		if err != nil {
			if d == "bfloat16" {
				return fmt.Errorf("dtype %s: %w", cfg.Dtype, err)
			}
			return unpriced(cfg.Tables, cfg.Hardware, cfg.Model.Quant, f, what)
		}
		p.gemms[d] = g
		return nil
	}
	if err := need(profiles.FormatBF16, "LM head"); err != nil {
		return err
	}
	p.bf16 = p.gemms["bfloat16"]
	for _, k := range p.kinds {
		if err := need(k.attn, "attention projections"); err != nil {
			return err
		}
		if !k.moe || p.sharedN > 0 {
			what := "dense MLP layers"
			if k.moe {
				what = "shared experts"
			}
			if err := need(k.mlp, what); err != nil {
				return err
			}
		}
	}
	return nil
}

// gemmFor is the GEMM predictor for weights stored in format f.
func (p *Predictor) gemmFor(f profiles.WeightFormat) *Gemm {
	return p.gemms[profiles.GemmDtype(f)]
}

// buildMoEs builds the fused-MoE predictor of each expert format the
// stage uses, from its moe_perf rows (MoEDtypes, in order of preference).
func (p *Predictor) buildMoEs() error {
	cfg := p.cfg
	m := cfg.Model
	p.moes = map[profiles.WeightFormat]*MoE{}
	tp, ep := p.moeGroup, 1
	if cfg.ExpertParallel {
		tp, ep = 1, p.moeGroup
	}
	for _, k := range p.kinds {
		if !k.moe || p.moes[k.expert] != nil {
			continue
		}
		dtypes := profiles.MoEDtypes(k.expert)
		var e *MoE
		err := unpriced(cfg.Tables, cfg.Hardware, m.Quant, k.expert, "MoE experts")
		for _, d := range dtypes {
			rows, note, ferr := moeRows(cfg.Tables, d, m)
			if ferr != nil {
				return ferr
			}
			if !hasMoEDtype(rows, d) {
				continue
			}
			e, err = NewMoE(rows, d, m.HiddenSize, m.MoEIntermediateSize, m.NumExpertsPerToken, m.NumExperts, tp, ep, cfg.MoEDistribution)
			if note != "" {
				p.Notes = append(p.Notes, note)
			}
			break
		}
		if err != nil {
			return err
		}
		e.SetRoofline(cfg.Hardware.BF16FLOPS, cfg.Hardware.MemBandwidth, 2)
		p.moes[k.expert] = e
		p.Notes = append(p.Notes, e.Notes...)
	}
	return nil
}

// moeRows are the MoE rows that price dtype d for model m: the tables'
// own, or, when they lack its expert shape, another vLLM version's rows of
// the same GPU (Tables.MoEFallback), with a note saying so.
func moeRows(t *profiles.Tables, d string, m profiles.ModelSpec) ([]profiles.MoERow, string, error) {
	h, in, k, e := int64(m.HiddenSize), int64(m.MoEIntermediateSize), int64(m.NumExpertsPerToken), int64(m.NumExperts)
	for _, r := range t.MoE {
		if r.Dtype == d && r.Hidden == h && r.Inter == in && r.TopK == k && r.NumExperts == e {
			return t.MoE, "", nil
		}
	}
	if t.MoEFallback == nil {
		return t.MoE, "", nil
	}
	rows, from, err := t.MoEFallback(d, h, in, k, e)
	if err != nil || len(rows) == 0 {
		return t.MoE, "", err
	}
	return rows, fmt.Sprintf("moe %s %d×%d top-%d of %d: not in the vLLM %s table; priced from vLLM %s's rows of this GPU",
		d, h, in, k, e, t.Version, from), nil
}

func hasMoEDtype(rows []profiles.MoERow, d string) bool {
	for _, r := range rows {
		if r.Dtype == d {
			return true
		}
	}
	return false
}

// kindMs is one layer of kind k at t tokens, milliseconds: fused
// add-RMSNorms, the attention projections (QKV, rotary, O; MLA: mlaProjMs)
// in the layer's weight format, then the dense gated MLP, or the router
// (16-bit), the fused MoE over every DP rank's tokens, its dispatch and
// the shared expert; two TP all-reduces.
func (p *Predictor) kindMs(k *layerKind, t int, graph bool) float64 {
	m := p.cfg.Model
	h := m.HiddenSize
	ms := 2 * p.elem.Ms("rmsnorm", t, h) // input + post-attention fused add-RMSNorm
	g := p.gemmFor(k.attn)
	if m.IsMLA() {
		ms += p.mlaProjMs(g, t)
	} else {
		ms += g.Ms(t, p.qkvN, h)
		ms += p.elem.Ms("rotary", t, (p.heads+p.kvHeads)*m.HeadDim) // q and k of this rank
		ms += g.Ms(t, h, p.oK)
	}
	if k.moe {
		ms += p.bf16.Ms(t, m.NumExperts, h)     // router
		ms += p.moes[k.expert].Ms(t * p.cfg.DP) // every DP rank's tokens reach the experts
		ms += p.dispatchMs(t)
		if p.sharedN > 0 {
			gm := p.gemmFor(k.mlp)
			ms += gm.Ms(t, p.sharedN, h)
			ms += p.elem.Ms("silu_and_mul", t, p.sharedK)
			ms += gm.Ms(t, h, p.sharedK)
		}
	} else {
		gm := p.gemmFor(k.mlp)
		ms += gm.Ms(t, p.upN, h)
		ms += p.elem.Ms("silu_and_mul", t, p.downK) // read 2I/TP, write I/TP
		ms += gm.Ms(t, h, p.downK)
	}
	if p.cfg.TP > 1 {
		ms += 2 * p.comm.AllReduceMs(int64(t)*int64(h), graph, p.cfg.Hardware.IntraNodeBW)
	}
	return ms
}

// attentionMs is the stage's attention on the step's real requests,
// milliseconds: per layer, decode attention over the decodes' contexts
// and prefill attention per chunk. Chunked local attention layers
// (Llama-4) attend within their chunk of AttentionChunkSize tokens: a
// decode's context is capped at the chunk (on the batch's mean context: a
// stated approximation), a prefill chunk sees only the prefix inside its
// current attention chunk. MLA adds its per-token projections
// (mlaDecodeMs, mlaPrefillMs).
func (p *Predictor) attentionMs(b *Batch) float64 {
	m := &p.cfg.Model
	full := p.decodeAttnMs(b.NumDecodes, b.DecodeCtxSum)
	for _, c := range b.Prefills {
		full += p.prefillAttnMs(c)
	}
	ms := float64(p.layers-p.chunked) * full
	if p.chunked > 0 {
		w := int64(m.AttentionChunkSize)
		sum := b.DecodeCtxSum
		if n := int64(b.NumDecodes); n > 0 && sum > n*w {
			sum = n * w
		}
		local := p.decodeAttnMs(b.NumDecodes, sum)
		for _, c := range b.Prefills {
			local += p.prefillAttnMs(Chunk{NewTokens: c.NewTokens, PrefixTokens: c.PrefixTokens % int(w)})
		}
		ms += float64(p.chunked) * local
	}
	if p.mla {
		extra := p.mlaDecodeMs(b.NumDecodes)
		for _, c := range b.Prefills {
			extra += p.mlaPrefillMs(c)
		}
		ms += float64(p.layers) * extra
	}
	return ms
}

// unpricedAttention says which tables lack attention rows for the head
// dimension and KV cache dtype (err, NewAttention's) and which KV cache
// dtypes they do price at that head dimension: on main an fp8 KV cache
// on A100 read "attention tables have no rows for head_dim 128 with
// kv_cache_dtype fp8", naming neither the GPU nor what works there.
func unpricedAttention(t *profiles.Tables, headDim int, err error) error {
	where := tablesName(t)
	seen := map[string]bool{}
	var kv []string
	// A corrupt embedded rows file failed NewAttention first.
	_ = t.EachContextAttn(func(r *profiles.AttnRow) {
		if r.HeadDim == int64(headDim) && !seen[r.KVCacheDtype] {
			seen[r.KVCacheDtype] = true
			kv = append(kv, r.KVCacheDtype)
		}
	})
	sort.Strings(kv)
	priced := "none"
	if len(kv) > 0 {
		priced = strings.Join(kv, " ")
	}
	return &UnpricedError{fmt.Sprintf("%v on %s (kv_cache_dtype priced there at head_dim %d: %s)", err, where, headDim, priced)}
}
