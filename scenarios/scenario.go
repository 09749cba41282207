package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"

	"gopkg.in/yaml.v3"
)

// Scenario is one deployment and one workload (SCENARIO.md).
type Scenario struct {
	Name        string  `yaml:"name"`
	Hardware    string  `yaml:"hardware"`
	Profiles    *string `yaml:"profiles"`    // table folder; nil = default set for the hardware
	Calibration *string `yaml:"calibration"` // host-overhead fit file; nil = default
	// Predictor is how the operator tables are read: interp (default:
	// interpolation between measured rows) or regression (per-series
	// regressions on physical features, predictor.RegressionTables).
	Predictor string `yaml:"predictor"`

	// Router is how requests are spread over engines (DP ranks, or the
	// instances of a disaggregated pool): least_loaded (default; vLLM's DP
	// front end balances by queue lengths) or round_robin.
	Router string `yaml:"router"`
	// Replicas puts several independent copies of the deployment behind
	// an external router (added; nil = one).
	Replicas *Replicas `yaml:"replicas"`

	// VLLMVersion picks the vLLM version of the operator tables
	// (`frontier hardware` lists the embedded ones per GPU); "" = the
	// hardware's default set. With profiles, the version folders of that
	// aiconfigurator folder.
	VLLMVersion string `yaml:"vllm_version"`

	Deployment     *Deployment     `yaml:"deployment"`
	Disaggregation *Disaggregation `yaml:"disaggregation"`
	Workload       Workload        `yaml:"workload"`
	GroundTruth    *GroundTruth    `yaml:"ground_truth"`

	// Dir is the folder of the scenario file; relative paths resolve
	// against it. Empty for scenarios built from flags (resolve against
	// the working directory).
	Dir string `yaml:"-"`
}

// Deployment is one co-located vLLM deployment: the `vllm serve` flags that
// change serving, with vLLM's defaults for omitted keys.
type Deployment struct {
	Model string `yaml:"model"`
	Dtype string `yaml:"dtype"` // auto = config.json torch_dtype
	// Quantization is vLLM's --quantization: "" = the checkpoint's
	// quantization_config (if any); fp8 quantizes a 16-bit checkpoint
	// online; another method must match the checkpoint's.
	Quantization              string  `yaml:"quantization"`
	TensorParallelSize        int     `yaml:"tensor_parallel_size"`
	PipelineParallelSize      int     `yaml:"pipeline_parallel_size"`
	DataParallelSize          int     `yaml:"data_parallel_size"`
	EnableExpertParallel      bool    `yaml:"enable_expert_parallel"`
	MaxNumSeqs                int     `yaml:"max_num_seqs"`           // 0 = GPU-dependent default
	MaxNumBatchedTokens       int     `yaml:"max_num_batched_tokens"` // 0 = GPU-dependent default
	MaxModelLen               int     `yaml:"max_model_len"`          // 0 = vLLM's derived length (profiles.ModelSpec.MaxModelLen)
	GPUMemoryUtilization      float64 `yaml:"gpu_memory_utilization"`
	BlockSize                 int     `yaml:"block_size"`
	EnablePrefixCaching       *bool   `yaml:"enable_prefix_caching"`
	LongPrefillTokenThreshold int     `yaml:"long_prefill_token_threshold"`
	EnforceEager              bool    `yaml:"enforce_eager"`
	KVCacheDtype              string  `yaml:"kv_cache_dtype"`
	NumGPUBlocksOverride      *int    `yaml:"num_gpu_blocks_override"`
	CUDAGraphSizes            []int   `yaml:"cuda_graph_sizes"` // nil = vLLM's default capture sizes
	// AsyncScheduling mirrors --async-scheduling / --no-async-scheduling
	// (nil = on, vLLM's default since about 0.12).
	AsyncScheduling *bool `yaml:"async_scheduling"`
	// APIServerCount is --api-server-count: API server processes in front
	// of the engines (nil = vLLM's default, data_parallel_size).
	APIServerCount *int `yaml:"api_server_count"`
	// All2AllBackend is VLLM_ALL2ALL_BACKEND for MoE dispatch/combine:
	// allgather_reducescatter (default) | deepep | pplx.
	All2AllBackend string `yaml:"all2all_backend"`
	// SchedulingPolicy is --scheduling-policy: the engine core's order of
	// admission and choice of preemption victim, fcfs (vLLM's default,
	// "" = fcfs) or priority; sim/engine registers the names.
	SchedulingPolicy string `yaml:"scheduling_policy"`
	// MoEDistribution is the expert routing priced: balanced (default),
	// power_law_1.01 or power_law_1.2 (skewed; the slowest rank sets the
	// layer time), as in the MoE tables.
	MoEDistribution string `yaml:"moe_distribution"`
}

// Disaggregation is a prefill/decode disaggregated deployment.
type Disaggregation struct {
	Prefill    Pool        `yaml:"prefill"`
	Decode     Pool        `yaml:"decode"`
	KVTransfer *KVTransfer `yaml:"kv_transfer"`
}

// Pool is a set of identical instances of one deployment.
type Pool struct {
	Instances  int        `yaml:"instances"`
	Hardware   string     `yaml:"hardware"` // "" = the scenario's hardware
	Deployment Deployment `yaml:"deployment"`
}

// KVTransfer prices the KV connector link; nil = from the hardware spec.
type KVTransfer struct {
	BandwidthGbps float64 `yaml:"bandwidth_gbps"` // gigabytes per second
	LatencyMs     float64 `yaml:"latency_ms"`     // per message
}

// Workload is what the client sends.
type Workload struct {
	Seed         int64         `yaml:"seed"`
	Dataset      string        `yaml:"dataset"` // random | shared_prefix | trace | sessions | lengths
	Random       *RandomData   `yaml:"random"`
	SharedPrefix *SharedPrefix `yaml:"shared_prefix"`
	Trace        *TraceData    `yaml:"trace"`
	Sessions     *Sessions     `yaml:"sessions"`
	Lengths      *LengthsData  `yaml:"lengths"`
	Arrivals     Arrivals      `yaml:"arrivals"`
	// Classes is a mix of request classes (priorities and, for the random
	// dataset, lengths); nil = one class of priority 0.
	Classes []RequestClass `yaml:"classes"`
}

// RandomData is `vllm bench serve --dataset-name random`.
type RandomData struct {
	NumPrompts int     `yaml:"num_prompts"`
	InputLen   int     `yaml:"input_len"`   // tokens
	OutputLen  int     `yaml:"output_len"`  // tokens
	RangeRatio float64 `yaml:"range_ratio"` // lengths uniform in len×[1−r, 1+r]
	// PrefixLen is bench serve's --random-prefix-len: tokens of one random
	// prefix shared by every prompt, before its input_len tokens.
	PrefixLen int `yaml:"prefix_len"`
	// omitted lists the required keys the YAML block left out, so that
	// Validate says "required" rather than "got 0".
	omitted []string
}

// SharedPrefix is inference-perf's shared_prefix data generator.
type SharedPrefix struct {
	NumGroups          int `yaml:"num_groups"`
	NumPromptsPerGroup int `yaml:"num_prompts_per_group"`
	SystemPromptLen    int `yaml:"system_prompt_len"` // tokens shared by a group
	QuestionLen        int `yaml:"question_len"`      // unique tokens per prompt
	OutputLen          int `yaml:"output_len"`        // tokens generated (ignore_eos)
	// PromptLen is the measured prompt length (system + question +
	// template), tokens; 0 = system_prompt_len + question_len.
	PromptLen int      `yaml:"prompt_len"`
	omitted   []string // required keys the YAML block left out (RandomData.omitted)
}

// TraceData replays requests from a CSV file.
type TraceData struct {
	Path string `yaml:"path"` // columns: arrival_s, prompt_tokens, output_tokens[, prefix_group, prefix_tokens]
}

// Arrivals says when requests are sent.
type Arrivals struct {
	RequestRate    Rate     `yaml:"request_rate"` // requests/s; +Inf = all at t=0
	Burstiness     float64  `yaml:"burstiness"`   // gamma shape; 1 = Poisson
	MaxConcurrency *int     `yaml:"max_concurrency"`
	Stages         []Stage  `yaml:"stages"`
	TimeoutS       *float64 `yaml:"timeout_s"` // client timeout, seconds; nil = none
}

// Stage is one inference-perf load stage: rate × duration requests with
// exponential gaps rescaled to the duration.
type Stage struct {
	Rate      float64 `yaml:"rate"`       // requests/s
	DurationS float64 `yaml:"duration_s"` // seconds
}

// GroundTruth points a gate cell at measured results.
type GroundTruth struct {
	Format string `yaml:"format"` // inference-perf | vllm-bench-serve
	Path   string `yaml:"path"`
	Stages any    `yaml:"stages"` // "all" or a list of stage indices
}

// Rate is a request rate that accepts `inf` in YAML.
type Rate float64

// UnmarshalYAML accepts a number or inf/.inf.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "inf", "Inf", "INF", ".inf", ".Inf", "+inf", "+.inf":
		*r = Rate(math.Inf(1))
		return nil
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return fmt.Errorf("must be a number of requests/s or inf, got %q", n.Value)
	}
	*r = Rate(f)
	return nil
}

// MarshalYAML writes +Inf as inf.
func (r Rate) MarshalYAML() (any, error) {
	if math.IsInf(float64(r), 1) {
		return "inf", nil
	}
	return float64(r), nil
}

// Load reads, defaults and validates a scenario file. Unknown keys, wrong
// types and out-of-range values are errors naming the key path.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	s.Dir = filepath.Dir(path)
	return s, nil
}

// errEmpty replaces yaml.v3's bare "EOF" for a file with no document.
var errEmpty = errors.New("empty file: no YAML document (want at least hardware, deployment and workload)")

// Parse decodes a scenario from YAML bytes and applies defaults, without
// validating (call Validate after any flag overrides).
func Parse(data []byte) (*Scenario, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errEmpty
		}
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	if len(root.Content) == 0 || root.Content[0].Tag == "!!null" {
		return nil, errEmpty
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("more than one YAML document (---): a scenario is one document")
	}
	if err := checkKeys(&root, reflect.TypeOf(Scenario{}), ""); err != nil {
		return nil, err
	}
	s := &Scenario{Workload: Workload{Dataset: "random", Arrivals: DefaultArrivals()}}
	if err := root.Decode(s); err != nil {
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	return s, nil
}

// Resolve returns p relative to the scenario's folder when p is relative.
func (s *Scenario) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || s.Dir == "" {
		return p
	}
	return filepath.Join(s.Dir, p)
}
