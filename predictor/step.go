package predictor

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"frontier/profiles"
)

// Config is what the predictor prices for: one engine's model shard.
type Config struct {
	Model    profiles.ModelSpec
	Hardware profiles.Hardware
	Tables   *profiles.Tables
	TP       int // tensor-parallel size
	PP       int // pipeline-parallel size (layers split evenly)
	// Dtype is the 16-bit table dtype of activations and unquantized
	// weights (bfloat16; fp16 is priced from it). Quantized weights take
	// their rows from Model.Quant (profiles.GemmDtype, MoEDtypes).
	Dtype   string
	KVDtype string // kv cache table dtype: bfloat16 | fp8
	Eager   bool   // enforce_eager
	Host    HostModel
	// MoEDistribution is the routing distribution priced: balanced (default)
	// or a power_law_<alpha> present in the moe table.
	MoEDistribution string
	// DP is the data-parallel size. For MoE models the expert layers are
	// sharded over all TP × DP ranks (vLLM FusedMoEParallelConfig): by TP
	// (default) or by expert (ExpertParallel), and every MoE layer gathers
	// the tokens of all DP ranks and scatters the results back.
	DP             int
	ExpertParallel bool
	// All2AllBackend is VLLM_ALL2ALL_BACKEND: allgather_reducescatter
	// (vLLM's default: an all-gather and a reduce-scatter of the tokens
	// over the MoE group) or deepep / pplx (all-to-all dispatch and
	// combine of the routed tokens).
	All2AllBackend string
}

// Predictor prices engine steps for one Config. Not safe for concurrent
// use (it memoizes); build one per engine.
type Predictor struct {
	cfg      Config
	gemms    map[string]*Gemm // by gemm_dtype: bfloat16 always, plus the quantized dtypes used
	bf16     *Gemm            // gemms["bfloat16"]: LM head, router, MLA's absorbed BMMs
	attn     *Attention       // attention (MLA: the latent attention core tables)
	moes     map[profiles.WeightFormat]*MoE
	comm     *Comm
	moeComm  *Comm // collectives over the MoE group (TP × DP ranks)
	elem     *Elementwise
	moeGroup int
	kinds    []layerKind // layer kinds of the priced stage
	layers   int         // layers on this pipeline stage
	chunked  int         // of which with chunked local attention (Llama-4)
	// mla is cfg.Model.IsMLA(), kept so that a step's pricing does not
	// copy the model spec for the value-receiver call (56 instructions a
	// priced step).
	mla bool
	// per-rank shapes
	heads, kvHeads, qkvN, oK, upN, downK, sharedN, sharedK, vocabN int
	// memos
	dense  []float64 // per-layer token-dependent time (ms) by padded tokens, graph
	denseE []float64 // same, eager
	head   []float64 // LM head + sampler (ms) by logits rows
	ends   []float64 // embedding + final norm (ms) by padded tokens
	decode map[[2]int32]float64
	// decodeHot holds decode entries direct-mapped by key in front of the
	// map (same values): consecutive steps mostly repeat or revisit a key,
	// and a hit skips the map's hashing and probing.
	decodeHot *[decodeHotSize]decodeSlot
	prefill   map[Chunk]float64
	// lastChunk is the latest prefill chunk priced through the map, and
	// its attention time, ms (prefillAttnMs).
	lastChunk   Chunk
	lastChunkMs float64
	lastChunkOK bool
	mlaDecode   []float64 // mlaDecodeMs by decodes
	stepMemo    *[1 << stepMemoBits]stepSlot
	prefillMemo *[1 << prefillMemoBits]prefillSlot
	// The memo tables' first stores (prefault.go).
	stepPager    pager
	prefillPager pager
	decodePager  pager
	Notes        []string
}

// New builds a predictor; it fails when the tables lack a dtype or a
// shape family the model needs (an *UnpricedError names it).
func New(cfg Config) (*Predictor, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	m := cfg.Model
	p := newEmpty(cfg)
	// The attention predictor reads other tables than the GEMMs: it is
	// built on a goroutine of its own meanwhile (a one-request run's
	// start-up builds both in ~5 M instructions each), and its error, if
	// any, still comes after a GEMM error as when built in turn.
	attn := make(chan error, 1)
	go func() { attn <- p.buildAttention() }()
	if err := p.buildGemms(); err != nil {
		<-attn
		return nil, err
	}
	p.Notes = append(p.Notes, p.quantGemmNote()...)
	if err := <-attn; err != nil {
		return nil, err
	}
	p.attn.PeakFLOPS = cfg.Hardware.BF16FLOPS
	if m.IsMoE() {
		if err := p.buildMoEs(); err != nil {
			return nil, err
		}
		if cfg.DP > 1 {
			p.moeComm = NewComm(cfg.Tables.Comm, p.moeGroup)
		}
	}
	p.comm = NewComm(cfg.Tables.Comm, cfg.TP)
	if off, why := CustomAllReduceOff(cfg.Hardware, cfg.TP); off && cfg.TP > 1 {
		p.comm.ncclOnly = true
		p.Notes = append(p.Notes, why)
	}
	p.elem = NewElementwise(cfg.Tables.Ops, cfg.Hardware.MemBandwidth)
	p.Notes = append(p.Notes, p.elem.bytesNote(cfg.Hardware.Name)...)
	return p, nil
}

// buildAttention builds the attention (or MLA) predictor into p.attn.
func (p *Predictor) buildAttention() error {
	cfg, m := p.cfg, p.cfg.Model
	var err error
	if m.IsMLA() {
		p.attn, err = NewMLAAttention(cfg.Tables, m, cfg.KVDtype)
		return err
	}
	if p.attn, err = NewAttention(cfg.Tables, m.HeadDim, cfg.KVDtype); err != nil {
		return unpricedAttention(cfg.Tables, m.HeadDim, err)
	}
	return nil
}

// withDefaults checks cfg's parallel sizes and fills vLLM's defaults.
func withDefaults(cfg Config) (Config, error) {
	if cfg.TP < 1 || cfg.PP < 1 {
		return cfg, fmt.Errorf("predictor: tensor/pipeline parallel sizes must be ≥ 1")
	}
	if cfg.MoEDistribution == "" {
		cfg.MoEDistribution = "balanced"
	}
	if cfg.DP < 1 {
		cfg.DP = 1
	}
	if cfg.All2AllBackend == "" {
		cfg.All2AllBackend = "allgather_reducescatter"
	}
	if cfg.Dtype == "" {
		cfg.Dtype = "bfloat16"
	}
	return cfg, nil
}

// newEmpty is a predictor for cfg (defaults filled) with its per-rank
// shapes and empty memos, before the operator tables are attached.
func newEmpty(cfg Config) *Predictor { return newEmptyLike(cfg, nil) }

// newEmptyLike is newEmpty, with the priced stage's layer kinds copied
// from like (nil: none) when like prices the same model on as many
// pipeline stages (a template's prototype: its key holds the model),
// instead of grouped again from every layer's formats (stageKinds: 1.6 %
// of a DeepSeek-V2-Lite capacity search's CPU, in its format names).
func newEmptyLike(cfg Config, like *Predictor) *Predictor {
	m := cfg.Model
	p := &Predictor{cfg: cfg, decode: map[[2]int32]float64{}, prefill: map[Chunk]float64{},
		dense: takeFloats(), denseE: takeFloats(), ends: takeFloats(), head: takeFloats(), mlaDecode: takeFloats()}
	if m.IsMoE() {
		p.moeGroup = cfg.TP * cfg.DP
	}
	t := cfg.TP
	if like != nil && like.cfg.PP == cfg.PP && like.cfg.Model == m {
		p.kinds = slices.Clone(like.kinds)
		p.layers, p.chunked = like.layers, like.chunked
	} else {
		var lo, hi int
		p.kinds, lo, hi = stageKinds(m, cfg.PP)
		p.layers = hi - lo
		p.chunked = chunkedLayers(m, lo, hi)
	}
	p.heads = m.NumHeads / t
	p.kvHeads = max(1, m.NumKVHeads/t)
	if m.IsMLA() {
		p.kvHeads = 1 // one latent per token, read by every head
		p.mla = true
	}
	p.qkvN = (p.heads + 2*p.kvHeads) * m.HeadDim
	p.oK = p.heads * m.HeadDim
	p.upN = 2 * m.IntermediateSize / t
	p.downK = m.IntermediateSize / t
	p.sharedN = 2 * m.SharedExpertIntermediateSize / t
	p.sharedK = m.SharedExpertIntermediateSize / t
	p.vocabN = (m.VocabSize + t - 1) / t
	return p
}

// Config returns the predictor's configuration.
func (p *Predictor) Config() Config { return p.cfg }

// Coverage sums lookups and extrapolations over every operator family.
func (p *Predictor) Coverage() Coverage {
	var c Coverage
	covs := []*Coverage{&p.attn.Cov, &p.comm.Cov, &p.elem.Cov}
	for _, d := range sortedKeys(p.gemms) {
		covs = append(covs, &p.gemms[d].Cov)
	}
	if p.moeComm != nil {
		covs = append(covs, &p.moeComm.Cov)
	}
	for _, f := range sortedKeys(p.moes) {
		covs = append(covs, &p.moes[f].Cov)
	}
	for _, x := range covs {
		c.Add(*x)
	}
	return c
}

// AllNotes lists the stated substitutions the predictor made.
func (p *Predictor) AllNotes() []string {
	return append(append([]string{}, p.Notes...), p.attn.Notes...)
}

// layerDenseMs is the priced stage's token-count-dependent work at t
// tokens, summed over its layers (kindMs per layer kind: norms, QKV/O/MLP
// or MoE GEMMs, rotary, activation, TP all-reduces), milliseconds,
// memoized by t. The norms, rotary and SiLU-and-mul are priced by
// Elementwise: from the ops table where it measured them (h200-sxm's
// defaults), else by the bytes they move.
func (p *Predictor) layerDenseMs(t int, graph bool) float64 {
	memo := &p.dense
	if !graph {
		memo = &p.denseE
	}
	if t < len(*memo) && (*memo)[t] > 0 {
		return (*memo)[t]
	}
	ms := 0.0
	for i := range p.kinds {
		ms += float64(p.kinds[i].n) * p.kindMs(&p.kinds[i], t, graph)
	}
	if t < 1<<16 {
		for len(*memo) <= t {
			*memo = append(*memo, 0)
		}
		(*memo)[t] = ms
	}
	return ms
}

// dispatchMs prices moving one MoE layer's tokens over the MoE group when
// DP > 1 (t tokens per rank): all-gather then reduce-scatter of
// t × DP × hidden elements (allgather_reducescatter), or all-to-all
// dispatch and combine of t × top-k × hidden elements per rank (deepep,
// pplx), from the NCCL tables for the group's GPU count.
func (p *Predictor) dispatchMs(t int) float64 {
	if p.moeComm == nil || t == 0 {
		return 0
	}
	m := p.cfg.Model
	bw := p.cfg.Hardware.IntraNodeBW
	if p.cfg.All2AllBackend == "allgather_reducescatter" {
		elems := int64(t) * int64(p.cfg.DP) * int64(m.HiddenSize)
		return p.moeComm.Ms("all_gather", "nccl", elems, bw) + p.moeComm.Ms("reduce_scatter", "nccl", elems, bw)
	}
	elems := int64(t) * int64(m.NumExpertsPerToken) * int64(m.HiddenSize)
	return 2 * p.moeComm.Ms("alltoall", "nccl", elems, bw)
}

// StageSendNs is the pipeline-parallel send of t tokens' hidden states to
// the next stage: t × hidden × 2 bytes over NVLink plus the per-message
// latency of the hardware spec, ns.
func (p *Predictor) StageSendNs(t int) int64 {
	if p.cfg.PP <= 1 {
		return 0
	}
	bytes := float64(t) * float64(p.cfg.Model.HiddenSize) * 2
	return toNs(bytes/p.cfg.Hardware.IntraNodeBW*1e9 + p.cfg.Hardware.P2PLatencySec*1e9)
}

// decodeAttnMs memoizes decode attention by (requests, mean context
// rounded to 1/64 of a block-size step).
func (p *Predictor) decodeAttnMs(n int, ctxSum int64) float64 {
	if n == 0 {
		return 0
	}
	mean := float64(ctxSum) / float64(n)
	key := [2]int32{int32(n), int32(math.Round(mean / 4))}
	packed := uint64(uint32(key[0]))<<32 | uint64(uint32(key[1]))
	if p.decodeHot == nil {
		p.decodeHot = newDecodeHot()
	}
	i := (packed * 0x9e3779b97f4a7c15) >> (64 - decodeHotBits)
	slot := &p.decodeHot[i]
	if slot.used && slot.key == packed {
		return slot.ms
	}
	v, ok := p.decode[key]
	if !ok {
		v = p.attn.DecodeMs(n, float64(key[1])*4, p.heads, p.kvHeads)
		p.decode[key] = v
		if len(p.decode) == decodeMapGrowAt {
			p.decode = grownDecodeMap(p.decode)
		}
	}
	*slot = decodeSlot{key: packed, ms: v, used: true}
	if p.decodePager.n < pagerStores {
		noteStore(&p.decodePager, p.decodeHot[:], int(i))
	}
	return v
}

// The decode memo map starts empty; at decodeMapGrowAt keys (a long run)
// it moves into one sized for decodeMapHint: the 9,000-request codegen
// run keeps ~1,500 keys, which the map reached by doubling, each step a
// fresh table and the old one left behind, all fresh pages with the
// collector off (~40 page faults of the process; ~20 with the hint). A
// short run keeps its small map: sized from the start, eight DP ranks'
// maps cost a 10-request DP-8 run 70 page faults more. 1,792 keys fill
// 2,048 slots to the map's 7/8 load.
const (
	decodeMapGrowAt = 128
	decodeMapHint   = 1792
)

// grownDecodeMap is m's entries in a map sized for decodeMapHint keys.
func grownDecodeMap(m map[[2]int32]float64) map[[2]int32]float64 {
	g := make(map[[2]int32]float64, decodeMapHint)
	for k, v := range m {
		g[k] = v
	}
	return g
}

// decodeHotBits sizes the direct-mapped decode cache (1,024 slots, 24 KiB).
const (
	decodeHotBits = 10
	decodeHotSize = 1 << decodeHotBits
)

// decodeSlot is one decode cache entry: the packed (requests, context/4)
// key and its attention time, ms.
type decodeSlot struct {
	key  uint64
	ms   float64
	used bool
}

// prefillAttnMs memoizes prefill attention by (new tokens, prefix), the
// latest chunk in front of the map: a run's prefills mostly repeat one
// shape (a repeated prompt's uncached tail, a random dataset's whole
// prompt), and the map's hashing and probing were 200 instructions a
// chunk (BenchmarkSimulateCodegen). Only a chunk the map holds is kept
// there, so a hit skips only lookups the map would have answered.
func (p *Predictor) prefillAttnMs(c Chunk) float64 {
	if p.lastChunkOK && c == p.lastChunk {
		return p.lastChunkMs
	}
	v, ok := p.prefill[c]
	if !ok {
		v = p.attn.PrefillMs(c.NewTokens, c.PrefixTokens, p.heads, p.kvHeads)
		if len(p.prefill) >= 1<<20 {
			return v
		}
		p.prefill[c] = v
	}
	p.lastChunk, p.lastChunkMs, p.lastChunkOK = c, v, true
	return v
}

// DeviceMs is the step's GPU time, milliseconds: the stage's dense work at
// the padded token count, its layers' attention on the real requests
// (attentionMs), plus embedding, final norm, LM head on the logits rows
// and the sampler.
// The final norm is vLLM's fused residual add + RMSNorm, priced from the
// ops table's rmsnorm rows where measured; without rows it keeps the
// bytes of a plain RMSNorm (read and write tokens × hidden bf16), the
// formula the committed H100 host fit was made with.
func (p *Predictor) DeviceMs(b *Batch) float64 {
	t := b.PaddedTokens
	if t < b.NumTokens {
		t = b.NumTokens
	}
	ms := p.layerDenseMs(t, b.Graph) + p.attentionMs(b)
	ms += p.endsMs(t)
	if rows := b.NumRequests; rows > 0 {
		ms += p.headMs(rows)
	}
	return ms
}

// endsMs is the embedding gather and the final norm at t tokens,
// milliseconds, memoized by t.
func (p *Predictor) endsMs(t int) float64 {
	if t < len(p.ends) && p.ends[t] > 0 {
		return p.ends[t]
	}
	h := p.cfg.Model.HiddenSize
	ms := p.elem.Ms("embedding", t, h)
	if p.elem.Measured("rmsnorm") {
		ms += p.elem.Ms("rmsnorm", t, h)
	} else {
		ms += memBoundMs(float64(t)*float64(h)*2*2, p.cfg.Hardware.MemBandwidth)
	}
	if t < 1<<16 {
		for len(p.ends) <= t {
			p.ends = append(p.ends, 0)
		}
		p.ends[t] = ms
	}
	return ms
}

// headMs is the LM head GEMM on rows logits rows (vocab-parallel under TP,
// then an all-gather) plus the sampler over the full vocabulary
// (Elementwise "sampler": vLLM's random sampler, temperature, softmax and
// the exponential race, from the ops table where measured, else fp32
// logits read twice), milliseconds, memoized by rows.
func (p *Predictor) headMs(rows int) float64 {
	if rows < len(p.head) && p.head[rows] > 0 {
		return p.head[rows]
	}
	m := p.cfg.Model
	ms := p.bf16.Ms(rows, p.vocabN, m.HiddenSize) // the LM head is never quantized
	if p.cfg.TP > 1 {
		ms += p.comm.Ms("all_gather", "nccl", int64(rows)*int64(p.vocabN), p.cfg.Hardware.IntraNodeBW)
	}
	ms += p.elem.Ms("sampler", rows, m.VocabSize)
	if rows < 1<<16 {
		for len(p.head) <= rows {
			p.head = append(p.head, 0)
		}
		p.head[rows] = ms
	}
	return ms
}

// kernelsPerLayer counts a dense layer's kernels for eager launch cost.
func (p *Predictor) kernelsPerLayer() int {
	k := 9
	if p.cfg.TP > 1 {
		k += 2
	}
	if p.cfg.Model.IsMoE() {
		k += 4
	}
	return k
}

// Step prices a step: device time, launch, host work and the wall time.
// The GPU is busy for the kernels plus the runtime gaps the isolated
// tables do not see (StepGapNs per step, LayerGapNs per layer); graph
// steps add one graph launch, eager steps last at least their kernel
// launches. With async scheduling the host work overlaps the GPU
// (wall = max); without it they add up.
func (p *Predictor) Step(b *Batch, async bool) StepTime {
	st, _ := p.priced(b, async) // stepmemo.go
	return st
}

// step is Step without the memo.
func (p *Predictor) step(b *Batch, async bool) StepTime {
	dev := p.DeviceMs(b) * 1e6
	h := &p.cfg.Host
	gaps := h.StepGapNs + float64(p.layers)*h.LayerGapNs
	var launch, gpu float64
	if b.Graph && !p.cfg.Eager {
		launch = h.GraphLaunchNs
		if len(b.Prefills) > 0 {
			// piecewise graphs: attention runs eagerly between the pieces
			launch += float64(p.layers) * 2 * h.KernelLaunchNs
		}
		gpu = maxOf(dev+gaps+h.GraphLaunchNs, launch)
	} else {
		launch = float64(p.layers*p.kernelsPerLayer()+6) * h.KernelLaunchNs
		gpu = maxOf(dev+gaps, launch)
	}
	host := h.HostNs(b)
	var wall float64
	if async {
		wall = maxOf(gpu, host)
	} else {
		wall = gpu + host
	}
	return StepTime{DeviceNs: toNs(dev), LaunchNs: toNs(launch), HostNs: toNs(host), WallNs: toNs(math.Ceil(wall))}
}

// MaxStepNs is the longest step (or stage send) the predictor reports,
// 2^56 ns ≈ 2.3 years: a price at or past it is saturated there, and the
// simulator stops the run with an error rather than run on a clock that
// would wrap (sim.MaxClockNs). Bounded tables (profiles/bounds.go) keep
// real prices far below it.
const MaxStepNs = int64(1) << 56

// toNs converts ns to int64, saturating at MaxStepNs (NaN too); Go's
// conversion of a float past int64 is undefined, and was negative.
func toNs(x float64) int64 {
	if !(x < float64(MaxStepNs)) {
		return MaxStepNs
	}
	return int64(x)
}

// sortedKeys returns a map's keys in order (deterministic iteration).
func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
