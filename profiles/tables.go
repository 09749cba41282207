package profiles

// GemmRow is one measured GEMM shape: C[m×n] = A[m×k] · B[k×n].
// Source: aiconfigurator gemm_perf table (or the project's collector).
type GemmRow struct {
	Dtype     string  // gemm_dtype: bfloat16 | fp8 | fp8_block
	M, N, K   int64   // rows of A (tokens), output features, input features
	LatencyMs float64 // kernel latency, milliseconds
	EagerMs   float64 // same shape launched eagerly (no CUDA graph, host launch included), milliseconds; 0 = not measured
}

// AttnRow is one measured attention shape. For context (prefill) attention,
// BatchSize sequences of ISL tokens each with Step cached prefix tokens
// (0 in the imported tables). For generation (decode) attention, BatchSize
// sequences each decoding one token against Step tokens of context (ISL = 1).
type AttnRow struct {
	BatchSize    int64
	ISL          int64 // new tokens per sequence
	Step         int64 // context length for decode; cached prefix for prefill
	NumHeads     int64 // query heads on this GPU
	NumKVHeads   int64 // key/value heads on this GPU
	HeadDim      int64
	AttnDtype    string  // bfloat16 | fp8
	KVCacheDtype string  // bfloat16 | fp8
	WindowSize   int64   // sliding window, 0 = none
	LatencyMs    float64 // kernel latency, milliseconds
	EagerMs      float64 // same shape launched eagerly (no CUDA graph, host launch included), milliseconds; 0 = not measured
}

// MLAHeadDim is the HeadDim of MLA rows: the kernels aiconfigurator
// measured read DeepSeek's latent, kv_lora_rank 512 + qk_rope_head_dim 64
// values per token (with qk_nope_head_dim 128 and v_head_dim 128).
const MLAHeadDim = 576

// MoERow is one measured fused-MoE layer (router excluded): NumTokens tokens,
// each routed to TopK of NumExperts experts of shape Hidden→Inter→Hidden.
type MoERow struct {
	Dtype        string // moe_dtype: bfloat16 | fp8 | ...
	NumTokens    int64
	Hidden       int64
	Inter        int64 // expert intermediate size (before TP split)
	TopK         int64
	NumExperts   int64
	MoETP, MoEEP int64
	Distribution string  // balanced | power_law_<alpha>
	LatencyMs    float64 // milliseconds
	EagerMs      float64 // same shape launched eagerly (no CUDA graph, host launch included), milliseconds; 0 = not measured
}

// CommRow is one measured collective.
type CommRow struct {
	Op          string // all_reduce | all_gather | reduce_scatter | alltoall
	Backend     string // nccl | vllm_graph | vllm_eager (vLLM custom all-reduce)
	Dtype       string // half | bfloat16 ...
	NumGPUs     int64
	MessageSize int64   // elements (2 bytes each for half/bf16)
	LatencyMs   float64 // milliseconds
	EagerMs     float64 // same shape launched eagerly (no CUDA graph, host launch included), milliseconds; 0 = not measured
}

// OpRow is one measured elementwise/small operator the imported tables lack
// (rmsnorm, rotary, silu_and_mul, embedding, sampler, launch ...), measured by
// the project's collector. Tokens is the row count; Width the feature size.
type OpRow struct {
	Op        string // rmsnorm | rotary | silu_and_mul | embedding | sampler | launch
	Tokens    int64
	Width     int64
	Dtype     string
	LatencyMs float64 // kernel time, milliseconds
	EagerMs   float64 // one eager launch with its host cost, milliseconds (0 = not measured)
}

// Tables is every operator table of one machine, as loaded.
type Tables struct {
	Hardware string // hardware name the tables were measured on, e.g. h100-sxm
	Source   string // where they came from (embedded path or directory)
	// Version is the vLLM version of an aiconfigurator table set ("" when
	// each table's newest version was read, or for the collector's tables).
	Version string
	// Gemm, ContextAttn and GenerationAttn are nil in a LazyTablesFor
	// set, which keeps them in the embedded rows form: EachGemm,
	// EachContextAttn and EachGenerationAttn read either.
	Gemm           []GemmRow
	ContextAttn    []AttnRow
	GenerationAttn []AttnRow
	MoE            []MoERow
	// ContextMLA and GenerationMLA are the latent-attention core of
	// DeepSeek-style MLA (aiconfigurator context_mla_perf,
	// generation_mla_perf): NumHeads query heads per GPU over one latent
	// "KV head" of MLAHeadDim values, like ContextAttn/GenerationAttn
	// otherwise. Their decode step is the context length − 1 (the only
	// MLA source, aiconfigurator, counts it that way).
	ContextMLA    []AttnRow
	GenerationMLA []AttnRow
	Comm          []CommRow
	Ops           []OpRow
	// DecodeContextOffset turns a GenerationAttn Step into the context
	// length the decode attends to: context = Step + DecodeContextOffset.
	// aiconfigurator's tables count step as context − 1 (their grid is
	// 2^k − 1), so 1; the project's collector writes the context length
	// itself (profiles/collect/README.md), so 0. Context attention's Step
	// (the cached prefix) needs no offset.
	DecodeContextOffset int64
	// MoEFallback, when set (embedded sets), returns the MoE rows of an
	// expert shape MoE lacks from another vLLM version of the same GPU,
	// and that version ("" and no rows when none measured it).
	MoEFallback func(dtype string, hidden, inter, topk, experts int64) ([]MoERow, string, error)
	// Notes records stated substitutions made while loading (for example
	// "h800 uses h100-sxm compute tables"). Printed once by the CLI.
	Notes []string
	// lazy holds the rows a LazyTablesFor set keeps undecoded (nil:
	// none).
	lazy *lazyRows
}
