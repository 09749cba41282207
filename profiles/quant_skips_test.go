package profiles

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scoutModules are checkpoint module names of Llama-4-Scout: every
// layer's projections, experts, shared expert and router, vision modules
// (its ignore list's), and near misses ("q_proj2", "layers.1" vs 10).
func scoutModules() []string {
	var ms []string
	for i := range 48 {
		for _, m := range []string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.o_proj", "feed_forward.experts",
			"feed_forward.shared_expert.gate_proj", "feed_forward.router", "mlp.gate_proj", "self_attn.q_proj2"} {
			ms = append(ms, fmt.Sprintf("language_model.model.layers.%d.%s", i, m), fmt.Sprintf("model.layers.%d.%s", i, m))
		}
		ms = append(ms, fmt.Sprintf("vision_model.model.layers.%d.self_attn.q_proj", i),
			fmt.Sprintf("vision_model.model.layers.%d.mlp.fc1", i), fmt.Sprintf("vision_model.model.layers.%d", i))
	}
	return append(ms, "lm_head", "language_model.lm_head", "vision_model.patch_embedding.linear", "multi_modal_projector.linear_1", "")
}

// Skips answers from the stems compileIgnore prepared as from a scan of
// Ignore (the form taken when Ignore changed since): on Scout's 449
// entries for every module name above, and on TestQuantIgnore's cases.
func TestQuantSkipsStemSetIsTheScan(t *testing.T) {
	m, err := LoadModel("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic")
	require.NoError(t, err)
	q := m.Quant
	require.Len(t, q.Ignore, 449)
	require.True(t, q.compiled())
	scan := *q
	scan.Ignore = slices.Clone(q.Ignore)
	require.False(t, scan.compiled(), "a changed Ignore is scanned")
	skipped := 0
	for _, name := range scoutModules() {
		got := q.Skips(name)
		assert.Equal(t, scan.Skips(name), got, name)
		if got {
			skipped++
		}
	}
	// Skipped: q/k/o_proj and the router of 48 layers in both spellings
	// (8 × 48), q_proj and fc1 of the 34 vision layers the list names
	// (2 × 34), lm_head in both spellings, the patch embedding and the
	// projector (4): 456 of 1,204 names.
	assert.Equal(t, 8*48+2*34+4, skipped)
	assert.True(t, q.Skips("language_model.model.layers.7.feed_forward.router"))
	assert.False(t, q.Skips("language_model.model.layers.7.feed_forward.experts"))

	p := &Quant{Method: "fp8", Linear: FormatFP8Tensor, Ignore: []string{"model.layers.1", "lm_head"}}
	require.NoError(t, p.compileIgnore())
	assert.True(t, p.Skips("model.layers.1.mlp.gate_proj"), "parent module")
	assert.False(t, p.Skips("model.layers.10.mlp.gate_proj"), "layers.1 is not a parent of layers.10")
	assert.True(t, p.Skips("language_model.lm_head"))
}

// BenchmarkQuantSkipsScout asks Skips for every Scout module name above
// (a capacity search asks it for every layer of every configuration).
func BenchmarkQuantSkipsScout(b *testing.B) {
	m, err := LoadModel("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic")
	require.NoError(b, err)
	names := scoutModules()
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			m.Quant.Skips(n)
		}
	}
}
