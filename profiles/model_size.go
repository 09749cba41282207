package profiles

// ParamCount is the number of weights (parameters, not bytes) of the language
// model: token embedding; per layer the q, k, v, o projections, the gated MLP
// (gate, up, down: 3 × hidden × intermediate) or, for MoE, every expert's
// gated MLP plus the router (hidden × experts) and any shared expert, and two
// RMSNorm weight vectors; the final norm; and the LM head unless tied to the
// embedding. Biases (Qwen2's q/k/v bias) and q/k norms (Qwen3) are left out:
// under 0.01% of any supported model. Llama-4's vision tower is not counted.
//
// Llama-2-7b: 6,738,415,616, HuggingFace's own count.
func (m ModelSpec) ParamCount() int64 {
	h := int64(m.HiddenSize)
	qDim := int64(m.NumHeads) * int64(m.HeadDim)
	kvDim := int64(m.NumKVHeads) * int64(m.HeadDim)
	attn := h*qDim + 2*h*kvDim + qDim*h
	var mlp int64
	if m.IsMoE() {
		mlp = int64(m.NumExperts)*3*h*int64(m.MoEIntermediateSize) + h*int64(m.NumExperts)
	} else {
		mlp = 3 * h * int64(m.IntermediateSize)
	}
	mlp += 3 * h * int64(m.SharedExpertIntermediateSize)
	perLayer := attn + mlp + 2*h
	embed := int64(m.VocabSize) * h
	total := embed + int64(m.NumLayers)*perLayer + h
	if !m.TieWordEmbeddings {
		total += embed
	}
	return total
}

// KVBytesPerTokenPerLayer is the KV-cache size of one token in one layer, in
// bytes: a key and a value vector per KV head, 2 × NumKVHeads × HeadDim ×
// dtypeBytes (2 for fp16/bf16, 1 for fp8). Per GPU under tensor parallelism,
// divide the KV heads by TP (vLLM replicates a KV head when TP exceeds them).
func (m ModelSpec) KVBytesPerTokenPerLayer(dtypeBytes int) int64 {
	return 2 * int64(m.NumKVHeads) * int64(m.HeadDim) * int64(dtypeBytes)
}
