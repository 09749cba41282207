package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"frontier/predictor"
	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// Setup is everything resolved from a scenario before the run: the
// model, the hardware, the engine configuration vLLM would use and its
// memory plan.
type Setup struct {
	Model    profiles.ModelSpec
	Hardware profiles.Hardware
	Tables   *profiles.Tables
	Engine   engine.Config
	Capture  []int // CUDA-graph capture sizes (nil = eager)
	Memory   predictor.MemoryPlan
	Host     predictor.HostModel
	Pred     predictor.Config
	Async    bool
	Plan     *workload.Plan
	Client   ClientConfig
	Notes    []string // stated substitutions, printed once
}

// Resolve turns a validated scenario into a Setup, applying vLLM's
// defaults and refusing deployments vLLM would refuse (with its reason).
func Resolve(sc *scenarios.Scenario) (*Setup, error) {
	if sc.Disaggregation != nil {
		return nil, fmt.Errorf("disaggregation: prefill/decode disaggregation is not simulated yet")
	}
	d := sc.Deployment
	st := &Setup{Async: d.Async()}
	var err error
	if st.Hardware, err = profiles.LookupHardware(sc.Hardware); err != nil {
		return nil, fmt.Errorf("hardware: %w", err)
	}
	if st.Model, err = profiles.LoadModel(resolveModel(sc, d.Model)); err != nil {
		return nil, fmt.Errorf("deployment.model: %w", err)
	}
	if sc.Profiles != nil && *sc.Profiles != "" {
		st.Tables, err = profiles.LoadTables(sc.Resolve(*sc.Profiles))
	} else {
		st.Tables, err = profiles.DefaultTables(st.Hardware.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	st.Notes = append(st.Notes, st.Tables.Notes...)
	m := st.Model
	if d.PipelineParallelSize > 1 || d.DataParallelSize > 1 || d.EnableExpertParallel {
		return nil, fmt.Errorf("deployment: pipeline_parallel_size, data_parallel_size and enable_expert_parallel are not simulated yet (tensor_parallel_size is)")
	}
	if m.NumHeads%d.TensorParallelSize != 0 {
		return nil, fmt.Errorf("deployment.tensor_parallel_size: Total number of attention heads (%d) must be divisible by tensor parallel size (%d)", m.NumHeads, d.TensorParallelSize)
	}
	dtype, note, err := tableDtype(d.Dtype, m)
	if err != nil {
		return nil, err
	}
	if note != "" {
		st.Notes = append(st.Notes, note)
	}
	kv := "bfloat16"
	if strings.HasPrefix(d.KVCacheDtype, "fp8") {
		kv = "fp8"
	}
	eng := engine.Config{
		MaxNumSeqs: d.MaxNumSeqs, MaxNumBatchedTokens: d.MaxNumBatchedTokens, MaxModelLen: d.MaxModelLen,
		LongPrefillTokenThreshold: d.LongPrefillTokenThreshold, BlockSize: d.BlockSize,
		EnablePrefixCaching: d.PrefixCaching(),
	}
	if eng.MaxNumSeqs == 0 {
		eng.MaxNumSeqs = scenarios.DefaultMaxNumSeqs
	}
	if eng.MaxNumBatchedTokens == 0 {
		eng.MaxNumBatchedTokens = scenarios.DefaultMaxNumBatchedTokens
	}
	if eng.MaxModelLen == 0 {
		eng.MaxModelLen = m.MaxPositionEmbeddings
	}
	if m.MaxPositionEmbeddings > 0 && eng.MaxModelLen > m.MaxPositionEmbeddings {
		return nil, fmt.Errorf("deployment.max_model_len: User-specified max_model_len (%d) is greater than the derived max_model_len (max_position_embeddings=%d in the model's config.json)", eng.MaxModelLen, m.MaxPositionEmbeddings)
	}
	var hostNote string
	st.Host, hostNote = predictor.DefaultHostFor(st.Hardware.Name)
	if hostNote != "" {
		st.Notes = append(st.Notes, hostNote)
	}
	if sc.Calibration != nil && *sc.Calibration != "" {
		if st.Host, err = LoadHost(sc.Resolve(*sc.Calibration)); err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
	}
	st.Pred = predictor.Config{
		Model: m, Hardware: st.Hardware, Tables: st.Tables, TP: d.TensorParallelSize, PP: 1, EP: 1,
		Dtype: dtype, KVDtype: kv, Eager: d.EnforceEager, Host: st.Host,
	}
	st.Memory, err = predictor.PlanMemory(st.Pred, d.GPUMemoryUtilization, eng.MaxNumBatchedTokens, eng.BlockSize, eng.MaxModelLen, d.NumGPUBlocksOverride)
	if err != nil {
		return nil, fmt.Errorf("deployment does not start: %w", err)
	}
	eng.NumBlocks = st.Memory.NumBlocks
	st.Engine = eng
	if !d.EnforceEager {
		st.Capture = engine.CaptureSizes(eng.MaxNumSeqs, eng.MaxNumBatchedTokens, d.CUDAGraphSizes)
	}
	if st.Plan, err = workload.Build(&sc.Workload, sc.Resolve); err != nil {
		return nil, err
	}
	if err := checkLengths(st.Plan, eng.MaxModelLen); err != nil {
		return nil, err
	}
	a := sc.Workload.Arrivals
	if a.MaxConcurrency != nil {
		st.Client.MaxConcurrency = *a.MaxConcurrency
	}
	if a.TimeoutS != nil {
		st.Client.TimeoutNs = int64(math.Round(*a.TimeoutS * 1e9))
	}
	return st, nil
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
// tables: the same tensor-core rate and bytes on H100/H200 (a stated
// equivalence, noted once).
func tableDtype(flag string, m profiles.ModelSpec) (string, string, error) {
	d := flag
	if d == "auto" {
		d = m.TorchDtype
		if d == "" || d == "float32" {
			d = "bfloat16" // vLLM runs float32 checkpoints in bf16 by default on GPUs
		}
	}
	if m.Quantization == "fp8" {
		return "fp8", "", nil
	}
	switch d {
	case "bfloat16":
		return "bfloat16", "", nil
	case "float16", "half":
		return "bfloat16", "dtype float16: priced from bfloat16 tables (same tensor-core rate and bytes on H100/H200)", nil
	}
	return "", "", fmt.Errorf("deployment.dtype: no operator tables for %q (priced: bfloat16, float16)", d)
}

// checkLengths refuses requests vLLM's API server would reject: prompt
// plus max_tokens beyond max_model_len.
func checkLengths(p *workload.Plan, maxModelLen int) error {
	for _, st := range p.Stages {
		for _, r := range st.Requests {
			if r.PromptTokens+r.OutputTokens > maxModelLen {
				return fmt.Errorf("workload: a request of %d prompt + %d output tokens exceeds max_model_len %d (vLLM rejects it: \"This model's maximum context length is %d tokens\"); shorten the workload or raise max_model_len",
					r.PromptTokens, r.OutputTokens, maxModelLen, maxModelLen)
			}
		}
	}
	return nil
}

// LoadHost reads a calibration file: JSON with a "host" object of
// predictor.HostModel fields (frontier calibrate writes it). Omitted
// fields keep their defaults.
func LoadHost(path string) (predictor.HostModel, error) {
	h := predictor.DefaultHost()
	data, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	var f struct {
		Host *predictor.HostModel `json:"host"`
	}
	f.Host = &h
	if err := json.Unmarshal(data, &f); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
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

// NewSim assembles a fresh simulation of the setup (engines start empty).
func (st *Setup) NewSim(opt Options) (*Sim, error) {
	pred, err := predictor.New(st.Pred)
	if err != nil {
		return nil, err
	}
	core := &Core{ID: 0, Sched: engine.NewScheduler(st.Engine), Pred: pred, Pad: engine.NewPadTable(st.Capture), Async: st.Async}
	return New(st.Plan, []*Core{core}, LeastLoaded{}, st.Host, st.Client, opt), nil
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
		cov := p.Coverage()
		res.Coverage.Lookups += cov.Lookups
		res.Coverage.Extrapolated += cov.Extrapolated
		res.Coverage.Examples = append(res.Coverage.Examples, cov.Examples...)
		res.Notes = append(res.Notes, p.AllNotes()...)
	}
}
