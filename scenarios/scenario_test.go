package scenarios

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// parseValid parses and validates, returning the first error of either.
func parseValid(text string) (*Scenario, error) {
	s, err := Parse([]byte(text))
	if err != nil {
		return nil, err
	}
	return s, s.Validate()
}

// doc builds a small valid scenario; deployment lines are indented under
// deployment (after model), workload is the whole workload block body.
func doc(deployment, workload string) string {
	var b strings.Builder
	b.WriteString("hardware: h200-sxm\ndeployment:\n  model: meta-llama/Llama-3.1-8B-Instruct\n")
	for _, l := range strings.Split(strings.TrimSpace(deployment), "\n") {
		if l != "" {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("workload:\n")
	if workload == "" {
		workload = "random: {num_prompts: 10, input_len: 64, output_len: 8}"
	}
	for _, l := range strings.Split(strings.TrimSpace(workload), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func TestGateScenariosLoadAndValidate(t *testing.T) {
	files, err := filepath.Glob("gate/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 12, "one scenario per measured run")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Load(f)
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Equal(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), s.Name)
			assert.Equal(t, "h100-sxm", s.Hardware)
			require.NotNil(t, s.Deployment)
			assert.Equal(t, "shared_prefix", s.Workload.Dataset)
			require.NotNil(t, s.Workload.SharedPrefix)
			assert.Equal(t, 10, s.Workload.SharedPrefix.NumGroups)
			assert.Equal(t, 10, s.Workload.SharedPrefix.NumPromptsPerGroup)
			assert.NotEmpty(t, s.Workload.Arrivals.Stages)
			require.NotNil(t, s.Workload.Arrivals.TimeoutS)
			assert.Equal(t, 300.0, *s.Workload.Arrivals.TimeoutS)
			require.NotNil(t, s.GroundTruth)
			assert.Equal(t, "inference-perf", s.GroundTruth.Format)
			assert.Equal(t, "gate", filepath.Base(s.Dir))
			// keys the gate files omit take vLLM's defaults
			assert.Equal(t, DefaultBlockSize, s.Deployment.BlockSize)
			assert.Equal(t, DefaultGPUMemoryUtilization, s.Deployment.GPUMemoryUtilization)
			assert.True(t, s.Deployment.PrefixCaching())
		})
	}
}

func TestDefaultsForOmittedKeys(t *testing.T) {
	s, err := parseValid(doc("", ""))
	require.NoError(t, err)
	d := s.Deployment
	assert.Equal(t, 16, d.BlockSize)
	assert.Equal(t, 0.9, d.GPUMemoryUtilization)
	assert.True(t, d.PrefixCaching())
	assert.True(t, d.Async())
	assert.Equal(t, "auto", d.Dtype)
	assert.Equal(t, "auto", d.KVCacheDtype)
	assert.Equal(t, 1, d.TensorParallelSize)
	assert.Equal(t, 1, d.PipelineParallelSize)
	assert.Equal(t, 1, d.DataParallelSize)
	assert.False(t, d.EnforceEager)
	assert.Nil(t, d.NumGPUBlocksOverride)
	assert.Nil(t, d.CUDAGraphSizes)
	// 0 = resolved later from the GPU (1024, 8192) and the model's config
	assert.Zero(t, d.MaxNumSeqs)
	assert.Zero(t, d.MaxNumBatchedTokens)
	assert.Zero(t, d.MaxModelLen)

	w := s.Workload
	assert.Equal(t, "random", w.Dataset)
	assert.Zero(t, w.Seed)
	assert.True(t, math.IsInf(float64(w.Arrivals.RequestRate), 1))
	assert.Equal(t, 1.0, w.Arrivals.Burstiness)
	assert.Nil(t, w.Arrivals.MaxConcurrency)
	assert.Nil(t, w.Arrivals.TimeoutS)
	assert.Nil(t, w.Arrivals.Stages)
	assert.Equal(t, 0.0, w.Random.RangeRatio)
}

func TestDefaultsWithPartialArrivalsAndNulls(t *testing.T) {
	// An arrivals block that sets one key keeps the others' defaults; an
	// explicit null for a limit means "default" like an omitted key.
	s, err := parseValid(doc("max_num_seqs: null\nmax_model_len: ~\nnum_gpu_blocks_override: null",
		"random: {num_prompts: 10, input_len: 64, output_len: 8}\narrivals: {max_concurrency: 4}"))
	require.NoError(t, err)
	assert.Zero(t, s.Deployment.MaxNumSeqs)
	assert.Zero(t, s.Deployment.MaxModelLen)
	assert.True(t, math.IsInf(float64(s.Workload.Arrivals.RequestRate), 1))
	assert.Equal(t, 1.0, s.Workload.Arrivals.Burstiness)
	require.NotNil(t, s.Workload.Arrivals.MaxConcurrency)
	assert.Equal(t, 4, *s.Workload.Arrivals.MaxConcurrency)
}

func TestDisaggregationPoolsTakeDefaults(t *testing.T) {
	s, err := parseValid(`hardware: h100-sxm
disaggregation:
  prefill: {instances: 2, deployment: {model: meta-llama/Llama-2-7b-hf, tensor_parallel_size: 2}}
  decode:  {instances: 1, deployment: {model: meta-llama/Llama-2-7b-hf, max_num_seqs: 0}}
workload:
  random: {num_prompts: 10, input_len: 64, output_len: 8}
`)
	require.EqualError(t, err, "disaggregation.decode.deployment.max_num_seqs: must be ≥ 1, got 0")
	assert.Equal(t, 16, s.Disaggregation.Prefill.Deployment.BlockSize)
	assert.Equal(t, 2, s.Disaggregation.Prefill.Deployment.TensorParallelSize)
	assert.True(t, s.Disaggregation.Decode.Deployment.PrefixCaching())
}

func TestExplicitValuesOverrideDefaults(t *testing.T) {
	s, err := parseValid(doc(`
max_num_seqs: 64
max_num_batched_tokens: 4096
max_model_len: 8192
block_size: 32
gpu_memory_utilization: 0.85
enable_prefix_caching: false
async_scheduling: false
enforce_eager: true
kv_cache_dtype: fp8
cuda_graph_sizes: [1, 2, 4, 8]
num_gpu_blocks_override: 1000`, `
seed: 7
random: {num_prompts: 10, input_len: 64, output_len: 8, range_ratio: 0.5}
arrivals: {request_rate: 2.5, burstiness: 0.5, timeout_s: 30}`))
	require.NoError(t, err)
	d := s.Deployment
	assert.Equal(t, 64, d.MaxNumSeqs)
	assert.Equal(t, 4096, d.MaxNumBatchedTokens)
	assert.Equal(t, 8192, d.MaxModelLen)
	assert.Equal(t, 32, d.BlockSize)
	assert.Equal(t, 0.85, d.GPUMemoryUtilization)
	assert.False(t, d.PrefixCaching())
	assert.False(t, d.Async())
	assert.True(t, d.EnforceEager)
	assert.Equal(t, "fp8", d.KVCacheDtype)
	assert.Equal(t, []int{1, 2, 4, 8}, d.CUDAGraphSizes)
	require.NotNil(t, d.NumGPUBlocksOverride)
	assert.Equal(t, 1000, *d.NumGPUBlocksOverride)
	a := s.Workload.Arrivals
	assert.Equal(t, int64(7), s.Workload.Seed)
	assert.Equal(t, Rate(2.5), a.RequestRate)
	assert.Equal(t, 0.5, a.Burstiness)
	assert.Equal(t, 30.0, *a.TimeoutS)
	assert.Equal(t, 0.5, s.Workload.Random.RangeRatio)
}

func TestRequestRateSpellings(t *testing.T) {
	for _, v := range []string{"inf", "Inf", "INF", ".inf", "+.inf", "+inf", `"inf"`} {
		t.Run(v, func(t *testing.T) {
			s, err := parseValid(doc("", "random: {num_prompts: 1, input_len: 8, output_len: 8}\narrivals: {request_rate: "+v+"}"))
			require.NoError(t, err)
			assert.True(t, math.IsInf(float64(s.Workload.Arrivals.RequestRate), 1))
		})
	}
	s, err := parseValid(doc("", "random: {num_prompts: 1, input_len: 8, output_len: 8}\narrivals: {request_rate: 3}"))
	require.NoError(t, err)
	assert.Equal(t, Rate(3), s.Workload.Arrivals.RequestRate)
}

func TestRateMarshalsInf(t *testing.T) {
	out, err := yaml.Marshal(struct {
		R Rate `yaml:"r"`
		S Rate `yaml:"s"`
	}{Rate(math.Inf(1)), 4})
	require.NoError(t, err)
	assert.Equal(t, "r: inf\ns: 4\n", string(out))
}

func TestBadScenarios(t *testing.T) {
	rnd := "random: {num_prompts: 10, input_len: 64, output_len: 8}\n"
	cases := []struct {
		name string
		yaml string
		want string // the error's start: the key path, then what is allowed
		// contains lists further substrings (e.g. the allowed keys)
		contains []string
	}{
		{"max_num_seqs 0", doc("max_num_seqs: 0", ""), "deployment.max_num_seqs: must be ≥ 1, got 0", nil},
		{"max_num_batched_tokens 0", doc("max_num_batched_tokens: 0", ""), "deployment.max_num_batched_tokens: must be ≥ 1, got 0", nil},
		{"max_model_len 0", doc("max_model_len: 0", ""), "deployment.max_model_len: must be ≥ 1, got 0", nil},
		{"max_num_seqs negative", doc("max_num_seqs: -3", ""), "deployment.max_num_seqs: must be ≥ 1, got -3", nil},
		{"tensor_parallel_size 0", doc("tensor_parallel_size: 0", ""), "deployment.tensor_parallel_size: must be ≥ 1, got 0", nil},
		{"unknown deployment key", doc("max_num_seq: 8", ""), "deployment.max_num_seq: unknown key", []string{"allowed:", "max_num_seqs", "async_scheduling"}},
		{"unknown top-level key", "hardwar: h100-sxm\n", "hardwar: unknown key", []string{"hardware"}},
		{"unknown arrivals key", doc("", rnd+"arrivals: {rate: 5}"), "workload.arrivals.rate: unknown key", []string{"request_rate"}},
		{"unknown stage key", doc("", rnd+"arrivals: {stages: [{rate: 5, duration: 10}]}"), "workload.arrivals.stages[0].duration: unknown key", []string{"duration_s"}},
		{"wrong type int", doc("tensor_parallel_size: two", ""), `deployment.tensor_parallel_size: must be an integer, got "two"`, nil},
		{"wrong type float for int", doc("max_num_seqs: 1.5", ""), `deployment.max_num_seqs: must be an integer, got "1.5"`, nil},
		{"wrong type bool", doc("enable_prefix_caching: yes", ""), `deployment.enable_prefix_caching: must be true or false, got "yes"`, nil},
		{"wrong type number", doc("gpu_memory_utilization: high", ""), `deployment.gpu_memory_utilization: must be a number, got "high"`, nil},
		{"wrong type rate", doc("", rnd+"arrivals: {request_rate: fast}"), `workload.arrivals.request_rate: must be a number of requests/s or inf, got "fast"`, nil},
		{"wrong type list", doc("", rnd+"arrivals: {stages: 5}"), "workload.arrivals.stages: must be a list", nil},
		{"wrong type mapping", doc("", "random: 5"), "workload.random: must be a mapping of keys", nil},
		{"not a mapping", "- a\n- b\n", "scenario: must be a mapping of keys", nil},
		{"negative rate", doc("", rnd+"arrivals: {request_rate: -1}"), "workload.arrivals.request_rate: must be > 0 requests/s or inf, got -1", nil},
		{"zero rate", doc("", rnd+"arrivals: {request_rate: 0}"), "workload.arrivals.request_rate: must be > 0 requests/s or inf, got 0", nil},
		{"nan rate", doc("", rnd+"arrivals: {request_rate: .nan}"), "workload.arrivals.request_rate: must be > 0 requests/s or inf, got NaN", nil},
		{"burstiness 0", doc("", rnd+"arrivals: {request_rate: 4, burstiness: 0}"), "workload.arrivals.burstiness: must be > 0 (1 = Poisson), got 0", nil},
		{"burstiness nan", doc("", rnd+"arrivals: {request_rate: 4, burstiness: .nan}"), "workload.arrivals.burstiness: must be > 0 (1 = Poisson), got NaN", nil},
		{"max_concurrency 0", doc("", rnd+"arrivals: {max_concurrency: 0}"), "workload.arrivals.max_concurrency: must be ≥ 1 or null, got 0", nil},
		{"timeout 0", doc("", rnd+"arrivals: {timeout_s: 0}"), "workload.arrivals.timeout_s: must be > 0 s or null, got 0", nil},
		{"timeout nan", doc("", rnd+"arrivals: {timeout_s: .nan}"), "workload.arrivals.timeout_s: must be > 0 s or null, got NaN", nil},
		{"stage duration 0", doc("", rnd+"arrivals: {stages: [{rate: 5, duration_s: 60}, {rate: 5, duration_s: 0}]}"), "workload.arrivals.stages[1].duration_s: must be > 0 s, got 0", nil},
		{"stage rate negative", doc("", rnd+"arrivals: {stages: [{rate: -5, duration_s: 60}]}"), "workload.arrivals.stages[0].rate: must be > 0 requests/s, got -5", nil},
		{"stage rate nan", doc("", rnd+"arrivals: {stages: [{rate: .nan, duration_s: 60}]}"), "workload.arrivals.stages[0].rate: must be > 0 requests/s, got NaN", nil},
		{"stage under one request", doc("", rnd+"arrivals: {stages: [{rate: 0.1, duration_s: 5}]}"), "workload.arrivals.stages[0]: rate × duration_s must be ≥ 1 request, got 0.5", nil},
		{"dataset unknown", doc("", "dataset: sharegpt"), `workload.dataset: must be one of random, shared_prefix, trace, sessions, lengths, got "sharegpt"`, nil},
		{"random without block", doc("", "dataset: random"), "workload.random: required when dataset is random", nil},
		{"shared_prefix without block", doc("", "dataset: shared_prefix\n"+rnd), "workload.shared_prefix: required when dataset is shared_prefix", nil},
		{"trace without path", doc("", "dataset: trace\ntrace: {}"), "workload.trace.path: required when dataset is trace", nil},
		{"num_prompts 0", doc("", "random: {num_prompts: 0, input_len: 64, output_len: 8}"), "workload.random.num_prompts: must be ≥ 1, got 0", nil},
		// newcomer2 H2: an omitted required key said "must be ≥ 1, got 0"
		{"output_len omitted", doc("", "random: {num_prompts: 100, input_len: 512}"), "workload.random.output_len: required (an integer ≥ 1)", nil},
		{"num_prompts omitted", doc("", "random: {input_len: 512, output_len: 8}"), "workload.random.num_prompts: required (an integer ≥ 1)", nil},
		{"question_len omitted", doc("", "dataset: shared_prefix\nshared_prefix: {num_groups: 1, num_prompts_per_group: 1, output_len: 8}"), "workload.shared_prefix.question_len: required (an integer ≥ 1)", nil},
		{"range_ratio 1", doc("", "random: {num_prompts: 1, input_len: 64, output_len: 8, range_ratio: 1}"), "workload.random.range_ratio: must be in [0, 1), got 1", nil},
		{"range_ratio nan", doc("", "random: {num_prompts: 1, input_len: 64, output_len: 8, range_ratio: .nan}"), "workload.random.range_ratio: must be in [0, 1), got NaN", nil},
		{"shared_prefix prompt_len too small", doc("", "dataset: shared_prefix\nshared_prefix: {num_groups: 1, num_prompts_per_group: 1, system_prompt_len: 100, question_len: 10, output_len: 8, prompt_len: 50}"),
			"workload.shared_prefix.prompt_len: must be > system_prompt_len (100) or omitted, got 50", nil},
		{"shared_prefix groups 0", doc("", "dataset: shared_prefix\nshared_prefix: {num_groups: 0, num_prompts_per_group: 1, system_prompt_len: 100, question_len: 10, output_len: 8}"),
			"workload.shared_prefix.num_groups: must be ≥ 1, got 0", nil},
		{"gpu_memory_utilization over 1", doc("gpu_memory_utilization: 1.5", ""), "deployment.gpu_memory_utilization: must be in (0, 1], got 1.5", nil},
		{"gpu_memory_utilization nan", doc("gpu_memory_utilization: .nan", ""), "deployment.gpu_memory_utilization: must be in (0, 1], got NaN", nil},
		{"block_size 12", doc("block_size: 12", ""), "deployment.block_size: must be 1 or a multiple of 8 (vLLM: 8, 16, 32, 64, 128), got 12", nil},
		{"dtype", doc("dtype: int4", ""), `deployment.dtype: must be one of auto, bfloat16, float16, half, got "int4"`, nil},
		{"kv_cache_dtype", doc("kv_cache_dtype: int8", ""), `deployment.kv_cache_dtype: must be one of auto, bfloat16, float16, fp8, fp8_e4m3, got "int8"`, nil},
		{"num_gpu_blocks_override 0", doc("num_gpu_blocks_override: 0", ""), "deployment.num_gpu_blocks_override: must be ≥ 1 or null, got 0", nil},
		{"cuda_graph_sizes 0", doc("cuda_graph_sizes: [8, 0]", ""), "deployment.cuda_graph_sizes[1]: must be ≥ 1, got 0", nil},
		{"long_prefill negative", doc("long_prefill_token_threshold: -1", ""), "deployment.long_prefill_token_threshold: must be ≥ 0 (0 = off), got -1", nil},
		{"model missing", "hardware: h100-sxm\ndeployment: {tensor_parallel_size: 1}\nworkload: {" + strings.TrimSpace(rnd) + "}\n", "deployment.model: required (a known model id or a path to a HF config.json)", nil},
		{"hardware missing", "deployment: {model: x}\n", "hardware: required (a GPU preset: frontier hardware lists them)", nil},
		{"deployment missing", "hardware: h100-sxm\n", "deployment: required (or disaggregation)", nil},
		{"both deployments", "hardware: h100-sxm\ndeployment: {model: x}\ndisaggregation: {prefill: {instances: 1}, decode: {instances: 1}}\n", "deployment and disaggregation: give one, not both", nil},
		{"disaggregation instances 0", "hardware: h100-sxm\ndisaggregation: {prefill: {instances: 0, deployment: {model: x}}, decode: {instances: 1, deployment: {model: x}}}\n", "disaggregation.prefill.instances: required, an integer ≥ 1 (got 0)", nil},
		{"kv_transfer bandwidth 0", "hardware: h100-sxm\ndisaggregation: {prefill: {instances: 1, deployment: {model: x}}, decode: {instances: 1, deployment: {model: x}}, kv_transfer: {bandwidth_gbps: 0}}\n", "disaggregation.kv_transfer.bandwidth_gbps: must be > 0, got 0", nil},
		{"malformed YAML", "hardware: [h100\n", "malformed YAML:", nil},
		{"malformed indentation", "hardware: h100-sxm\n deployment: x\n", "malformed YAML:", nil},
		{"duplicate key", "hardware: h100-sxm\nhardware: h200-sxm\n", "malformed YAML:", []string{"already defined"}},
		{"empty file", "", "empty file: no YAML document", nil},
		{"blank file", "  \n\n", "empty file: no YAML document", nil},
		{"comments only", "# nothing here\n", "empty file: no YAML document", nil},
		{"empty document", "---\n", "empty file: no YAML document", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = parseValid(c.yaml) })
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "got %q, want it to start with %q", err.Error(), c.want)
			assert.NotContains(t, err.Error(), "EOF")
			for _, s := range c.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// TestExplicitZeroLimits pins the exact message for an explicit 0 of the
// limits whose omission means "vLLM's default".
func TestExplicitZeroLimits(t *testing.T) {
	for _, key := range []string{"max_num_seqs", "max_num_batched_tokens", "max_model_len"} {
		_, err := parseValid(doc(key+": 0", ""))
		assert.EqualError(t, err, "deployment."+key+": must be ≥ 1, got 0")
		s, err := parseValid(doc(key+": 7", ""))
		require.NoError(t, err)
		assert.Equal(t, 7, map[string]int{"max_num_seqs": s.Deployment.MaxNumSeqs,
			"max_num_batched_tokens": s.Deployment.MaxNumBatchedTokens, "max_model_len": s.Deployment.MaxModelLen}[key])
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(good, []byte(doc("", "dataset: trace\ntrace: {path: reqs.csv}")), 0o644))
	s, err := Load(good)
	require.NoError(t, err)
	require.NoError(t, s.Validate())
	assert.Equal(t, dir, s.Dir)
	assert.Equal(t, filepath.Join(dir, "reqs.csv"), s.Resolve(s.Workload.Trace.Path))
	assert.Equal(t, "/abs/reqs.csv", s.Resolve("/abs/reqs.csv"))
	assert.Equal(t, "", s.Resolve(""))

	empty := filepath.Join(dir, "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = Load(empty)
	require.Error(t, err)
	assert.Contains(t, err.Error(), empty)
	assert.Contains(t, err.Error(), "empty file")

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "read scenario")
}

func TestFlagScenarioWithoutDir(t *testing.T) {
	d := DefaultDeployment()
	d.Model = "m"
	s := &Scenario{Hardware: "h100-sxm", Deployment: &d, Workload: Workload{Dataset: "random",
		Random: &RandomData{NumPrompts: 1, InputLen: 1, OutputLen: 1}, Arrivals: DefaultArrivals()}}
	require.NoError(t, s.Validate())
	assert.Equal(t, "rel/x.csv", s.Resolve("rel/x.csv"), "no scenario file: paths stay relative to the working directory")
	d.MaxNumSeqs = ExplicitZero
	assert.EqualError(t, s.Validate(), "deployment.max_num_seqs: must be ≥ 1, got 0")
}
