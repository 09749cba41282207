package profiles

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Row counts of profiles/measured/h200-sxm/*.csv (meta.yaml rows_in_tables).
func TestMeasuredTables(t *testing.T) {
	assert.Equal(t, []string{"h200-sxm"}, MeasuredHardware())
	tb, err := MeasuredTables("H200")
	require.NoError(t, err)
	assert.Equal(t, "h200-sxm", tb.Hardware)
	assert.Equal(t, "embedded:measured/h200-sxm", tb.Source)
	assert.Len(t, tb.Gemm, 574)
	assert.Len(t, tb.ContextAttn, 300)
	assert.Len(t, tb.GenerationAttn, 276)
	assert.Len(t, tb.MoE, 90)
	assert.Empty(t, tb.Comm, "collectives need a multi-GPU run")
	assert.Len(t, tb.Ops, 198)
	assert.Zero(t, tb.DecodeContextOffset, "the collector's decode step is the context length")
	require.NotEmpty(t, tb.Notes)
	assert.Contains(t, tb.Notes[0], "operator tables measured by profiles/collect")

	again, err := MeasuredTables("h200-sxm")
	require.NoError(t, err)
	assert.Same(t, tb, again, "memoized")

	for _, hw := range []string{"h100-sxm", "a100"} {
		_, err = MeasuredTables(hw)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `no collector measurements for hardware "`+hw+`" (available: h200-sxm)`)
	}
}

// The decode grids differ by one: the collector's step 1024 is a context of
// 1024 tokens, aiconfigurator's 1023 is the same context.
func TestMeasuredDecodeStepConvention(t *testing.T) {
	m, err := MeasuredTables("h200-sxm")
	require.NoError(t, err)
	d, err := DefaultTables("h200-sxm")
	require.NoError(t, err)
	has := func(tb *Tables, step int64) bool {
		for _, r := range tb.GenerationAttn {
			if r.BatchSize == 1 && r.NumHeads == 32 && r.NumKVHeads == 8 && r.HeadDim == 128 &&
				r.KVCacheDtype == "bfloat16" && r.WindowSize == 0 && r.Step == step {
				return true
			}
		}
		return false
	}
	assert.True(t, has(m, 1024))
	assert.False(t, has(m, 1023))
	assert.True(t, has(d, 1023))
	assert.False(t, has(d, 1024))
	assert.Equal(t, int64(1024), 1024+m.DecodeContextOffset)
	assert.Equal(t, int64(1024), 1023+d.DecodeContextOffset)
}

func TestDefaultTablesCarryMeasuredOps(t *testing.T) {
	m, err := MeasuredTables("h200-sxm")
	require.NoError(t, err)
	d, err := DefaultTables("h200-sxm")
	require.NoError(t, err)
	require.Len(t, d.Ops, len(m.Ops))
	assert.Equal(t, m.Ops, d.Ops, "the measured rows")
	assert.Contains(t, d.Notes, "h200-sxm: rmsnorm, rotary, silu_and_mul, embedding, sampler priced from our collector's measurements (profiles/measured/h200-sxm)")
	assert.NotEqual(t, len(m.Gemm), len(d.Gemm), "GEMM stays aiconfigurator's")

	h100, err := DefaultTables("h100-sxm")
	require.NoError(t, err)
	assert.Empty(t, h100.Ops)
	assert.Empty(t, h100.Notes)
}

func TestWriteTablesKeepsDecodeContextOffset(t *testing.T) {
	dir := t.TempDir()
	want := sampleTables()
	want.DecodeContextOffset = 1
	require.NoError(t, WriteTables(dir, want))
	got, err := LoadTables(dir)
	require.NoError(t, err)
	want.Source = dir
	assert.Equal(t, want, got)

	writeFile(t, dir, "meta.yaml", "hardware: h200-sxm\ndecode_context_offset: 2\n")
	_, err = LoadTables(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "load tables "+filepath.Join(dir, "meta.yaml")+": decode_context_offset: want 0")
}

// The measured ops read from their rows form are the CSV's rows, in
// order, on every measured hardware that has one.
func TestMeasuredOpsRowsAreTheCSV(t *testing.T) {
	checked := 0
	for _, hw := range MeasuredHardware() {
		if _, err := embeddedMeasured.ReadFile(embeddedMeasuredRoot + "/" + hw + "/" + flatOps + rowsExt); err != nil {
			continue
		}
		checked++
		fromRows, err := measuredOps(hw)
		require.NoError(t, err)
		fromCSV, err := measuredOpsCSV(hw)
		require.NoError(t, err)
		require.NotEmpty(t, fromCSV, hw)
		assert.Equal(t, fromCSV, fromRows, hw)
	}
	assert.Positive(t, checked, "hardware with an ops rows file")
}
