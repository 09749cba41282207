package calibration

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// gateScenario mirrors the keys of docs/SCENARIO.md that a gate scenario
// sets; KnownFields rejects any other key.
type gateScenario struct {
	Name       string `yaml:"name"`
	Hardware   string `yaml:"hardware"`
	Deployment struct {
		Model               string `yaml:"model"`
		TensorParallelSize  int    `yaml:"tensor_parallel_size"`
		MaxNumSeqs          int    `yaml:"max_num_seqs"`
		MaxNumBatchedTokens int    `yaml:"max_num_batched_tokens"`
		MaxModelLen         int    `yaml:"max_model_len"`
	} `yaml:"deployment"`
	Workload struct {
		Seed         int    `yaml:"seed"`
		Dataset      string `yaml:"dataset"`
		SharedPrefix struct {
			NumGroups          int `yaml:"num_groups"`
			NumPromptsPerGroup int `yaml:"num_prompts_per_group"`
			SystemPromptLen    int `yaml:"system_prompt_len"`
			QuestionLen        int `yaml:"question_len"`
			OutputLen          int `yaml:"output_len"`
			PromptLen          int `yaml:"prompt_len"`
		} `yaml:"shared_prefix"`
		Arrivals struct {
			Stages []struct {
				Rate      float64 `yaml:"rate"`
				DurationS float64 `yaml:"duration_s"`
			} `yaml:"stages"`
			TimeoutS float64 `yaml:"timeout_s"`
		} `yaml:"arrivals"`
	} `yaml:"workload"`
	GroundTruth struct {
		Format string `yaml:"format"`
		Path   string `yaml:"path"`
		Stages string `yaml:"stages"`
	} `yaml:"ground_truth"`
}

// TestGateScenariosMatchGroundTruth checks that scenarios/gate holds one
// scenario per ground-truth run and that each states exactly what the run's
// exp-config.yaml and results/config.yaml say (plus the measured mean prompt
// length), so a scenario cannot drift from the run it is judged against.
func TestGateScenariosMatchGroundTruth(t *testing.T) {
	runs, err := ListInferencePerfRuns("groundtruth")
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	files, err := filepath.Glob("../scenarios/gate/*.yaml")
	require.NoError(t, err)
	require.Len(t, files, len(runs))

	for _, dir := range runs {
		run, err := ReadInferencePerf(dir)
		require.NoError(t, err)
		path := filepath.Join("..", "scenarios", "gate", run.Name+".yaml")
		t.Run(run.Name, func(t *testing.T) {
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			dec := yaml.NewDecoder(f)
			dec.KnownFields(true)
			var sc gateScenario
			require.NoError(t, dec.Decode(&sc))

			assert.Equal(t, run.Name, sc.Name)
			assert.Equal(t, "h100-sxm", sc.Hardware)
			d := sc.Deployment
			assert.Equal(t, run.Model, d.Model)
			assert.Equal(t, run.TensorParallelism, d.TensorParallelSize)
			assert.Equal(t, run.MaxNumSeqs, d.MaxNumSeqs)
			assert.Equal(t, run.MaxNumBatchedTokens, d.MaxNumBatchedTokens)
			assert.Equal(t, run.MaxModelLen, d.MaxModelLen)

			w := sc.Workload
			assert.Equal(t, 0, w.Seed)
			assert.Equal(t, "shared_prefix", w.Dataset)
			sp := w.SharedPrefix
			assert.Equal(t, run.NumGroups, sp.NumGroups)
			assert.Equal(t, run.NumPromptsPerGroup, sp.NumPromptsPerGroup)
			assert.Equal(t, run.SystemPromptLen, sp.SystemPromptLen)
			assert.Equal(t, run.QuestionLen, sp.QuestionLen)
			assert.Equal(t, run.OutputLen, sp.OutputLen)
			assert.Equal(t, int(math.Round(run.Summary.PromptLen.Mean)), sp.PromptLen)
			require.Len(t, w.Arrivals.Stages, len(run.LoadStages))
			for i, s := range w.Arrivals.Stages {
				assert.Equal(t, run.LoadStages[i].Rate, s.Rate)
				assert.Equal(t, run.LoadStages[i].DurationS, s.DurationS)
			}
			assert.Equal(t, run.RequestTimeoutS, w.Arrivals.TimeoutS)

			g := sc.GroundTruth
			assert.Equal(t, "inference-perf", g.Format)
			assert.Equal(t, "all", g.Stages)
			// The path resolves against the scenario file's folder.
			resolved := filepath.Join(filepath.Dir(path), g.Path)
			wantAbs, err := filepath.Abs(dir)
			require.NoError(t, err)
			gotAbs, err := filepath.Abs(resolved)
			require.NoError(t, err)
			assert.Equal(t, wantAbs, gotAbs)
		})
	}
}
