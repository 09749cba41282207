package profiles

import (
	"fmt"
	"strconv"
	"strings"
)

// Split says how vLLM shards a weight over tensor-parallel ranks.
type Split int

const (
	// SplitColumn divides the output features (ColumnParallelLinear: q/k/v,
	// gate/up, MLA q_b/kv_b).
	SplitColumn Split = iota
	// SplitRow divides the input features (RowParallelLinear: o, down).
	SplitRow
	// SplitReplicated keeps the whole weight on every rank (norms, the MoE
	// router, MLA's q_a/kv_a projections: ReplicatedLinear).
	SplitReplicated
	// SplitVocab divides the vocabulary rows, padded to a multiple of 64
	// (VocabParallelEmbedding, ParallelLMHead).
	SplitVocab
	// SplitExperts is a routed expert: its intermediate dimension divides
	// over the MoE group (TP), or whole experts spread over it (EP).
	SplitExperts
)

// Weight is one weight tensor of the model: Out × In values, Count copies
// (routed experts), under its checkpoint name (which quantization ignore
// lists match). Per-layer weights appear once per layer with the layer's
// index in Name.
type Weight struct {
	Name    string // e.g. model.layers.3.self_attn.q_proj
	Layer   int    // 0-based layer; -1 for the embedding, final norm and LM head
	Out, In int64  // output and input features
	Count   int64  // copies: routed experts, else 1
	Split   Split
	// Linear: a layer vLLM may quantize (LinearBase or FusedMoE). Norms,
	// the embedding, the LM head and the MoE router never are.
	Linear bool
	Expert bool // a routed expert (FusedMoE)
}

// Params is the weight's parameter count, Out × In × Count.
func (w Weight) Params() int64 { return w.Out * w.In * w.Count }

// moeNames are the checkpoint names of a MoE layer's parts, per family:
// the MoE block, its router and its shared expert(s).
func (m ModelSpec) moeNames() (block, router, shared string) {
	switch {
	case m.ModelType == "mixtral":
		return "block_sparse_moe", "gate", ""
	case strings.HasPrefix(m.ModelType, "llama4"):
		return "feed_forward", "router", "shared_expert"
	case strings.HasPrefix(m.ModelType, "deepseek"):
		return "mlp", "gate", "shared_experts"
	}
	return "mlp", "gate", "shared_expert"
}

// Weights lists every weight of the language model, layer by layer, in
// the shapes vLLM loads (before sharding): per layer the attention
// projections (q, k, v, o; under MLA q or q_a/q_b, kv_a_proj_with_mqa,
// kv_b and o, plus the latent norms), two RMSNorms, then a dense gated MLP
// (gate, up, down) or a MoE block (router, routed experts as fused
// w13 = 2·inter × hidden and w2 = hidden × inter, shared expert(s));
// then the token embedding, final norm and LM head (absent when tied).
// Biases (Qwen2's q/k/v) and Qwen3's q/k norms are left out: under 0.01 %
// of any supported model. The vision tower is VisionParams.
func (m ModelSpec) Weights() []Weight { return m.weights(true) }

// WeightShapes is Weights with a layer's weights under their short names
// ("self_attn.q_proj", where Weights says "model.layers.3.self_attn.q_proj"):
// the same weights, shapes and order, for a caller that matches no name
// against a layer's (no string built per weight: ~300 for a 32-layer
// model, listed several times a start-up).
func (m ModelSpec) WeightShapes() []Weight { return m.weights(false) }

// maxWeights bounds len(weights): a layer's attention 4 (MLA 7), 2
// norms and an MLP of 3 (MoE: router, 2 expert tensors, 3 shared), then
// embedding, final norm and LM head.
func (m ModelSpec) maxWeights() int {
	attn, mlp := 4, 3
	if m.IsMLA() {
		attn = 7
	}
	if m.NumExperts > 0 {
		mlp = 6
	}
	return m.NumLayers*(attn+2+mlp) + 3
}

// weights is Weights; unnamed, a layer's weights keep their short names
// ("self_attn.q_proj"), for callers that only count (checkSize): no
// string built per weight.
func (m ModelSpec) weights(named bool) []Weight {
	h := int64(m.HiddenSize)
	ws := make([]Weight, 0, m.maxWeights()) // listed several times a start-up: allocated once
	add := func(layer int, name string, out, in, count int64, split Split, linear, expert bool) {
		if out <= 0 || in <= 0 {
			return
		}
		full := name
		if layer >= 0 && named {
			full = "model.layers." + strconv.Itoa(layer) + "." + name // not Sprintf: ~10 names a layer, several lists a start-up
		}
		ws = append(ws, Weight{Name: full, Layer: layer, Out: out, In: in, Count: count, Split: split, Linear: linear, Expert: expert})
	}
	heads, kv, hd := int64(m.NumHeads), int64(m.NumKVHeads), int64(m.HeadDim)
	block, router, shared := m.moeNames()
	for i := 0; i < m.NumLayers; i++ {
		if m.IsMLA() {
			qk := int64(m.QKNopeHeadDim + m.QKRopeHeadDim)
			if m.QLoraRank > 0 {
				add(i, "self_attn.q_a_proj", int64(m.QLoraRank), h, 1, SplitReplicated, true, false)
				add(i, "self_attn.q_a_layernorm", int64(m.QLoraRank), 1, 1, SplitReplicated, false, false)
				add(i, "self_attn.q_b_proj", heads*qk, int64(m.QLoraRank), 1, SplitColumn, true, false)
			} else {
				add(i, "self_attn.q_proj", heads*qk, h, 1, SplitColumn, true, false)
			}
			add(i, "self_attn.kv_a_proj_with_mqa", int64(m.KVLoraRank+m.QKRopeHeadDim), h, 1, SplitReplicated, true, false)
			add(i, "self_attn.kv_a_layernorm", int64(m.KVLoraRank), 1, 1, SplitReplicated, false, false)
			add(i, "self_attn.kv_b_proj", heads*int64(m.QKNopeHeadDim+m.VHeadDim), int64(m.KVLoraRank), 1, SplitColumn, true, false)
			add(i, "self_attn.o_proj", h, heads*int64(m.VHeadDim), 1, SplitRow, true, false)
		} else {
			add(i, "self_attn.q_proj", heads*hd, h, 1, SplitColumn, true, false)
			add(i, "self_attn.k_proj", kv*hd, h, 1, SplitColumn, true, false)
			add(i, "self_attn.v_proj", kv*hd, h, 1, SplitColumn, true, false)
			add(i, "self_attn.o_proj", h, heads*hd, 1, SplitRow, true, false)
		}
		add(i, "input_layernorm", h, 1, 1, SplitReplicated, false, false)
		add(i, "post_attention_layernorm", h, 1, 1, SplitReplicated, false, false)
		if !m.IsMoELayer(i) {
			mlp := "mlp"
			if strings.HasPrefix(m.ModelType, "llama4") {
				mlp = "feed_forward"
			}
			inter := int64(m.IntermediateSize)
			add(i, mlp+".gate_proj", inter, h, 1, SplitColumn, true, false)
			add(i, mlp+".up_proj", inter, h, 1, SplitColumn, true, false)
			add(i, mlp+".down_proj", h, inter, 1, SplitRow, true, false)
			continue
		}
		e, inter := int64(m.NumExperts), int64(m.MoEIntermediateSize)
		add(i, block+"."+router, e, h, 1, SplitReplicated, false, false)
		add(i, block+".experts.w13", 2*inter, h, e, SplitExperts, true, true)
		add(i, block+".experts.w2", h, inter, e, SplitExperts, true, true)
		if s := int64(m.SharedExpertIntermediateSize); s > 0 {
			add(i, block+"."+shared+".gate_proj", s, h, 1, SplitColumn, true, false)
			add(i, block+"."+shared+".up_proj", s, h, 1, SplitColumn, true, false)
			add(i, block+"."+shared+".down_proj", h, s, 1, SplitRow, true, false)
		}
	}
	v := int64(m.VocabSize)
	add(-1, "model.embed_tokens", v, h, 1, SplitVocab, false, false)
	add(-1, "model.norm", h, 1, 1, SplitReplicated, false, false)
	if !m.TieWordEmbeddings {
		add(-1, "lm_head", v, h, 1, SplitVocab, false, false)
	}
	return ws
}

// ParamCount is the number of weights (parameters, not bytes) of the
// language model: the sum of Weights. Llama-4's vision tower is not
// counted (VisionParams).
//
// Llama-2-7b: 6,738,415,616, HuggingFace's own count.
func (m ModelSpec) ParamCount() int64 {
	var n int64
	for _, w := range m.WeightShapes() {
		n += w.Params()
	}
	return n
}

// KVBytesPerTokenPerLayer is the KV-cache size of one token in one layer, in
// bytes: a key and a value vector per KV head, 2 × NumKVHeads × HeadDim ×
// dtypeBytes (2 for fp16/bf16, 1 for fp8); under MLA the compressed latent
// and the rotary key, (KVLoraRank + QKRopeHeadDim) × dtypeBytes, which every
// tensor-parallel rank holds whole. Per GPU under tensor parallelism without
// MLA, divide the KV heads by TP (vLLM replicates a KV head when TP exceeds
// them).
func (m ModelSpec) KVBytesPerTokenPerLayer(dtypeBytes int) int64 {
	if m.IsMLA() {
		return int64(m.KVLoraRank+m.QKRopeHeadDim) * int64(dtypeBytes)
	}
	return 2 * int64(m.NumKVHeads) * int64(m.HeadDim) * int64(dtypeBytes)
}

// visionParams counts a Llama-4 vision tower and projector from its
// vision_config, as vLLM's mllama4.py builds them: the unfold patch
// projection (channels·patch² → hidden), class and positional
// embeddings ((image/patch)² + 1 positions), pre/post LayerNorms
// (weight + bias), per encoder layer q/k/v/o with biases, a GELU MLP
// (hidden → intermediate → hidden, biases) and two LayerNorms; the pixel
// shuffle MLP (intermediate → projector_input_dim → projector_output_dim,
// no bias) and the projector to the text hidden size (no bias).
// Other vision configs count 0.
func visionParams(vc hfConfig, textHidden int) int64 {
	if vc.str("model_type") != "llama4_vision_model" {
		return 0
	}
	get := func(k string) int64 { v, _, _ := vc.int(k); return int64(v) }
	h, inter, layers := get("hidden_size"), get("intermediate_size"), get("num_hidden_layers")
	patch, image, ch := get("patch_size"), get("image_size"), get("num_channels")
	if h <= 0 || patch <= 0 {
		return 0
	}
	positions := (image/patch)*(image/patch) + 1
	n := ch*patch*patch*h + h + positions*h + 2*2*h
	perLayer := 4*(h*h+h) + h*inter + inter + inter*h + h + 2*2*h
	n += layers * perLayer
	n += inter*get("projector_input_dim") + get("projector_input_dim")*get("projector_output_dim")
	n += get("vision_output_dim") * int64(textHidden)
	return n
}

// LayerFormats is the stored weight format of layer i's attention
// projections (MLA: judged on kv_b_proj), of its dense MLP or, in a MoE
// layer, its shared expert, and of its routed experts ("" in a dense
// layer), under the model's quantization (ignore lists applied).
func (m ModelSpec) LayerFormats(i int) (attn, mlp, experts WeightFormat) {
	q := m.Quant
	prefix := fmt.Sprintf("model.layers.%d.", i)
	if m.IsMLA() {
		attn = q.FormatOf(prefix + "self_attn.kv_b_proj")
	} else {
		attn = q.FormatOf(prefix + "self_attn.q_proj")
	}
	block, _, shared := m.moeNames()
	switch {
	case !m.IsMoELayer(i) && strings.HasPrefix(m.ModelType, "llama4"):
		mlp = q.FormatOf(prefix + "feed_forward.gate_proj")
	case !m.IsMoELayer(i):
		mlp = q.FormatOf(prefix + "mlp.gate_proj")
	default:
		mlp = q.FormatOf(prefix + block + "." + shared + ".gate_proj")
		experts = q.ExpertFormatOf(prefix + block + ".experts")
	}
	return attn, mlp, experts
}

// DescribeWeights says what the weights are stored in, for the summary:
// the dtype of a 16-bit model, else the quantization and the linear
// layers it leaves 16-bit in every layer, e.g. "fp8 per-channel
// (compressed-tensors); attention bf16".
func (m ModelSpec) DescribeWeights(dtype string) string {
	if !m.Quant.Quantized() {
		return dtype
	}
	attn16, mlp16, all16 := true, true, true
	for i := 0; i < m.NumLayers; i++ {
		a, p, e := m.LayerFormats(i)
		attn16 = attn16 && a == FormatBF16
		mlp16 = mlp16 && (p == FormatBF16 || (m.IsMoELayer(i) && m.SharedExpertIntermediateSize == 0))
		all16 = all16 && a == FormatBF16 && (p == FormatBF16 || (m.IsMoELayer(i) && m.SharedExpertIntermediateSize == 0)) &&
			(e == FormatBF16 || e == "")
	}
	if all16 {
		return fmt.Sprintf("%s (%s quantizes none of this model's weights)", dtype, m.Quant.Method)
	}
	var keep []string
	if attn16 && m.Quant.Linear != FormatBF16 {
		keep = append(keep, "attention")
	}
	if mlp16 && m.Quant.Linear != FormatBF16 && !m.IsMoE() {
		keep = append(keep, "MLP")
	}
	d := m.Quant.Describe()
	if len(keep) > 0 {
		d += " with " + strings.Join(keep, " and ") + " " + dtype
	}
	return d
}
