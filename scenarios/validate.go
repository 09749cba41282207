package scenarios

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// versionPattern is a dotted version number (vllm_version).
var versionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`) })

// Datasets are the workload.dataset values.
var Datasets = []string{"random", "shared_prefix", "trace", "sessions", "lengths"}

// KVCacheDtypes are the kv_cache_dtype values priced by the tables.
var KVCacheDtypes = []string{"auto", "bfloat16", "float16", "fp8", "fp8_e4m3"}

// Dtypes are the dtype values accepted (vLLM --dtype).
var Dtypes = []string{"auto", "bfloat16", "float16", "half"}

// Validate checks every value's range and returns the first problem, naming
// its key path and what is allowed.
func (s *Scenario) Validate() error {
	if s.Hardware == "" {
		return errors.New("hardware: required (a GPU preset: frontier hardware lists them)")
	}
	if s.VLLMVersion != "" && !versionPattern().MatchString(s.VLLMVersion) {
		return fmt.Errorf("vllm_version: must be a vLLM version such as 0.24.0, got %q", s.VLLMVersion)
	}
	if s.Predictor != "" && s.Predictor != "interp" && s.Predictor != "regression" {
		return fmt.Errorf("predictor: must be interp or regression, got %q", s.Predictor)
	}
	if s.Router != "" && s.Router != "least_loaded" && s.Router != "round_robin" {
		return fmt.Errorf("router: must be least_loaded or round_robin, got %q", s.Router)
	}
	switch {
	case s.Deployment == nil && s.Disaggregation == nil:
		return errors.New("deployment: required (or disaggregation)")
	case s.Deployment != nil && s.Disaggregation != nil:
		return errors.New("deployment and disaggregation: give one, not both")
	}
	if err := s.validateReplicas(); err != nil {
		return err
	}
	if s.Deployment != nil {
		if err := s.Deployment.Validate("deployment"); err != nil {
			return err
		}
	} else {
		d := s.Disaggregation
		for _, p := range []struct {
			name string
			pool *Pool
		}{{"disaggregation.prefill", &d.Prefill}, {"disaggregation.decode", &d.Decode}} {
			if p.pool.Instances < 1 {
				return fmt.Errorf("%s.instances: required, an integer ≥ 1 (got %d)", p.name, p.pool.Instances)
			}
			if err := p.pool.Deployment.Validate(p.name + ".deployment"); err != nil {
				return err
			}
		}
		if t := d.KVTransfer; t != nil {
			if !(t.BandwidthGbps > 0) || math.IsInf(t.BandwidthGbps, 0) {
				return fmt.Errorf("disaggregation.kv_transfer.bandwidth_gbps: must be > 0, got %g", t.BandwidthGbps)
			}
			if !(t.LatencyMs >= 0) || math.IsInf(t.LatencyMs, 0) {
				return fmt.Errorf("disaggregation.kv_transfer.latency_ms: must be ≥ 0, got %g", t.LatencyMs)
			}
		}
	}
	if err := s.Workload.Validate(); err != nil {
		return err
	}
	return s.checkBounds()
}

// Validate checks a deployment's values; path prefixes the key names.
func (d *Deployment) Validate(path string) error {
	k := func(key string) string { return path + "." + key }
	if d.Model == "" {
		return fmt.Errorf("%s: required (a known model id or a path to a HF config.json)", k("model"))
	}
	if !contains(Dtypes, d.Dtype) {
		if strings.HasPrefix(strings.ToLower(d.Dtype), "fp8") {
			// vLLM refuses it too (--dtype has no fp8 choice): FP8 weights
			// are a quantization method.
			return fmt.Errorf("%s: must be one of %s, got %q: fp8 weights are a quantization, not a dtype; use --quantization fp8 (scenario key %s)",
				k("dtype"), strings.Join(Dtypes, ", "), d.Dtype, k("quantization"))
		}
		return fmt.Errorf("%s: must be one of %s, got %q", k("dtype"), strings.Join(Dtypes, ", "), d.Dtype)
	}
	if !contains(KVCacheDtypes, d.KVCacheDtype) {
		return fmt.Errorf("%s: must be one of %s, got %q", k("kv_cache_dtype"), strings.Join(KVCacheDtypes, ", "), d.KVCacheDtype)
	}
	for _, c := range []struct {
		key string
		v   int
	}{
		{"tensor_parallel_size", d.TensorParallelSize},
		{"pipeline_parallel_size", d.PipelineParallelSize},
		{"data_parallel_size", d.DataParallelSize},
		{"block_size", d.BlockSize},
	} {
		if c.v < 1 {
			return fmt.Errorf("%s: must be ≥ 1, got %d", k(c.key), c.v)
		}
	}
	for _, c := range []struct {
		key string
		v   int
	}{
		{"max_num_seqs", d.MaxNumSeqs},
		{"max_num_batched_tokens", d.MaxNumBatchedTokens},
		{"max_model_len", d.MaxModelLen},
	} {
		if c.v == ExplicitZero {
			return fmt.Errorf("%s: must be ≥ 1, got 0", k(c.key))
		}
		if c.v < 0 {
			return fmt.Errorf("%s: must be ≥ 1, got %d", k(c.key), c.v)
		}
	}
	if d.BlockSize%8 != 0 && d.BlockSize != 1 {
		return fmt.Errorf("%s: must be 1 or a multiple of 8 (vLLM: 8, 16, 32, 64, 128), got %d", k("block_size"), d.BlockSize)
	}
	if !(d.GPUMemoryUtilization > 0 && d.GPUMemoryUtilization <= 1) {
		return fmt.Errorf("%s: must be in (0, 1], got %g", k("gpu_memory_utilization"), d.GPUMemoryUtilization)
	}
	if d.LongPrefillTokenThreshold < 0 {
		return fmt.Errorf("%s: must be ≥ 0 (0 = off), got %d", k("long_prefill_token_threshold"), d.LongPrefillTokenThreshold)
	}
	if d.NumGPUBlocksOverride != nil && *d.NumGPUBlocksOverride < 1 {
		return fmt.Errorf("%s: must be ≥ 1 or null, got %d", k("num_gpu_blocks_override"), *d.NumGPUBlocksOverride)
	}
	if d.APIServerCount != nil && (*d.APIServerCount < 1 || *d.APIServerCount > MaxEngines) {
		return fmt.Errorf("%s: must be in [1, %d] or null (= data_parallel_size), got %d", k("api_server_count"), MaxEngines, *d.APIServerCount)
	}
	if d.All2AllBackend != "" && !contains([]string{"allgather_reducescatter", "deepep", "pplx"}, d.All2AllBackend) {
		return fmt.Errorf("%s: must be allgather_reducescatter, deepep or pplx, got %q", k("all2all_backend"), d.All2AllBackend)
	}
	if d.MoEDistribution != "" && !contains([]string{"balanced", "power_law_1.01", "power_law_1.2"}, d.MoEDistribution) {
		return fmt.Errorf("%s: must be balanced, power_law_1.01 or power_law_1.2, got %q", k("moe_distribution"), d.MoEDistribution)
	}
	for i, c := range d.CUDAGraphSizes {
		if c < 1 {
			return fmt.Errorf("%s[%d]: must be ≥ 1, got %d", k("cuda_graph_sizes"), i, c)
		}
	}
	return nil
}

// Validate checks the workload block of the chosen dataset and the arrivals.
func (w *Workload) Validate() error {
	switch w.Dataset {
	case "random":
		r := w.Random
		if r == nil {
			return errors.New("workload.random: required when dataset is random")
		}
		for _, c := range []struct {
			key string
			v   int
		}{{"num_prompts", r.NumPrompts}, {"input_len", r.InputLen}, {"output_len", r.OutputLen}} {
			if err := requiredPositive("workload.random."+c.key, c.v, r.omitted); err != nil {
				return err
			}
		}
		if !(r.RangeRatio >= 0 && r.RangeRatio < 1) {
			return fmt.Errorf("workload.random.range_ratio: must be in [0, 1), got %g", r.RangeRatio)
		}
		if r.PrefixLen < 0 {
			return fmt.Errorf("workload.random.prefix_len: must be ≥ 0, got %d", r.PrefixLen)
		}
	case "shared_prefix":
		p := w.SharedPrefix
		if p == nil {
			return errors.New("workload.shared_prefix: required when dataset is shared_prefix")
		}
		for _, c := range []struct {
			key string
			v   int
		}{
			{"num_groups", p.NumGroups}, {"num_prompts_per_group", p.NumPromptsPerGroup},
			{"question_len", p.QuestionLen}, {"output_len", p.OutputLen},
		} {
			if err := requiredPositive("workload.shared_prefix."+c.key, c.v, p.omitted); err != nil {
				return err
			}
		}
		if p.SystemPromptLen < 0 {
			return fmt.Errorf("workload.shared_prefix.system_prompt_len: must be ≥ 0, got %d", p.SystemPromptLen)
		}
		if p.PromptLen != 0 && p.PromptLen < p.SystemPromptLen+1 {
			return fmt.Errorf("workload.shared_prefix.prompt_len: must be > system_prompt_len (%d) or omitted, got %d", p.SystemPromptLen, p.PromptLen)
		}
	case "trace":
		if w.Trace == nil || w.Trace.Path == "" {
			return errors.New("workload.trace.path: required when dataset is trace")
		}
	case "sessions":
		if w.Sessions == nil {
			return errors.New("workload.sessions: required when dataset is sessions")
		}
		if err := w.Sessions.Validate(&w.Arrivals); err != nil {
			return err
		}
	case "lengths":
		if err := w.Lengths.Validate(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("workload.dataset: must be one of %s, got %q", strings.Join(Datasets, ", "), w.Dataset)
	}
	if err := w.validateClasses(); err != nil {
		return err
	}
	return w.Arrivals.Validate()
}

// Validate checks the arrival process.
func (a *Arrivals) Validate() error {
	r := float64(a.RequestRate)
	if math.IsNaN(r) || r <= 0 {
		return fmt.Errorf("workload.arrivals.request_rate: must be > 0 requests/s or inf, got %g", r)
	}
	if !(a.Burstiness > 0) || math.IsInf(a.Burstiness, 0) {
		return fmt.Errorf("workload.arrivals.burstiness: must be > 0 (1 = Poisson), got %g", a.Burstiness)
	}
	if a.MaxConcurrency != nil && *a.MaxConcurrency < 1 {
		return fmt.Errorf("workload.arrivals.max_concurrency: must be ≥ 1 or null, got %d", *a.MaxConcurrency)
	}
	for i, st := range a.Stages {
		if !(st.Rate > 0) || math.IsInf(st.Rate, 0) {
			return fmt.Errorf("workload.arrivals.stages[%d].rate: must be > 0 requests/s, got %g", i, st.Rate)
		}
		if !(st.DurationS > 0) || math.IsInf(st.DurationS, 0) {
			return fmt.Errorf("workload.arrivals.stages[%d].duration_s: must be > 0 s, got %g", i, st.DurationS)
		}
		if st.Rate*st.DurationS < 1 {
			return fmt.Errorf("workload.arrivals.stages[%d]: rate × duration_s must be ≥ 1 request, got %g", i, st.Rate*st.DurationS)
		}
	}
	if a.TimeoutS != nil && (!(*a.TimeoutS > 0) || math.IsInf(*a.TimeoutS, 0)) {
		return fmt.Errorf("workload.arrivals.timeout_s: must be > 0 s or null, got %g", *a.TimeoutS)
	}
	return nil
}

// requiredPositive is positive for a required key, which says "required"
// when the YAML left it out (and nothing set it since).
func requiredPositive(key string, v int, omitted []string) error {
	if v == 0 && slices.Contains(omitted, key[strings.LastIndexByte(key, '.')+1:]) {
		return fmt.Errorf("%s: required (an integer ≥ 1)", key)
	}
	return positive(key, v)
}

func positive(key string, v int) error {
	if v < 1 {
		return fmt.Errorf("%s: must be ≥ 1, got %d", key, v)
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
