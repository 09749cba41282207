package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var families = []string{"gemm:", "context attention:", "generation attention:", "moe:", "comm:", "ops:"}

func TestProfileShow(t *testing.T) {
	out, stderr, err := run(t, "profile", "show", "--hardware", "h200-sxm")
	require.NoError(t, err, stderr)
	for _, f := range families {
		assert.Contains(t, out, "\n"+f, f)
	}
	assert.Contains(t, out, "gemm: 101004 rows, dtypes bfloat16 fp8 fp8_block")
	assert.Contains(t, out, "(step + 1)", "aiconfigurator's decode step is context - 1")
	assert.Contains(t, out, "all_reduce vllm_graph: 69 rows, bfloat16, GPUs 2 4 8")
	assert.Contains(t, out, "rmsnorm: 15 rows, bfloat16, tokens 1..16384 (15 values), width 4096")
	assert.Contains(t, out, "table set: vLLM 0.19.0\n")
	assert.Contains(t, out, "\nnotes:\n")
	assert.Contains(t, out, "\n  - h200-sxm: rmsnorm, rotary, silu_and_mul, embedding, sampler priced from our collector's measurements")
	assert.Contains(t, out, "\n  - context_mla_perf: vLLM 0.14.0's (not collected under 0.19.0)\n")
	other, _, err := run(t, "profile", "show", "--hardware", "h100-sxm", "--vllm-version", "0.24.0")
	require.NoError(t, err)
	assert.Contains(t, other, "table set: vLLM 0.24.0\n")
	assert.Contains(t, other, "gemm: 107188 rows, dtypes bfloat16 fp8 fp8_block")
}

func TestProfileShowMeasuredAndFolder(t *testing.T) {
	measured, stderr, err := run(t, "profile", "show", "--measured")
	require.NoError(t, err, stderr)
	assert.Contains(t, measured, "h200-sxm operator tables from embedded:measured/h200-sxm")
	assert.Contains(t, measured, "bfloat16: 294 rows, m 1..8192 (14 values)")
	assert.Contains(t, measured, "context 128..16384 (8 values) (step is the context length)")
	assert.Contains(t, measured, "2 shapes (hidden, inter, topk, experts, tp, ep): (4096,14336,2,8,1,1) (4096,14336,2,8,2,1)")
	assert.Contains(t, measured, "comm: no rows")

	dir := filepath.Join("..", "..", "profiles", "measured", "h200-sxm")
	folder, stderr, err := run(t, "profile", "show", "--profile-dir", dir)
	require.NoError(t, err, stderr)
	assert.Contains(t, folder, "h200-sxm operator tables from "+dir)
	assert.Contains(t, folder, "bfloat16: 294 rows, m 1..8192 (14 values)")
}

// ratioLine reads one family's row of the compare table.
func ratioLine(t *testing.T, out, family string) (shared int, median float64) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(family) + `\s+(\d+)\s+\d+\s+\d+\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+$`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %q row in:\n%s", family, out)
	shared, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	median, err = strconv.ParseFloat(m[2], 64)
	require.NoError(t, err)
	return shared, median
}

// The collector reported bf16 GEMM ours/aiconfigurator 0.989 over 126 shapes.
func TestProfileCompareMeasuredWithDefault(t *testing.T) {
	out, stderr, err := run(t, "profile", "compare", "measured:h200-sxm", "default:h200-sxm")
	require.NoError(t, err, stderr)
	shared, median := ratioLine(t, out, "gemm bfloat16")
	assert.Equal(t, 126, shared)
	assert.GreaterOrEqual(t, median, 0.9)
	assert.LessOrEqual(t, median, 1.1)
	shared, _ = ratioLine(t, out, "generation attention")
	assert.Equal(t, 126, shared, "decode steps matched through the off-by-one")
	assert.Contains(t, out, "(decode step = context)")
	assert.Contains(t, out, "(decode step = context - 1)")
	assert.Contains(t, out, "only in B: gemm fp8_block")
}

func TestProfileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown default hardware", []string{"profile", "compare", "default:v100", "measured:h200-sxm"},
			`A: default tables: unknown hardware "v100" (allowed: a100-sxm, b200-sxm, gb200, h100-sxm, h200-sxm, h800, l40s, rtx-pro-6000)`},
		{"no measurements", []string{"profile", "compare", "default:h200-sxm", "measured:h100-sxm"},
			`B: measured tables: no collector measurements for hardware "h100-sxm" (available: h200-sxm)`},
		{"unreadable folder", []string{"profile", "compare", missing, "default:h200-sxm"},
			"A: load tables: stat " + missing},
		{"one argument", []string{"profile", "compare", "default:h200-sxm"}, "accepts 2 arg(s), received 1"},
		{"show unknown hardware", []string{"profile", "show", "--hardware", "v100"}, `unknown hardware "v100"`},
		{"show measured and folder", []string{"profile", "show", "--measured", "--profile-dir", "x"}, "--measured and --profile-dir: give one"},
		{"show unreadable folder", []string{"profile", "show", "--profile-dir", missing}, "load tables: stat " + missing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { requireBadInput(t, tc.args, tc.want) })
	}
}
