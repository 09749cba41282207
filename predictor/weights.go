package predictor

import (
	"frontier/profiles"
)

// vocabPadding is vLLM's DEFAULT_VOCAB_PADDING_SIZE: the embedding and LM
// head rows are padded to a multiple of 64 before the vocab-parallel split
// (vllm/model_executor/layers/vocab_parallel_embedding.py).
const vocabPadding = 64

// StageLayers splits layers over pp pipeline stages as vLLM's
// get_pp_indices does (vllm/distributed/utils.py): layers/pp each, the
// remainder one each to the stages before the last, counted backwards
// (7 layers over 3 stages: 2, 3, 2).
func StageLayers(layers, pp int) []int {
	out := make([]int, pp)
	for i := range out {
		out[i] = layers / pp
	}
	for i := 2; i < layers%pp+2; i++ {
		out[pp-i]++
	}
	return out
}

// stageRange is the half-open layer range [lo, hi) of stage s.
func stageRange(layers, pp, s int) (lo, hi int) {
	parts := StageLayers(layers, pp)
	for i := 0; i < s; i++ {
		lo += parts[i]
	}
	return lo, lo + parts[s]
}

// formatBytes is the memory, in bytes, of an out × in weight stored in
// format f with group size g (FormatInt4), scales included:
//
//   - bf16: 2 bytes per weight;
//   - fp8 per-tensor: 1 byte per weight + one fp32 scale;
//   - fp8 per-channel, int8: 1 byte + an fp32 scale per output row;
//   - fp8 block: 1 byte + an fp32 scale per 128 × 128 block;
//   - int4: ½ byte + an fp16 scale per g inputs per row, plus a 4-bit
//     zero point per group when asymmetric (AWQ);
//   - nvfp4: ½ byte + an fp8 scale per 16 weights + two fp32 global scales;
//   - mxfp4: ½ byte + an e8m0 scale per 32 weights.
//
// Sources: vLLM's create_weights of Fp8LinearMethod, CompressedTensorsW8A8Fp8,
// FBGEMMFp8LinearMethod, AWQ/GPTQ Marlin, ModelOptNvFp4LinearMethod and
// Mxfp4MoEMethod (vllm/model_executor/layers/quantization/).
func formatBytes(f profiles.WeightFormat, out, in int64, g int, zeros bool) int64 {
	n := out * in
	switch f {
	case profiles.FormatFP8Tensor:
		return n + 4
	case profiles.FormatFP8Channel, profiles.FormatInt8:
		return n + 4*out
	case profiles.FormatFP8Block:
		return n + 4*ceilDiv(out, 128)*ceilDiv(in, 128)
	case profiles.FormatInt4:
		if g <= 0 || int64(g) > in {
			g = int(in) // per-channel (-1), or one group per row
		}
		groups := out * ceilDiv(in, int64(g))
		b := n/2 + 2*groups
		if zeros {
			b += groups / 2
		}
		return b
	case profiles.FormatNVFP4:
		return n/2 + n/16 + 8
	case profiles.FormatMXFP4:
		return n/2 + n/32
	}
	return 2 * n
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// formatOf is the stored format of weight w under the model's quantization.
func formatOf(q *profiles.Quant, w profiles.Weight) profiles.WeightFormat {
	switch {
	case !w.Linear:
		return profiles.FormatBF16
	case w.Expert:
		return q.ExpertFormatOf(w.Name)
	}
	return q.FormatOf(w.Name)
}

// WeightBytesPerRank is the model weights one GPU holds after loading, in
// bytes (vLLM's "Model loading took X GiB"), on the pipeline stage that
// holds the most (stages split as StageLayers; the embedding on the first
// stage, the final norm and LM head on the last). Per weight (Weights):
// its stored format (quantized linear layers and experts, 16-bit
// otherwise), sharded as vLLM shards it: column-parallel outputs and
// row-parallel inputs over TP (KV heads replicated when fewer than TP),
// vocabulary rows padded to 64 then over TP, routed experts over the MoE
// group (TP × DP ranks: intermediate dimension, or whole experts under
// EP), the rest replicated. Plus the rotary cos/sin cache vLLM registers
// as a buffer (max_position_embeddings × rotary dim, 16-bit; one per GPU,
// shared by the layers) and the vision tower (Llama-4; sharded over TP
// as mm_encoder_tp_mode "weights", vLLM's default).
//
// Checked against vLLM's logs (predictor tests): Llama-3.1-8B bf16 H100
// 14.99 GiB, Llama-2-7b 12.55 GiB, Llama-3.3-70B-Instruct-FP8-dynamic TP2
// 33.88 GiB per GPU.
func WeightBytesPerRank(cfg Config) int64 {
	return weightBytesPerRank(cfg, stageWeights(cfg))
}

// weightBytesPerRank is WeightBytesPerRank from the stages' weight bytes
// (stageWeights).
func weightBytesPerRank(cfg Config, stages []int64) int64 {
	m := cfg.Model
	best := stages[heaviestStage(stages)]
	// The rotary cache follows max_position_embeddings, which a config
	// may set near 2^62 (profiles bounds the other sizes): counted in
	// float64 and saturated at MaxWeightBytes, never wrapped.
	extra := float64(m.MaxPositionEmbeddings)*float64(m.RotaryDim)*2 + float64(m.VisionParams*2/int64(max(1, cfg.TP)))
	if float64(best)+extra >= float64(MaxWeightBytes) {
		return MaxWeightBytes
	}
	return best + int64(extra)
}

// MaxWeightBytes is where WeightBytesPerRank saturates: 2^62 bytes (4
// EiB), past any GPU, far inside int64 for the memory plan's sums.
const MaxWeightBytes = int64(1) << 62

// heaviestStage is the first stage holding the most weight bytes.
func heaviestStage(stages []int64) int {
	at := 0
	for s, b := range stages {
		if b > stages[at] {
			at = s
		}
	}
	return at
}

// stageWeights is the weight bytes one TP rank of each pipeline stage
// holds (max(1, PP) entries), in one pass over the model's weights: a
// layer's weights on the stage holding the layer (StageLayers), the
// embedding on the first stage (and the last when tied), the final norm
// and LM head on the last, any other weight on every stage. The weights
// list of a large MoE is long (DeepSeek-V2-Lite: 64 experts × 26 layers),
// and building it per stage and per question was 6 % of a capacity
// search's CPU.
func stageWeights(cfg Config) []int64 {
	m := cfg.Model
	pp := max(1, cfg.PP)
	tp := int64(max(1, cfg.TP))
	parts := StageLayers(m.NumLayers, pp)
	moeGroup := tp * int64(max(1, cfg.DP))
	q := m.Quant
	var g int
	var zeros bool
	if q != nil {
		g, zeros = q.GroupSize, q.ZeroPoints
	}
	kvRepl := !m.IsMLA() && int64(m.NumKVHeads) < tp
	// Unquantized, a weight's format is 16-bit whatever its name, and the
	// tests below read a layer's names only by suffix: the short names do.
	var ws []profiles.Weight
	if q.Quantized() {
		ws = m.Weights()
	} else {
		ws = m.WeightShapes()
	}
	total := make([]int64, pp)
	for _, w := range ws {
		// The stages holding w: [first, last], every one when all.
		first, last := 0, pp-1
		switch {
		case w.Layer >= 0:
			first = -1
			for s, lo := 0, 0; s < pp; s++ {
				if w.Layer >= lo && w.Layer < lo+parts[s] {
					first, last = s, s
					break
				}
				lo += parts[s]
			}
			if first < 0 {
				continue
			}
		case w.Name == "model.embed_tokens":
			last = 0
		case w.Name == "lm_head" || w.Name == "model.norm":
			first = pp - 1
		}
		f := formatOf(q, w)
		out, in, count := w.Out, w.In, w.Count
		switch w.Split {
		case profiles.SplitColumn:
			if kvRepl && (hasSuffix(w.Name, ".k_proj") || hasSuffix(w.Name, ".v_proj")) {
				out = int64(m.HeadDim) // one replicated KV head per rank
			} else {
				out = ceilDiv(out, tp)
			}
		case profiles.SplitRow:
			in = ceilDiv(in, tp)
		case profiles.SplitVocab:
			out = ceilDiv(ceilDiv(out, vocabPadding)*vocabPadding, tp)
		case profiles.SplitExperts:
			if cfg.ExpertParallel {
				count = ceilDiv(count, moeGroup)
			} else if hasSuffix(w.Name, ".w2") {
				in = ceilDiv(in, moeGroup)
			} else {
				out = ceilDiv(out, moeGroup)
			}
		}
		b := count * formatBytes(f, out, in, g, zeros)
		for s := first; s <= last; s++ {
			total[s] += b
		}
		if w.Name == "model.embed_tokens" && m.TieWordEmbeddings && pp > 1 {
			total[pp-1] += b // tied: the last stage's LM head reads it
		}
	}
	return total
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
