package calibration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	codegenRun   = "groundtruth/20260217-155451-llama-2-7b-tp1-codegen"
	reasoningRun = "groundtruth/20260217-170634-llama-2-7b-tp1-reasoning"
)

func TestReadInferencePerfCodegen(t *testing.T) {
	r, err := ReadInferencePerf(codegenRun)
	require.NoError(t, err)

	assert.Equal(t, "20260217-155451-llama-2-7b-tp1-codegen", r.Name)
	assert.Equal(t, "meta-llama/Llama-2-7b-hf", r.Model)
	assert.Equal(t, 1, r.TensorParallelism)
	assert.Equal(t, 4096, r.MaxModelLen)
	assert.Equal(t, 2048, r.MaxNumBatchedTokens)
	assert.Equal(t, 128, r.MaxNumSeqs)

	// results/config.yaml, not profile.yaml (which asks for 11 × 4 prompts).
	assert.Equal(t, "shared_prefix", r.DataType)
	assert.Equal(t, 10, r.NumGroups)
	assert.Equal(t, 10, r.NumPromptsPerGroup)
	assert.Equal(t, 100, r.SystemPromptLen)
	assert.Equal(t, 466, r.QuestionLen)
	assert.Equal(t, 247, r.OutputLen)
	assert.Equal(t, "constant", r.LoadType)
	assert.Equal(t, 1.0, r.IntervalS)
	assert.True(t, r.IgnoreEOS)
	assert.Equal(t, []LoadStage{{Rate: 5, DurationS: 600}, {Rate: 10, DurationS: 600}}, r.LoadStages)

	// Two stages, in file order, each tagged with its config stage.
	require.Len(t, r.Stages, 2)
	for i, st := range r.Stages {
		assert.Equal(t, i, st.Index)
		assert.Equal(t, r.LoadStages[i].Rate, st.Rate)
		assert.Equal(t, 247, st.OutputLenRequested)
	}
	s0, s1 := r.Stages[0], r.Stages[1]
	assert.Equal(t, 3000, s0.LoadCount)
	assert.Equal(t, 6000, s1.LoadCount)
	assert.Equal(t, 3000, s0.Successes)
	assert.Equal(t, 0, s0.Failures)
	// Values copied from the JSON files, in seconds.
	assert.Equal(t, 0.024261102999957984, s0.TTFT.Median)
	assert.Equal(t, 0.028919372000018484, s1.TTFT.Median)
	assert.Equal(t, 0.025036599272001393, s0.TTFT.Mean)
	assert.Equal(t, 1.8103224114763325, s0.E2E.Mean)
	assert.Equal(t, 2.4257307327001856, s1.E2E.P90)
	assert.Equal(t, 591.63, s0.PromptLen.Mean)
	assert.Equal(t, 580.0, s1.PromptLen.Percentiles["p0.1"])
	q, ok := s0.TTFT.Quantile(99.9)
	assert.True(t, ok)
	assert.Equal(t, 0.06706811760213689, q)
	assert.Equal(t, 4.986841420062726, s0.RequestsPerSec)

	assert.Equal(t, -1, r.Summary.Index)
	assert.Equal(t, 9000, r.Summary.Successes)
}

func TestRequestTimeoutNullDefaultsTo300s(t *testing.T) {
	r, err := ReadInferencePerf(codegenRun)
	require.NoError(t, err)
	assert.Equal(t, 300.0, r.RequestTimeoutS)
	assert.Equal(t, DefaultRequestTimeoutS, r.RequestTimeoutS)
}

func TestRequestTimeoutExplicit(t *testing.T) {
	dir := copyRun(t, codegenRun)
	cfg := filepath.Join(dir, "results", "config.yaml")
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	data = []byte(replaceOnce(t, string(data), "request_timeout: null", "request_timeout: 60"))
	require.NoError(t, os.WriteFile(cfg, data, 0o644))

	r, err := ReadInferencePerf(dir)
	require.NoError(t, err)
	assert.Equal(t, 60.0, r.RequestTimeoutS)
}

func TestTPOTMeanDerivedByHand(t *testing.T) {
	r, err := ReadInferencePerf(codegenRun)
	require.NoError(t, err)
	want := (1.8103224114763325 - 0.025036599272001393) / 246
	assert.InDelta(t, want, r.Stages[0].TPOTMean(), 1e-15)
	assert.InDelta(t, 0.0072572, r.Stages[0].TPOTMean(), 1e-6) // about 7.3 ms per token
}

func TestOverloaded(t *testing.T) {
	codegen, err := ReadInferencePerf(codegenRun)
	require.NoError(t, err)
	for _, st := range codegen.Stages {
		assert.False(t, st.Overloaded(), "codegen stage %d", st.Index)
	}

	reasoning, err := ReadInferencePerf(reasoningRun)
	require.NoError(t, err)
	require.Len(t, reasoning.Stages, 1)
	st := reasoning.Stages[0]
	assert.True(t, st.Overloaded())
	assert.Equal(t, 732, st.Successes)
	assert.Equal(t, 4068, st.Failures)
	assert.Greater(t, st.FailureLatency.Min, 300.0) // every failure is the 300 s timeout
	// Window = successes / requests_per_sec: the 1,200 s stage plus the timeout tail.
	assert.InDelta(t, 1500.2, st.WindowS(), 0.1)
}

func TestOverloadedByEitherRule(t *testing.T) {
	tests := []struct {
		name              string
		successes, failed int
		ttftMean          float64
		want              bool
	}{
		{"healthy", 1000, 0, 0.05, false},
		{"exactly 1% failed is not overloaded", 990, 10, 0.05, false},
		{"over 1% failed", 989, 11, 0.05, true},
		{"mean TTFT over 10 s", 1000, 0, 10.5, true},
		{"mean TTFT exactly 10 s", 1000, 0, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := StageTruth{Successes: tt.successes, Failures: tt.failed, TTFT: Dist{Mean: tt.ttftMean}}
			assert.Equal(t, tt.want, st.Overloaded())
		})
	}
}

func TestReadInferencePerfAllRuns(t *testing.T) {
	dirs, err := ListInferencePerfRuns("groundtruth")
	require.NoError(t, err)
	require.Len(t, dirs, 12)
	for _, d := range dirs {
		r, err := ReadInferencePerf(d)
		require.NoError(t, err, d)
		assert.Len(t, r.Stages, len(r.LoadStages), d)
		for _, st := range r.Stages {
			// inference-perf sends exactly rate × duration requests per stage.
			assert.Equal(t, int(st.Rate*st.DurationS), st.LoadCount, d)
			assert.Equal(t, st.LoadCount, st.Successes+st.Failures, d)
		}
	}
}

func TestReadInferencePerfErrorsNameFileAndField(t *testing.T) {
	dir := copyRun(t, codegenRun)
	stage := filepath.Join(dir, "results", "stage_1_lifecycle_metrics.json")
	data, err := os.ReadFile(stage)
	require.NoError(t, err)
	data = []byte(replaceOnce(t, string(data), `"time_to_first_token": {`, `"time_to_first_token_gone": {`))
	require.NoError(t, os.WriteFile(stage, data, 0o644))

	_, err = ReadInferencePerf(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), stage)
	assert.Contains(t, err.Error(), "successes.latency.time_to_first_token")

	require.NoError(t, os.Remove(stage))
	_, err = ReadInferencePerf(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stage_1_lifecycle_metrics.json")
}

// copyRun copies a run folder into a temporary directory for tests that
// modify it.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	require.NoError(t, err)
	return dst
}

func replaceOnce(t *testing.T, s, old, repl string) string {
	t.Helper()
	i := strings.Index(s, old)
	require.GreaterOrEqual(t, i, 0, "%q not found", old)
	return s[:i] + repl + s[i+len(old):]
}
