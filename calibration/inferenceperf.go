package calibration

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// DefaultRequestTimeoutS is the client timeout, s, of a run whose
// results/config.yaml says `request_timeout: null`: inference-perf then
// leaves its HTTP client (aiohttp) at its default total timeout of 300 s.
// Every failed request in the shipped runs failed at 300–301 s, which
// confirms it.
const DefaultRequestTimeoutS = 300.0

// LoadStage is one stage of an inference-perf constant-rate load as the
// client ran it: Rate × DurationS requests with exponential gaps rescaled to
// DurationS.
type LoadStage struct {
	// Rate is the requested arrival rate, requests/s.
	Rate float64
	// DurationS is the stage's send duration, s.
	DurationS float64
}

// InferencePerfRun is one measured vLLM run driven by inference-perf: what
// was deployed, what the client sent, and what it measured per stage.
type InferencePerfRun struct {
	// Dir is the run folder as given to ReadInferencePerf; Name its base
	// name (for example 20260217-155451-llama-2-7b-tp1-codegen).
	Dir  string
	Name string

	// From exp-config.yaml: the `vllm serve` arguments that were set.
	Model               string // HuggingFace model id
	TensorParallelism   int
	MaxModelLen         int // tokens
	MaxNumBatchedTokens int // tokens per step
	MaxNumSeqs          int

	// From results/config.yaml (the client as it actually ran; profile.yaml
	// is the client as requested and is not read).
	DataType           string // data.type, e.g. shared_prefix
	NumGroups          int    // data.shared_prefix.num_groups
	NumPromptsPerGroup int    // data.shared_prefix.num_prompts_per_group
	SystemPromptLen    int    // tokens, shared by a group
	QuestionLen        int    // tokens, unique per prompt
	OutputLen          int    // tokens requested per request
	LoadType           string // load.type, e.g. constant
	IntervalS          float64
	LoadStages         []LoadStage
	// RequestTimeoutS is load.request_timeout, s; DefaultRequestTimeoutS
	// when the file says null.
	RequestTimeoutS float64
	IgnoreEOS       bool // server.ignore_eos

	// Stages holds results/stage_N_lifecycle_metrics.json for N = 0, 1, …
	// in order, one per LoadStages entry.
	Stages []StageTruth
	// Summary is results/summary_lifecycle_metrics.json: all stages
	// together (Index -1, Rate and DurationS 0).
	Summary StageTruth
}

// expConfig mirrors exp-config.yaml.
type expConfig struct {
	Model               string `yaml:"model"`
	TensorParallelism   int    `yaml:"tensor_parallelism"`
	MaxModelLen         int    `yaml:"max_model_len"`
	MaxNumBatchedTokens int    `yaml:"max_num_batched_tokens"`
	MaxNumSeqs          int    `yaml:"max_num_seqs"`
}

// clientConfig mirrors the parts of results/config.yaml that the gate reads.
type clientConfig struct {
	Data struct {
		Type         string `yaml:"type"`
		SharedPrefix *struct {
			NumGroups          int `yaml:"num_groups"`
			NumPromptsPerGroup int `yaml:"num_prompts_per_group"`
			SystemPromptLen    int `yaml:"system_prompt_len"`
			QuestionLen        int `yaml:"question_len"`
			OutputLen          int `yaml:"output_len"`
		} `yaml:"shared_prefix"`
	} `yaml:"data"`
	Load struct {
		Type     string  `yaml:"type"`
		Interval float64 `yaml:"interval"`
		Stages   []struct {
			Rate     float64 `yaml:"rate"`
			Duration float64 `yaml:"duration"`
		} `yaml:"stages"`
		RequestTimeout *float64 `yaml:"request_timeout"`
	} `yaml:"load"`
	Server struct {
		IgnoreEOS bool `yaml:"ignore_eos"`
	} `yaml:"server"`
}

// ReadInferencePerf reads one inference-perf run folder: exp-config.yaml,
// results/config.yaml, results/stage_N_lifecycle_metrics.json for every
// configured stage, and results/summary_lifecycle_metrics.json. Errors name
// the file and the field.
func ReadInferencePerf(dir string) (*InferencePerfRun, error) {
	run := &InferencePerfRun{Dir: dir, Name: filepath.Base(filepath.Clean(dir))}
	if err := run.readExpConfig(filepath.Join(dir, "exp-config.yaml")); err != nil {
		return nil, err
	}
	if err := run.readClientConfig(filepath.Join(dir, "results", "config.yaml")); err != nil {
		return nil, err
	}
	for i, ls := range run.LoadStages {
		path := filepath.Join(dir, "results", fmt.Sprintf("stage_%d_lifecycle_metrics.json", i))
		st, raw, err := readLifecycle(path)
		if err != nil {
			return nil, err
		}
		if rr := raw.LoadSummary.RequestedRate; rr != nil && *rr != ls.Rate {
			return nil, fmt.Errorf("%s: load_summary.requested_rate: %g, but results/config.yaml load.stages[%d].rate is %g",
				path, *rr, i, ls.Rate)
		}
		st.Index, st.Rate, st.DurationS, st.OutputLenRequested = i, ls.Rate, ls.DurationS, run.OutputLen
		run.Stages = append(run.Stages, st)
	}
	// A stage file beyond the configured stages means config and results
	// disagree; refuse rather than silently drop a cell.
	extra := filepath.Join(dir, "results", fmt.Sprintf("stage_%d_lifecycle_metrics.json", len(run.LoadStages)))
	if _, err := os.Stat(extra); err == nil {
		return nil, fmt.Errorf("%s: load.stages lists %d stages but %s exists",
			filepath.Join(dir, "results", "config.yaml"), len(run.LoadStages), extra)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("stat %s: %w", extra, err)
	}
	sum, _, err := readLifecycle(filepath.Join(dir, "results", "summary_lifecycle_metrics.json"))
	if err != nil {
		return nil, err
	}
	sum.Index, sum.OutputLenRequested = -1, run.OutputLen
	run.Summary = sum
	return run, nil
}

func (r *InferencePerfRun) readExpConfig(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read exp config: %w", err)
	}
	var c expConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	if c.Model == "" {
		return fmt.Errorf("%s: model: missing", path)
	}
	positive := []struct {
		field string
		v     int
	}{
		{"tensor_parallelism", c.TensorParallelism},
		{"max_model_len", c.MaxModelLen},
		{"max_num_batched_tokens", c.MaxNumBatchedTokens},
		{"max_num_seqs", c.MaxNumSeqs},
	}
	for _, p := range positive {
		if p.v < 1 {
			return fmt.Errorf("%s: %s: must be ≥ 1, got %d (missing?)", path, p.field, p.v)
		}
	}
	r.Model, r.TensorParallelism, r.MaxModelLen = c.Model, c.TensorParallelism, c.MaxModelLen
	r.MaxNumBatchedTokens, r.MaxNumSeqs = c.MaxNumBatchedTokens, c.MaxNumSeqs
	return nil
}

func (r *InferencePerfRun) readClientConfig(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read client config: %w", err)
	}
	var c clientConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	r.DataType, r.LoadType, r.IntervalS = c.Data.Type, c.Load.Type, c.Load.Interval
	r.IgnoreEOS = c.Server.IgnoreEOS

	if c.Data.Type == "shared_prefix" {
		sp := c.Data.SharedPrefix
		if sp == nil {
			return fmt.Errorf("%s: data.shared_prefix: missing for data.type shared_prefix", path)
		}
		fields := []struct {
			field string
			v     int
			dst   *int
		}{
			{"num_groups", sp.NumGroups, &r.NumGroups},
			{"num_prompts_per_group", sp.NumPromptsPerGroup, &r.NumPromptsPerGroup},
			{"system_prompt_len", sp.SystemPromptLen, &r.SystemPromptLen},
			{"question_len", sp.QuestionLen, &r.QuestionLen},
			{"output_len", sp.OutputLen, &r.OutputLen},
		}
		for _, f := range fields {
			if f.v < 1 {
				return fmt.Errorf("%s: data.shared_prefix.%s: must be ≥ 1, got %d", path, f.field, f.v)
			}
			*f.dst = f.v
		}
	}

	if len(c.Load.Stages) == 0 {
		return fmt.Errorf("%s: load.stages: missing or empty", path)
	}
	for i, s := range c.Load.Stages {
		if s.Rate <= 0 || s.Duration <= 0 {
			return fmt.Errorf("%s: load.stages[%d]: rate and duration must be > 0, got rate %g, duration %g",
				path, i, s.Rate, s.Duration)
		}
		r.LoadStages = append(r.LoadStages, LoadStage{Rate: s.Rate, DurationS: s.Duration})
	}

	r.RequestTimeoutS = DefaultRequestTimeoutS
	if t := c.Load.RequestTimeout; t != nil {
		if *t <= 0 || math.IsInf(*t, 0) || math.IsNaN(*t) {
			return fmt.Errorf("%s: load.request_timeout: must be > 0 s or null, got %g", path, *t)
		}
		r.RequestTimeoutS = *t
	}
	return nil
}

// ListInferencePerfRuns returns, sorted by name, the run folders directly
// under root: the subfolders holding an exp-config.yaml. Other entries (a
// README, stray files) are skipped.
func ListInferencePerfRuns(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list inference-perf runs: %w", err)
	}
	var runs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "exp-config.yaml")); err == nil {
			runs = append(runs, dir)
		}
	}
	return runs, nil
}
