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
	IntermediateSize      int // dense MLP intermediate size
	VocabSize             int
	MaxPositionEmbeddings int
	TieWordEmbeddings     bool
	TorchDtype            string // torch_dtype: float16 | bfloat16 | float32
	SlidingWindow         int    // 0 = none
	// MoE (zero for dense models).
	NumExperts          int // num_local_experts / num_experts
	NumExpertsPerToken  int // num_experts_per_tok (top-k)
	MoEIntermediateSize int // per-expert intermediate (moe_intermediate_size or intermediate_size)
	// SharedExpertIntermediateSize is the intermediate size of an always-on
	// shared expert beside the routed ones (Llama-4: intermediate_size;
	// Qwen2-MoE: shared_expert_intermediate_size); 0 = none.
	SharedExpertIntermediateSize int
	// Quantization is the weights' quantization method from
	// quantization_config ("" for none, "fp8" ...).
	Quantization string
}

// IsMoE reports whether the model routes tokens to experts.
func (m ModelSpec) IsMoE() bool { return m.NumExperts > 0 }
