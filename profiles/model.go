package profiles

// ModelSpec is the shape of a transformer, read from a HuggingFace
// config.json. Sizes are counts (not bytes) unless named otherwise.
type ModelSpec struct {
	ID                    string // HF id (or path) as the user gave it
	Architecture          string // architectures[0], e.g. LlamaForCausalLM
	ModelType             string // model_type, e.g. llama, mixtral, qwen3_moe
	HiddenSize            int
	NumLayers             int
	NumHeads              int // query heads
	NumKVHeads            int // key/value heads (GQA); = NumHeads when absent
	HeadDim               int // hidden/heads when absent
	IntermediateSize      int // dense MLP intermediate size (a MoE model's dense layers)
	VocabSize             int
	MaxPositionEmbeddings int
	// MaxModelLen is vLLM's derived max_model_len (the smallest of the
	// config's MaxLenKeys, rope-scaled; see derivedMaxLen), tokens; 0 when
	// the config has none of them (vLLM then assumes DefaultMaxModelLen).
	MaxModelLen int
	// MaxModelLenKey is the config key MaxModelLen came from.
	MaxModelLenKey    string
	TieWordEmbeddings bool
	TorchDtype        string // torch_dtype: float16 | bfloat16 | float32
	SlidingWindow     int    // 0 = none
	// MoE (zero for dense models).
	NumExperts          int // num_local_experts / num_experts / n_routed_experts
	NumExpertsPerToken  int // num_experts_per_tok (top-k)
	MoEIntermediateSize int // per-expert intermediate (moe_intermediate_size or intermediate_size)
	// SharedExpertIntermediateSize is the intermediate size of the
	// always-on shared expert(s) beside the routed ones (Llama-4:
	// intermediate_size; Qwen2-MoE: shared_expert_intermediate_size;
	// DeepSeek: n_shared_experts × moe_intermediate_size); 0 = none.
	SharedExpertIntermediateSize int
	// FirstDenseLayers is how many leading layers are dense MLPs of
	// IntermediateSize in a MoE model (DeepSeek first_k_dense_replace).
	FirstDenseLayers int
	// Multi-head latent attention (DeepSeek-V2/V3); KVLoraRank 0 = none.
	// The KV cache holds KVLoraRank + QKRopeHeadDim values per token per
	// layer, shared by all heads (vLLM MLAAttentionSpec).
	KVLoraRank    int
	QLoraRank     int // 0 = q_proj straight from hidden (V2-Lite)
	QKNopeHeadDim int
	QKRopeHeadDim int
	VHeadDim      int
	// AttentionChunkSize is Llama-4's chunked local attention: tokens
	// attend within their chunk of this many tokens, on every layer but
	// the NoPE ones (every NoPELayerInterval-th); 0 = none.
	AttentionChunkSize int
	NoPELayerInterval  int
	// RotaryDim is the rotary embedding width (head_dim × partial rotary
	// factor; qk_rope_head_dim under MLA): vLLM keeps a cos/sin cache of
	// max_position_embeddings × RotaryDim values in the model dtype.
	RotaryDim int
	// VisionParams counts the weights of a multimodal model's vision
	// tower and projector (Llama-4), loaded in 16 bits beside the
	// language model; 0 for text-only models.
	VisionParams int64
	// Quant is the checkpoint's quantization (quantization_config), nil
	// for 16-bit checkpoints; --quantization fp8 sets it for online fp8.
	Quant *Quant
}

// IsMoE reports whether the model routes tokens to experts.
func (m ModelSpec) IsMoE() bool { return m.NumExperts > 0 }

// IsMLA reports whether the model uses multi-head latent attention.
func (m ModelSpec) IsMLA() bool { return m.KVLoraRank > 0 }

// IsMoELayer reports whether layer i (0-based) routes to experts.
func (m ModelSpec) IsMoELayer(i int) bool { return m.IsMoE() && i >= m.FirstDenseLayers }

// IsChunkedLayer reports whether layer i uses chunked local attention
// (Llama-4: all but every NoPELayerInterval-th layer, whose attention is
// global and uses no rotary embedding).
func (m ModelSpec) IsChunkedLayer(i int) bool {
	if m.AttentionChunkSize <= 0 {
		return false
	}
	return m.NoPELayerInterval <= 0 || (i+1)%m.NoPELayerInterval != 0
}

// QuantMethod is the quantization method name ("" for none).
func (m ModelSpec) QuantMethod() string {
	if m.Quant == nil {
		return ""
	}
	return m.Quant.Method
}

// QuantKVCache is the KV cache dtype the checkpoint's quantization asks
// for under --kv-cache-dtype auto ("" for none; Quant.KVCache).
func (m ModelSpec) QuantKVCache() string {
	if m.Quant == nil {
		return ""
	}
	return m.Quant.KVCache
}
