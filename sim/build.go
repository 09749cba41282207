package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"frontier/predictor"
	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// Deployment is one resolved vLLM deployment: what every engine core of a
// pool runs, with vLLM's defaults applied and its memory plan.
type Deployment struct {
	Pool      string // "" (co-located) | prefill | decode
	Instances int    // instances of the deployment in the pool (1 co-located)
	Model     profiles.ModelSpec
	Hardware  profiles.Hardware
	Tables    *profiles.Tables // nil Gemm/ContextAttn/GenerationAttn when built by profiles.LazyTablesFor (embedded tables, no --profile-dir, not the regression predictor); read rows with EachGemm/EachContextAttn/EachGenerationAttn
	Engine    engine.Config
	Capture   []int // CUDA-graph capture sizes (nil = eager)
	Memory    predictor.MemoryPlan
	Pred      predictor.Config
	// Weights and KVCache say what the weights and the KV cache are
	// stored in, for the summary ("bfloat16", "fp8 per-channel
	// (compressed-tensors)"; "float16", "fp8").
	Weights, KVCache string
	Async            bool
	PP, DP           int
	// Lockstep: the DP engines step together (MoE with DP > 1).
	Lockstep bool
	// APIServers is the API server processes per instance
	// (--api-server-count; vLLM's default is the DP size).
	APIServers int
	// SchedulingPolicy names Engine.Policy (--scheduling-policy).
	SchedulingPolicy string
	// tmpl holds the predictor's table-derived grids, built once; nil
	// when they do not build (NewSim then reports New's error).
	tmpl *predictor.Template
}

// GPUs is the GPU count of one instance (TP × PP × DP).
func (d *Deployment) GPUs() int { return d.Pred.TP * d.PP * d.DP }

// Disagg is the KV transfer of a disaggregated deployment.
type Disagg struct {
	BandwidthBytes float64 // link bandwidth, bytes/s, per prefill rank
	LatencyNs      int64   // per message (one message per layer)
}

// MaxTotalBlocks bounds the KV blocks of all engines together, so memory
// stays bounded (each block costs about 48 bytes of simulator state).
const MaxTotalBlocks = 100_000_000

// Setup is everything resolved from a scenario before the run.
type Setup struct {
	// The primary deployment (co-located, or the decode pool): what the
	// summary reports.
	*Deployment
	Pools  []*Deployment // co-located: one; disaggregated: prefill, decode
	Disagg *Disagg
	Router string
	// Replicas is the co-located deployment's replication behind an
	// external router (Count 1: none).
	Replicas Replicas
	Host     predictor.HostModel
	Plan     *workload.Plan
	Client   ClientConfig
	Notes    []string // stated substitutions, printed once
	// planTokens is the plan's prompt and output tokens summed over its
	// requests, and planRequests their count: with each request's tokens
	// rounded up to whole blocks, a bound on the KV blocks a run first
	// hands out, which sizes the block pools' first allocation
	// (engine.Config.ExpectBlocks).
	planTokens, planRequests int64
}

// Resolve turns a validated scenario into a Setup, applying vLLM's
// defaults and refusing deployments vLLM would refuse (with its reason).
func Resolve(sc *scenarios.Scenario) (*Setup, error) {
	st := &Setup{Router: sc.Router}
	if st.Router == "" {
		st.Router = "least_loaded"
	}
	hwName := sc.Hardware
	hw, err := profiles.LookupHardware(hwName)
	if err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	var hostNote string
	st.Host, hostNote = predictor.DefaultHostFor(hw.Name)
	if hostNote != "" {
		st.Notes = append(st.Notes, hostNote)
	}
	if sc.Calibration != nil && *sc.Calibration != "" {
		if st.Host, err = LoadHost(sc.Resolve(*sc.Calibration)); err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
	}
	if sc.Deployment != nil {
		d, err := st.resolveDeploymentMemo(sc, sc.Deployment, "deployment", hw.Name)
		if err != nil {
			return nil, err
		}
		st.Pools = []*Deployment{d}
	} else {
		g := sc.Disaggregation
		for _, p := range []struct {
			name string
			pool *scenarios.Pool
		}{{"prefill", &g.Prefill}, {"decode", &g.Decode}} {
			h := hwName
			if p.pool.Hardware != "" {
				h = p.pool.Hardware
			}
			d, err := st.resolveDeploymentMemo(sc, &p.pool.Deployment, "disaggregation."+p.name+".deployment", h)
			if err != nil {
				return nil, err
			}
			if d.DP > 1 {
				return nil, fmt.Errorf("disaggregation.%s.deployment.data_parallel_size: use instances for replicas in a disaggregated pool (data_parallel_size > 1 inside a pool is not simulated)", p.name)
			}
			d.Pool, d.Instances = p.name, p.pool.Instances
			st.Pools = append(st.Pools, d)
		}
		if st.Pools[0].Model.ID != st.Pools[1].Model.ID {
			return nil, fmt.Errorf("disaggregation: prefill and decode must serve the same model (got %s and %s)", st.Pools[0].Model.ID, st.Pools[1].Model.ID)
		}
		st.Disagg = kvLink(g.KVTransfer, st.Pools[0], st.Pools[1])
	}
	st.Deployment = st.Pools[len(st.Pools)-1]
	if err := st.resolveReplicas(sc); err != nil {
		return nil, err
	}
	total := 0
	for _, d := range st.Pools {
		total += d.Engine.NumBlocks * d.DP * d.Instances
	}
	if total > MaxTotalBlocks {
		return nil, fmt.Errorf("the deployment's engines hold %d KV blocks in all; the simulator keeps at most %d (about 48 bytes each): lower data_parallel_size, instances or num_gpu_blocks_override", total, MaxTotalBlocks)
	}
	maxLen := 0
	for _, d := range st.Pools {
		if maxLen == 0 || d.Engine.MaxModelLen < maxLen {
			maxLen = d.Engine.MaxModelLen
		}
	}
	if st.Plan, err = workload.BuildFor(&sc.Workload, sc.Resolve, maxLen); err != nil {
		return nil, err
	}
	if err := st.checkPriorities(); err != nil {
		return nil, err
	}
	st.Notes = append(st.Notes, st.Plan.Notes...)
	for _, stage := range st.Plan.Stages {
		for i := range stage.Requests {
			st.planTokens += int64(stage.Requests[i].PromptTokens) + int64(stage.Requests[i].OutputTokens)
		}
		st.planRequests += int64(len(stage.Requests))
	}
	if err := st.checkSessions(); err != nil {
		return nil, err
	}
	a := sc.Workload.Arrivals
	if a.MaxConcurrency != nil {
		st.Client.MaxConcurrency = *a.MaxConcurrency
	}
	if a.TimeoutS != nil {
		// At least 1 ns (the clock's unit): a positive timeout below half
		// a ns would otherwise round to 0, which means none.
		st.Client.TimeoutNs = max(1, int64(math.Round(*a.TimeoutS*1e9)))
	}
	st.Notes = dedupe(st.Notes)
	return st, nil
}

// kvLink prices the KV connector: the scenario's kv_transfer, else NVLink
// when both instances fit in one node, else the network (hardware spec).
func kvLink(t *scenarios.KVTransfer, p, d *Deployment) *Disagg {
	if t != nil {
		return &Disagg{BandwidthBytes: t.BandwidthGbps * 1e9, LatencyNs: int64(t.LatencyMs * 1e6)}
	}
	hw := p.Hardware
	if p.GPUs()*p.Instances+d.GPUs()*d.Instances <= hw.GPUsPerNode {
		return &Disagg{BandwidthBytes: hw.IntraNodeBW, LatencyNs: int64(hw.P2PLatencySec * 1e9)}
	}
	return &Disagg{BandwidthBytes: hw.InterNodeBW, LatencyNs: int64(hw.P2PLatencySec * 1e9)}
}

func (st *Setup) resolveDeployment(sc *scenarios.Scenario, d *scenarios.Deployment, path, hwName string) (*Deployment, error) {
	out := &Deployment{Async: d.Async(), PP: d.PipelineParallelSize, DP: d.DataParallelSize, Instances: 1}
	var err error
	if out.Hardware, err = profiles.LookupHardware(hwName); err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	if out.Model, err = profiles.LoadModel(resolveModel(sc, d.Model)); err != nil {
		return nil, fmt.Errorf("%s.model: %w", path, err)
	}
	var top *profiles.Tables
	if sc.Profiles != nil && *sc.Profiles != "" {
		// A table folder overrides the families it holds; the rest stay
		// the hardware's defaults (of the same vLLM version when embedded).
		if top, err = profiles.LoadTablesVersion(sc.Resolve(*sc.Profiles), sc.VLLMVersion); err != nil {
			return nil, fmt.Errorf("profiles: %w", err)
		}
	}
	// The default tables load once the predictor's needs are known
	// (below); their notes go here.
	tableNotes := len(st.Notes)
	m := out.Model
	tp := d.TensorParallelSize
	if m.NumHeads%tp != 0 {
		return nil, fmt.Errorf("%s.tensor_parallel_size: Total number of attention heads (%d) must be divisible by tensor parallel size (%d)", path, m.NumHeads, tp)
	}
	if err := checkKVHeadSplit(m, tp, path); err != nil {
		return nil, err
	}
	if m.NumLayers < out.PP {
		return nil, fmt.Errorf("%s.pipeline_parallel_size: %d stages for %d layers", path, out.PP, m.NumLayers)
	}
	if err := checkEngineSpan(out.Hardware, tp*out.PP, path); err != nil {
		return nil, err
	}
	if g := tp * out.PP; g > out.Hardware.GPUsPerNode {
		st.Notes = append(st.Notes, fmt.Sprintf("%s: %d GPUs span %d %s nodes of %d GPUs in one NVLink domain (vLLM launched with --nnodes): collectives run over NVLink with NCCL (vLLM's custom all-reduce works within a node only)",
			path, g, (g+out.Hardware.GPUsPerNode-1)/out.Hardware.GPUsPerNode, out.Hardware.Name, out.Hardware.GPUsPerNode))
	}
	if d.EnableExpertParallel && !m.IsMoE() {
		return nil, fmt.Errorf("%s.enable_expert_parallel: %s has no experts", path, m.ID)
	}
	if m.IsMoE() && d.EnableExpertParallel && m.NumExperts%(tp*out.DP) != 0 {
		return nil, fmt.Errorf("%s.enable_expert_parallel: %d experts do not divide over %d ranks (TP × DP)", path, m.NumExperts, tp*out.DP)
	}
	if m, err = withQuantization(m, d.Quantization, path); err != nil {
		return nil, err
	}
	out.Model = m
	dtype, note, err := tableDtype(d.Dtype, m, path)
	if err != nil {
		return nil, err
	}
	if note != "" {
		st.Notes = append(st.Notes, note)
	}
	kv := "bfloat16"
	out.KVCache = modelDtype(d.Dtype, m)
	if strings.HasPrefix(d.KVCacheDtype, "fp8") {
		kv, out.KVCache = "fp8", "fp8"
	} else if d.KVCacheDtype != "auto" {
		out.KVCache = d.KVCacheDtype
	} else if ckpt := m.QuantKVCache(); ckpt != "" {
		if kv, out.KVCache, note, err = checkpointKVCache(ckpt, path); err != nil {
			return nil, err
		}
		st.Notes = append(st.Notes, note)
	}
	out.Weights = m.DescribeWeights(modelDtype(d.Dtype, m))
	pred := predictor.Config{Model: m, TP: tp, PP: out.PP, Dtype: dtype, KVDtype: kv}
	if out.Tables, err = defaultTables(out.Hardware, sc.VLLMVersion, top, &pred, sc.Predictor); err != nil {
		return nil, err
	}
	st.Notes = slices.Insert(st.Notes, tableNotes, keepTableNotes(out.Tables.Notes, m, tp)...)
	eng := engine.Config{
		MaxNumSeqs: d.MaxNumSeqs, MaxNumBatchedTokens: d.MaxNumBatchedTokens, MaxModelLen: d.MaxModelLen,
		LongPrefillTokenThreshold: d.LongPrefillTokenThreshold, BlockSize: d.BlockSize,
		EnablePrefixCaching: d.PrefixCaching(),
	}
	if out.SchedulingPolicy, eng.Policy, err = schedulingPolicy(d, path); err != nil {
		return nil, err
	}
	defTokens, defSeqs := out.Hardware.ServeBatchDefaults() // vllm serve's, by GPU
	if eng.MaxNumBatchedTokens == 0 {
		eng.MaxNumBatchedTokens = defTokens
	}
	if eng.MaxNumSeqs == 0 {
		// A defaulted max_num_seqs never exceeds the token budget
		// (EngineArgs: min(default, max_num_batched_tokens), arg_utils.py
		// at 99d7eb5 and since), so a small budget alone is served.
		eng.MaxNumSeqs = min(defSeqs, eng.MaxNumBatchedTokens)
	}
	if eng.MaxModelLen, err = maxModelLen(m, eng.MaxModelLen, path); err != nil {
		return nil, err
	}
	if eng.MaxModelLen == profiles.DefaultMaxModelLen && m.MaxModelLen == 0 && d.MaxModelLen == 0 {
		st.Notes = append(st.Notes, profiles.NoMaxLenWarning())
	}
	if eng.MaxNumBatchedTokens < eng.MaxNumSeqs {
		return nil, fmt.Errorf("%s: max_num_batched_tokens (%d) must be greater than or equal to max_num_seqs (%d) (vLLM SchedulerConfig)", path, eng.MaxNumBatchedTokens, eng.MaxNumSeqs)
	}
	out.Pred = predictor.Config{
		Model: m, Hardware: out.Hardware, Tables: out.Tables, TP: tp, PP: out.PP, DP: out.DP,
		ExpertParallel: d.EnableExpertParallel, All2AllBackend: d.All2AllBackend, MoEDistribution: d.MoEDistribution,
		Dtype: dtype, KVDtype: kv, Eager: d.EnforceEager, Host: st.Host,
	}
	if err := predictor.CheckBlockShards(out.Pred); err != nil {
		return nil, fmt.Errorf("%s does not start: %w", path, err)
	}
	if out.tmpl, err = predictor.SharedTemplate(out.Pred); err != nil { // built once per process for each table set and shard
		// Refused from the rows it needs: refuse from every row, so the
		// reason names all the tables hold (and, were TablesNeed short
		// of a row New reads, the deployment is priced from every row).
		if out.Tables, err = defaultTables(out.Hardware, sc.VLLMVersion, top, nil, sc.Predictor); err != nil {
			return nil, err
		}
		out.Pred.Tables = out.Tables
		if out.tmpl, err = predictor.SharedTemplate(out.Pred); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	out.Memory, err = predictor.PlanMemory(out.Pred, d.GPUMemoryUtilization, eng.MaxNumBatchedTokens, eng.BlockSize, eng.MaxModelLen, d.NumGPUBlocksOverride)
	if err != nil {
		return nil, fmt.Errorf("%s does not start: %w", path, err)
	}
	eng.NumBlocks = out.Memory.NumBlocks
	out.Engine = eng
	if !d.EnforceEager {
		out.Capture = engine.CaptureSizes(eng.MaxNumSeqs, eng.MaxNumBatchedTokens, d.CUDAGraphSizes)
	}
	out.Lockstep = m.IsMoE() && out.DP > 1
	out.APIServers = out.DP
	if d.APIServerCount != nil {
		out.APIServers = *d.APIServerCount
	}
	if out.PP > 1 && out.Async {
		// vLLM runs PP with its batch queue (max_concurrent_batches = PP).
		out.Async = false
		st.Notes = append(st.Notes, fmt.Sprintf("%s: pipeline_parallel_size %d keeps %d batches in flight (batch queue); async scheduling does not apply", path, out.PP, out.PP))
	}
	return out, nil
}

// maxModelLen applies vLLM's rule (_get_and_verify_max_len) to the
// user's max_model_len (0 = not given): not given, the model's derived
// length (profiles.ModelSpec.MaxModelLen), or 2048 when its config has no
// length key (vLLM warns; the caller notes it); given, it may not exceed
// the derived length (which the config's model_max_length, when set,
// already replaced, as vLLM allows a user length up to it).
func maxModelLen(m profiles.ModelSpec, user int, path string) (int, error) {
	if user == 0 {
		if m.MaxModelLen == 0 {
			return profiles.DefaultMaxModelLen, nil
		}
		return m.MaxModelLen, nil
	}
	if m.MaxModelLen > 0 && user > m.MaxModelLen {
		return 0, fmt.Errorf("%s.max_model_len: User-specified max_model_len (%d) is greater than the derived max_model_len (%s=%d in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (not simulated)",
			path, user, m.MaxModelLenKey, m.MaxModelLen)
	}
	return user, nil
}

// defaultTables is the hardware's embedded tables of vLLM version ("" =
// the hardware's default set; profiles.TablesFor) under the --profile-dir
// tables top (nil: none), as the scenario's predictor prices from them
// (regression: RegressionTables): only the rows a predictor for cfg reads
// (predictor.TablesNeed), or every row when cfg is nil. The regression
// fits each series on its own, so it fits the rows it keeps as it would
// among every row. With cfg set, no top and not the regression predictor
// it is a profiles.LazyTablesFor set: the GEMM and attention rows stay
// undecoded (Gemm, ContextAttn, GenerationAttn nil; read them with the
// Tables' Each methods).
func defaultTables(hw profiles.Hardware, version string, top *profiles.Tables, cfg *predictor.Config, kind string) (*profiles.Tables, error) {
	var need *profiles.Need
	if cfg != nil {
		n := predictor.TablesNeed(*cfg)
		need = &n
	}
	tablesFor := profiles.TablesForNeed
	if need != nil && top == nil && kind != predictor.PredictorRegression {
		// Only the predictor reads them: its grids are built from the
		// rows form, without decoding the GEMM and attention rows.
		tablesFor = func(hw, version string, need *profiles.Need) (*profiles.Tables, error) {
			return profiles.LazyTablesFor(hw, version, *need)
		}
	}
	t, err := tablesFor(hw.Name, version, need)
	if err != nil && version != "" && top != nil {
		// The folder may hold a version the binary does not embed.
		t, err = tablesFor(hw.Name, "", need)
	}
	if err != nil && version != "" {
		return nil, fmt.Errorf("vllm_version: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	if top != nil {
		t = profiles.Overlay(top, t)
	}
	if kind == predictor.PredictorRegression {
		if t, err = predictor.RegressionTables(t, hw); err != nil {
			return nil, fmt.Errorf("predictor: %w", err)
		}
	}
	return t, nil
}

// checkEngineSpan refuses an engine (TP × PP GPUs) larger than one NVLink
// domain, or than one node where the GPUs have no NVLink: vLLM would need
// a multi-node launch with TP or PP collectives over the network, which
// Frontier does not price.
func checkEngineSpan(hw profiles.Hardware, gpus int, path string) error {
	limit := hw.MaxEngineGPUs()
	if gpus <= limit {
		return nil
	}
	where := fmt.Sprintf("one %s node has %d (one NVLink domain)", hw.Name, hw.GPUsPerNode)
	switch {
	case hw.NVLinkDomain > hw.GPUsPerNode:
		where = fmt.Sprintf("one %s NVLink domain has %d (%d per node)", hw.Name, hw.NVLinkDomain, hw.GPUsPerNode)
	case hw.NVLinkDomain == 0:
		where = fmt.Sprintf("one %s node has %d (PCIe, no NVLink)", hw.Name, hw.GPUsPerNode)
	}
	return fmt.Errorf("%s: tensor_parallel_size × pipeline_parallel_size = %d GPUs, but %s: vLLM would need a multi-node launch (--nnodes) with its collectives over the inter-node network, which Frontier does not price; use at most %d GPUs per engine and data_parallel_size for more",
		path, gpus, where, limit)
}

// keepTableNotes drops the table-version substitutions of families the
// deployment does not price from (MLA tables for other models, the custom
// all-reduce at TP 1).
func keepTableNotes(notes []string, m profiles.ModelSpec, tp int) []string {
	var out []string
	for _, n := range notes {
		mla := strings.HasPrefix(n, "context_mla_perf:") || strings.HasPrefix(n, "generation_mla_perf:")
		ar := strings.HasPrefix(n, "custom_allreduce_perf:")
		if (mla && !m.IsMLA()) || (ar && tp == 1) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// resolveModel treats a model that names an existing relative path as
// relative to the scenario's folder.
func resolveModel(sc *scenarios.Scenario, model string) string {
	if p := sc.Resolve(model); p != model {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return model
}

// tableDtype maps --dtype to the tables' dtype. fp16 is priced from bf16
// tables: the same tensor-core rate and bytes on every preset's GPU
// (Ampere, Ada, Hopper and Blackwell run fp16 and bf16 MMAs at one rate;
// a stated equivalence, noted once).
func tableDtype(flag string, m profiles.ModelSpec, path string) (string, string, error) {
	d := modelDtype(flag, m)
	switch d {
	case "bfloat16":
		return "bfloat16", "", nil
	case "float16", "half":
		return "bfloat16", "dtype float16: priced from bfloat16 tables (same tensor-core rate and bytes on every preset GPU: A100, L40S, H100/H200, B200/GB200, RTX PRO 6000)", nil
	}
	return "", "", fmt.Errorf("%s.dtype: no operator tables for %q (priced: bfloat16, float16)", path, d)
}

// modelDtype is the dtype vLLM runs the model's 16-bit tensors in:
// --dtype, or with auto the config's torch_dtype (float32 checkpoints run
// in bf16 on GPUs, as vLLM does by default).
func modelDtype(flag string, m profiles.ModelSpec) string {
	if flag != "auto" {
		if flag == "half" {
			return "float16"
		}
		return flag
	}
	if d := m.TorchDtype; d != "" && d != "float32" {
		return d
	}
	return "bfloat16"
}

// withQuantization applies --quantization (deployment.quantization) to
// the model as vLLM does: on a 16-bit checkpoint only fp8 (online) is
// possible; on a quantized one it must name the checkpoint's method.
func withQuantization(m profiles.ModelSpec, method, path string) (profiles.ModelSpec, error) {
	if method == "" {
		return m, nil
	}
	key := path + ".quantization"
	if m.Quant.Quantized() {
		return m, profiles.CheckQuantFlag(key, method, m.Quant)
	}
	q, err := profiles.QuantFromFlag(key, method)
	if err != nil {
		return m, err
	}
	m.Quant = q
	return m, nil
}

// LoadHost reads a calibration file: JSON with a "host" object of
// predictor.HostModel fields (frontier calibrate writes it). Fields the
// object leaves out keep the committed fit's values
// (predictor.DefaultHostFor). Errors: the file is not JSON, has no "host"
// object, names a field HostModel does not have, or holds a negative or
// non-finite value (HostModel.Validate).
func LoadHost(path string) (predictor.HostModel, error) {
	h, _ := predictor.DefaultHostFor("h100-sxm")
	data, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	var f struct {
		Host json.RawMessage `json:"host"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return h, fmt.Errorf("%s: not a calibration file (JSON written by frontier calibrate): %w", path, err)
	}
	if len(f.Host) == 0 || string(f.Host) == "null" {
		return h, fmt.Errorf("%s: not a calibration file: no \"host\" object (frontier calibrate writes one)", path)
	}
	dec := json.NewDecoder(bytes.NewReader(f.Host))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return h, fmt.Errorf("%s: host: %w", path, err)
	}
	if err := h.Validate(); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// WithHost returns a copy of the setup whose every deployment uses host.
func (st *Setup) WithHost(h predictor.HostModel) *Setup {
	c := *st
	c.Host = h
	c.Pools = make([]*Deployment, len(st.Pools))
	for i, d := range st.Pools {
		dc := *d
		dc.Pred.Host = h
		c.Pools[i] = &dc
		if d == st.Deployment {
			c.Deployment = &dc
		}
	}
	return &c
}

// Build resolves a scenario and assembles its simulation.
func Build(sc *scenarios.Scenario, opt Options) (*Sim, *Setup, error) {
	st, err := Resolve(sc)
	if err != nil {
		return nil, nil, err
	}
	s, err := st.NewSim(opt)
	return s, st, err
}

// Finish attaches the setup's memory plan, coverage and notes to a result.
func (st *Setup) Finish(s *Sim, res *Result) {
	res.Memory = st.Memory
	res.Notes = append(res.Notes, st.Notes...)
	for _, c := range s.cores {
		p, ok := c.Pred.(*predictor.Predictor)
		if !ok {
			continue
		}
		res.Coverage.Add(p.Coverage())
		res.Notes = append(res.Notes, p.AllNotes()...)
	}
	res.Notes = dedupe(append(res.Notes, res.Coverage.RuleNotes()...))
}

// Release hands the memo tables of s's predictors to the runs after it
// (predictor.Predictor.Release): call it once s is run and Finish has
// read their coverage, when nothing will price a step of s again (a
// planning command's probe).
func (st *Setup) Release(s *Sim) {
	for _, c := range s.cores {
		if p, ok := c.Pred.(*predictor.Predictor); ok {
			p.Release()
		}
	}
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
