package profiles

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pickVersion's three rules on a made-up system folder: the version itself,
// its reuse.yaml, the newest older collection; "" for the newest.
func TestPickVersion(t *testing.T) {
	fsys := fstest.MapFS{
		"s/gemm/vllm/0.14.0/gemm_perf.parquet": {},
		"s/gemm/vllm/0.19.0/gemm_perf.parquet": {},
		"s/gemm/vllm/0.22.0/reuse.yaml":        {Data: []byte("reuse:\n- table: gemm_perf\n  from_version: 0.14.0\n")},
		"s/gemm/vllm/0.24.0/other.parquet":     {},
	}
	cases := []struct{ want, ver, why string }{
		{"0.19.0", "0.19.0", ""},
		{"0.22.0", "0.14.0", "gemm_perf: vLLM 0.14.0's (reuse.yaml of 0.22.0)"},
		{"0.24.0", "0.19.0", "gemm_perf: vLLM 0.19.0's (not collected under 0.24.0)"},
		{"", "0.19.0", ""},
		{"0.10.0", "", ""},
	}
	for _, c := range cases {
		ver, why, err := pickVersion(fsys, "s/gemm/vllm", "gemm_perf.parquet", c.want)
		require.NoError(t, err, c.want)
		assert.Equal(t, c.ver, ver, c.want)
		assert.Equal(t, c.why, why, c.want)
	}
}

// Every preset's default set loads and holds bf16 GEMM, attention and
// collective rows; the versions embedded for --vllm-version are listed.
func TestEmbeddedTableSets(t *testing.T) {
	want := map[string][]string{
		"h100-sxm": {"0.14.0", "0.19.0", "0.22.0", "0.24.0"},
		"h200-sxm": {"0.14.0", "0.19.0", "0.24.0"},
		"a100-sxm": {"0.14.0", "0.22.0"},
		"b200-sxm": {"0.24.0"}, "gb200": {"0.24.0"}, "rtx-pro-6000": {"0.24.0"}, "l40s": {"0.24.0"},
	}
	for _, hw := range KnownHardware() {
		if hw == "h800" {
			continue
		}
		versions, def, err := TableVersions(hw)
		require.NoError(t, err, hw)
		assert.Equal(t, want[hw], versions, hw)
		tb, err := DefaultTables(hw)
		require.NoError(t, err, hw)
		assert.Equal(t, def, tb.Version, hw)
		gemm := map[string]bool{}
		for _, r := range tb.Gemm {
			gemm[r.Dtype] = true
		}
		assert.True(t, gemm["bfloat16"], hw)
		assert.NotEmpty(t, tb.GenerationAttn, hw)
		assert.NotEmpty(t, tb.Comm, hw)
	}
	// L40S's 0.24.0 set takes the custom all-reduce of 0.22.0 and the MLA
	// core tables of 0.14.0 (not collected under 0.24.0), and says so.
	l40s, err := DefaultTables("l40s")
	require.NoError(t, err)
	assert.Contains(t, l40s.Notes, "custom_allreduce_perf: vLLM 0.22.0's (not collected under 0.24.0)")
	assert.Contains(t, l40s.Notes, "context_mla_perf: vLLM 0.14.0's (not collected under 0.24.0)")
	assert.NotEmpty(t, l40s.ContextMLA)
	// A100 vLLM 0.22.0 reuses 0.14.0 by its reuse.yaml.
	a100, err := TablesFor("a100", "0.22.0")
	require.NoError(t, err)
	assert.Contains(t, a100.Notes, "gemm_perf: vLLM 0.14.0's (reuse.yaml of 0.22.0)")
	_, err = TablesFor("b200-sxm", "0.19.0")
	assert.EqualError(t, err, "no b200-sxm tables embedded for vLLM 0.19.0 (embedded: 0.24.0; other versions: --profile-dir with aiconfigurator's b200_sxm folder)")
	// H100 0.14.0 lacks Llama-4-Scout's expert shape; its 0.24.0 table has it.
	h100, err := DefaultTables("h100-sxm")
	require.NoError(t, err)
	rows, from, err := h100.MoEFallback("fp8", 5120, 8192, 1, 16)
	require.NoError(t, err)
	assert.Equal(t, "0.24.0", from)
	assert.NotEmpty(t, rows)
}
