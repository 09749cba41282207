package predictor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// quantConfig is a Config for weight and memory checks: model (an id or
// a fixture path) on hardware at tp.
func quantConfig(t *testing.T, model, hw string, tp int) Config {
	t.Helper()
	c := llamaConfig(t, model, hw, tp)
	c.DP = 1
	return c
}

// Weight memory per GPU against vLLM's "Model loading took X GiB" where a
// public log gives it, within 2 %.
func TestWeightBytesAgainstVLLMLogs(t *testing.T) {
	tests := []struct {
		model  string
		tp     int
		logGiB float64
		source string
	}{
		// 8,030,261,248 params × 2 B + the rotary cache 131,072 × 128 × 2 B
		// = 16,094,076,928 B = 14.989 GiB.
		{"meta-llama/Llama-3.1-8B-Instruct", 1, 14.99, "llm-d's published empirical memory table, H100"},
		// 6,738,415,616 × 2 + 4,096 × 128 × 2 = 12.552 GiB.
		{"meta-llama/Llama-2-7b-hf", 1, 12.55, "a vLLM 0.11 log, H100"},
		// Per GPU at TP2: 80 layers × (q 4096×8192 + k, v 512×8192 each,
		// o 8192×4096, gate, up 14336×8192 each, down 8192×14336) fp8 +
		// fp32 per-channel scales (q 4096, k/v 512, o 8192, gate/up 14336,
		// down 8192 rows) + 2 norms × 8192 × 2 B = 80 × 428,072,960 B;
		// embedding and LM head 64,128 × 8192 × 2 B each (bf16, ignore:
		// lm_head); final norm; rotary 131,072 × 128 × 2 B:
		// 36,379,115,520 B = 33.881 GiB.
		{"../fixtures/models/llama-3.3-70b-instruct-fp8-dynamic", 2, 33.88, "llm-d's published empirical memory table, H100 TP2"},
	}
	for _, tc := range tests {
		c := quantConfig(t, tc.model, "h100-sxm", tc.tp)
		got := float64(WeightBytesPerRank(c)) / gib
		assert.InEpsilon(t, tc.logGiB, got, 0.02, "%s (%s): %.3f GiB", tc.model, tc.source, got)
	}
	assert.Equal(t, int64(16_094_076_928), WeightBytesPerRank(quantConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h100-sxm", 1)))
	assert.Equal(t, int64(36_379_115_520), WeightBytesPerRank(quantConfig(t, "../fixtures/models/llama-3.3-70b-instruct-fp8-dynamic", "h100-sxm", 2)))
}

// Llama-4-Scout FP8-dynamic at TP2, by hand. Per GPU, per layer (48):
//
//	attention (bf16, in the checkpoint's ignore list): q 2560×5120,
//	  k, v 512×5120, o 5120×2560 → 31,457,280 × 2 = 62,914,560 B
//	router (bf16, ignored; replicated) 16 × 5120 × 2 = 163,840 B
//	experts w13 16 × (8192×5120 fp8 + 8192 fp32 scales) = 671,612,928 B
//	experts w2  16 × (5120×4096 fp8 + 5120 fp32 scales) = 335,872,000 B
//	shared expert gate, up (4096×5120 + 4096×4 each) and down
//	  (5120×4096 + 5120×4): 62,967,808 B
//	two RMSNorms 2 × 5120 × 2 = 20,480 B
//	→ 1,133,551,616 B × 48 = 54,410,477,568 B
//
// embedding and LM head (bf16) 101,024 × 5120 × 2 = 1,034,485,760 B each;
// final norm 10,240 B; the rotary cache 10,485,760 positions × 128 × 2 B
// = 2,684,354,560 B; the vision tower (bf16, its ignore list) 871,932,416
// params × 2 B / TP2 = 871,932,416 B (patch projection 3×14²×1408, class
// and 577 position embeddings, 2 LayerNorms, 34 layers of q/k/v/o with
// biases, a 1408→5632→1408 MLP and 2 LayerNorms, the pixel-shuffle MLP
// 5632→4096→4096 and the 4096→5120 projector).
// Total 60,035,746,304 B = 55.91 GiB per GPU.
func TestWeightBytesScoutFP8TP2(t *testing.T) {
	c := quantConfig(t, "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "h100-sxm", 2)
	assert.Equal(t, int64(871_932_416), c.Model.VisionParams)
	assert.Equal(t, int64(54_410_477_568+2*1_034_485_760+10_240+2_684_354_560+871_932_416), WeightBytesPerRank(c))
}

// An fbgemm_fp8 config with 16-bit exceptions (Meta's 405B FP8 scheme:
// feed-forward fp8 except the first and last layers, attention bf16), at
// TP8, by hand. Per GPU:
//
//	attention bf16, per layer: q 2048×16384, k, v 128×16384, o 16384×2048
//	  → 2 × 71,303,168 = 142,606,336 B
//	fp8 MLP (124 layers): gate, up 6656×16384 + 6656 × 4 B scales each,
//	  down 16384×6656 + 16384 × 4 B → 327,274,496 B
//	bf16 MLP (layers 0 and 125): 3 × 6656 × 16384 × 2 = 654,311,424 B
//	norms 2 × 16384 × 2 = 65,536 B per layer
//	embedding, LM head: 16,032 × 16384 × 2 = 525,336,576 B each
//	final norm 32,768 B; rotary 131,072 × 128 × 2 = 33,554,432 B
//
// 126 × (142,606,336 + 65,536) + 124 × 327,274,496 + 2 × 654,311,424 +
// 2 × 525,336,576 + 32,768 + 33,554,432 = 60,951,576,576 B = 56.77 GiB,
// where all-bf16 would be 94.50 GiB; vLLM logged 57.75 (issue 15): −1.7 %.
func TestWeightBytesFbgemmFP8WithBF16Exceptions(t *testing.T) {
	c := quantConfig(t, "../fixtures/models/llama-3.1-405b-instruct-fp8-fbgemm", "h100-sxm", 8)
	q := c.Model.Quant
	require.NotNil(t, q)
	assert.Equal(t, profiles.FormatBF16, q.FormatOf("model.layers.7.self_attn.q_proj"))
	assert.Equal(t, profiles.FormatFP8Channel, q.FormatOf("model.layers.7.mlp.gate_proj"))
	assert.Equal(t, profiles.FormatBF16, q.FormatOf("model.layers.125.mlp.down_proj"))
	want := int64(126*(142_606_336+65_536) + 124*327_274_496 + 2*654_311_424 + 2*525_336_576 + 32_768 + 33_554_432)
	assert.Equal(t, want, WeightBytesPerRank(c))
	assert.InEpsilon(t, 57.75, float64(want)/gib, 0.02)
}

// vLLM's start-up lines for its own Mixtral TP2 count (27,511 blocks,
// max_model_len 4,096): 27,511 × 16 = 440,176 tokens; 27,511 / ⌈4096/16⌉
// = 107.46 requests.
func TestStartupLogFormat(t *testing.T) {
	p := MemoryPlan{NumBlocks: 27_511, WeightBytes: 46_707_769_344, KVBytes: 28_862_000_000}
	assert.Equal(t, []string{
		"Model loading took 43.50 GiB",
		"Available KV cache memory: 26.88 GiB",
		"GPU KV cache size: 440,176 tokens",
		"Maximum concurrency for 4,096 tokens per request: 107.46x",
	}, p.StartupLog(4096, 16))
	assert.Equal(t, "1,048,576", Thousands(1<<20))
	assert.Equal(t, "999", Thousands(999))
	assert.Equal(t, "-1,000", Thousands(-1000))
}

// The refusal's estimated-length clause is conditional, as in vLLM: it
// appears only when some length fits. 4,096 tokens need ⌈4096/16⌉ = 256
// blocks of 8 MiB = 2 GiB; 1 GiB holds 128 blocks = 2,048 tokens; 4 MiB
// holds no block.
func TestKVCacheRefusalText(t *testing.T) {
	tail := "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
	assert.EqualError(t, KVCacheRefusal(1<<30, 8<<20, 16, 4096),
		"To serve at least one request with the models's max seq len (4096), (2.00 GiB KV cache is needed, which is larger than the available KV cache memory (1.00 GiB). Based on the available memory, the estimated maximum model length is 2048. "+tail)
	assert.EqualError(t, KVCacheRefusal(4<<20, 8<<20, 16, 4096),
		"To serve at least one request with the models's max seq len (4096), (2.00 GiB KV cache is needed, which is larger than the available KV cache memory (0.00 GiB). "+tail)
	assert.NoError(t, KVCacheRefusal(2<<30, 8<<20, 16, 4096))
	var mem *MemoryError
	assert.ErrorAs(t, KVCacheRefusal(0, 8<<20, 16, 4096), &mem)
}

// MLA without MLA rows in the tables, or with a latent shape the tables do
// not measure, is refused.
func TestMLARefusals(t *testing.T) {
	c := quantConfig(t, "deepseek-ai/DeepSeek-V2-Lite", "h100-sxm", 1)
	tb, err := profiles.DefaultTables("h100-sxm")
	require.NoError(t, err)
	bare := *tb
	bare.ContextMLA, bare.GenerationMLA = nil, nil
	bare.Hardware = "h100-sxm"
	_, err = NewMLAAttention(&bare, c.Model, "bfloat16")
	assert.EqualError(t, err, "multi-head latent attention (deepseek-ai/DeepSeek-V2-Lite) is not priced on h100-sxm: its tables have no MLA attention rows (aiconfigurator context_mla_perf, generation_mla_perf) for kv_cache_dtype bfloat16")
	odd := c.Model
	odd.VHeadDim = 256
	_, err = NewMLAAttention(tb, odd, "bfloat16")
	assert.EqualError(t, err, "multi-head latent attention of deepseek-ai/DeepSeek-V2-Lite (kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 256) is not priced: the MLA tables measure DeepSeek's kernels only (512, 64, 128, 128)")
	_, err = NewMLAAttention(tb, c.Model, "bfloat16")
	assert.NoError(t, err)
}

// Where vLLM turns its custom all-reduce off, every TP all-reduce is
// NCCL's, small messages included.
func TestNCCLOnlyAllReduce(t *testing.T) {
	tb, err := profiles.DefaultTables("l40s")
	require.NoError(t, err)
	c := NewComm(tb.Comm, 4)
	custom := c.AllReduceMs(4096, true, 32e9)
	c.ncclOnly = true
	assert.Equal(t, c.Ms("all_reduce", "nccl", 4096, 32e9), c.AllReduceMs(4096, true, 32e9))
	assert.NotEqual(t, custom, c.AllReduceMs(4096, true, 32e9))
	h, err := profiles.LookupHardware("l40s")
	require.NoError(t, err)
	off, why := CustomAllReduceOff(h, 4)
	assert.True(t, off)
	assert.Equal(t, "custom all-reduce off for 4 PCIe-only GPUs (vLLM supports it on at most two): TP all-reduces priced from NCCL's table", why)
}

// A max_model_len whose blocks × block bytes pass int64 (a config of 2^62
// positions) is refused, with the need in GiB, where on main the product
// wrapped and the check passed (the run went ahead at 2^62 tokens).
// 2^62 tokens / 16 = 2^58 blocks of 8 MiB = 2^81 bytes = 2^51 GiB.
func TestKVCacheRefusalHugeLength(t *testing.T) {
	err := KVCacheRefusal(100<<30, 8<<20, 16, 1<<62)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max seq len (4611686018427387904), (2251799813685248.00 GiB KV cache is needed, which is larger than the available KV cache memory (100.00 GiB). Based on the available memory, the estimated maximum model length is 204800. ")
	require.Error(t, KVCacheRefusal(100<<30, 8<<20, 16, math.MaxInt64), "no wrap at the largest int")
}

// Llama-3.1-8B's weights per pipeline stage, bf16 TP1, by hand: a layer
// holds q, o 4096×4096, k, v 1024×4096, gate, up 14336×4096, down
// 4096×14336 and two 4096 norms = 218,112,000 params; the embedding and
// the LM head 128,256 × 4096 = 525,336,576 each; the final norm 4096.
// PP2 (16 + 16 layers): the embedding on the first stage, the norm and
// LM head on the last. Tied at PP4 (8 layers each), no LM head: the
// embedding on the first and the last stage, none in between.
func TestStageWeightsByHand(t *testing.T) {
	c := quantConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h100-sxm", 1)
	const layer, embed, norm = 218_112_000, 525_336_576, 4096
	c.PP = 2
	assert.Equal(t, []int64{2 * (16*layer + embed), 2 * (16*layer + embed + norm)}, stageWeights(c))
	c.PP = 4
	c.Model.TieWordEmbeddings = true
	assert.Equal(t, []int64{2 * (8*layer + embed), 2 * 8 * layer, 2 * 8 * layer, 2 * (8*layer + norm + embed)}, stageWeights(c))
	assert.Equal(t, int64(2*(8*layer+norm+embed)+131_072*128*2), WeightBytesPerRank(c), "the heaviest stage and the rotary cache")
}
