package predictor

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// priceAll prices a fixed mix of decode and prefill steps (some beyond
// the tables' grids) and returns the step times.
func priceAll(p *Predictor) []StepTime {
	var out []StepTime
	for _, b := range []Batch{
		{NumTokens: 8, PaddedTokens: 8, Graph: true, NumDecodes: 8, DecodeCtxSum: 8 * 700, NumSampled: 8, NumRequests: 8, NumRunning: 8},
		{NumTokens: 600, PaddedTokens: 600, Prefills: []Chunk{{NewTokens: 592}}, NumDecodes: 8, DecodeCtxSum: 8 * 701, NumSampled: 9, NumRequests: 9, NumRunning: 9},
		{NumTokens: 2048, PaddedTokens: 2048, Prefills: []Chunk{{NewTokens: 2048, PrefixTokens: 100000}}, NumRequests: 1, NumRunning: 1},
		{NumTokens: 8, PaddedTokens: 8, Graph: true, NumDecodes: 8, DecodeCtxSum: 8 * 700, NumSampled: 8, NumRequests: 8, NumRunning: 8},
	} {
		out = append(out, p.Step(&b, true))
	}
	return out
}

// A template's predictors price, count coverage and note substitutions
// exactly as New's, each with its own memos and counts; a config the
// template was not built for falls back to New.
func TestTemplateMatchesNew(t *testing.T) {
	llama := llamaConfig(t, "meta-llama/Llama-2-7b-hf", "h100-sxm", 1)
	qwen := llamaConfig(t, "Qwen/Qwen3-30B-A3B", "h200-sxm", 1)
	qwen.DP, qwen.ExpertParallel = 8, true
	for _, cfg := range []Config{llama, qwen} {
		want, err := New(cfg)
		require.NoError(t, err)
		wantSteps := priceAll(want)
		tmpl, err := NewTemplate(cfg)
		require.NoError(t, err)
		a, err := tmpl.New(cfg)
		require.NoError(t, err)
		b, err := tmpl.New(cfg)
		require.NoError(t, err)
		assert.Equal(t, wantSteps, priceAll(a))
		assert.Equal(t, want.Coverage(), a.Coverage())
		assert.Equal(t, want.AllNotes(), a.AllNotes())
		assert.Zero(t, b.Coverage().Lookups, "a sibling's lookups are its own")
		assert.Equal(t, wantSteps, priceAll(b))
		assert.Equal(t, want.Coverage(), b.Coverage())
	}
	assert.NotZero(t, priceAll(mustNew(t, llama))[2].DeviceNs)
	// Llama-2-7b's 32/32 decode is priced by the bytes-read rule: noted.
	p, err := mustTemplate(t, llama).New(llama)
	require.NoError(t, err)
	priceAll(p)
	assert.NotEmpty(t, p.AllNotes())
	// TP 2 is not what the template holds: New's result, TP 2 shapes.
	tp2 := llama
	tp2.TP = 2
	q, err := mustTemplate(t, llama).New(tp2)
	require.NoError(t, err)
	assert.Equal(t, 16, q.heads)
	assert.Equal(t, priceAll(mustNew(t, tp2)), priceAll(q))
	var none *Template
	r, err := none.New(llama)
	require.NoError(t, err)
	assert.Equal(t, priceAll(mustNew(t, llama)), priceAll(r))
	_, err = NewTemplate(Config{Model: llama.Model, Tables: llama.Tables, TP: 0, PP: 1})
	assert.ErrorContains(t, err, "parallel sizes must be ≥ 1")
}

func mustNew(t *testing.T, cfg Config) *Predictor {
	t.Helper()
	p, err := New(cfg)
	require.NoError(t, err)
	return p
}

func mustTemplate(t *testing.T, cfg Config) *Template {
	t.Helper()
	tmpl, err := NewTemplate(cfg)
	require.NoError(t, err)
	return tmpl
}

// Predictors of one template price concurrently (a sweep's points run in
// parallel): the grids they build on first use are built once, and every
// goroutine gets New's prices (go test -race checks the sharing).
func TestTemplateConcurrentLazyGrids(t *testing.T) {
	cfg := llamaConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h200-sxm", 1)
	want := priceAll(mustNew(t, cfg))
	tmpl := mustTemplate(t, cfg)
	got := make([][]StepTime, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := tmpl.New(cfg)
			if err == nil {
				got[i] = priceAll(p)
			}
		}()
	}
	wg.Wait()
	for i := range got {
		assert.Equal(t, want, got[i], "goroutine %d", i)
	}
}

// A template's predictor copies its prototype's layer kinds only for as
// many pipeline stages: DeepSeek-V2-Lite's first layer is dense, so PP 2
// prices another stage's mix than PP 1, and Llama-4-Scout's chunked
// local attention layers count per stage.
func TestTemplateKindsFollowPP(t *testing.T) {
	for _, cfg := range []Config{llamaConfig(t, "deepseek-ai/DeepSeek-V2-Lite", "h200-sxm", 1), quantConfig(t, "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "h100-sxm", 2)} {
		tm, err := NewTemplate(cfg)
		require.NoError(t, err)
		for _, pp := range []int{1, 2, 3} {
			c := cfg
			c.PP = pp
			p, err := tm.New(c)
			require.NoError(t, err)
			fresh := mustNew(t, c)
			require.Equal(t, fresh.kinds, p.kinds, "%s PP %d", cfg.Model.ID, pp)
			require.Equal(t, fresh.layers, p.layers)
			require.Equal(t, fresh.chunked, p.chunked)
		}
	}
}
