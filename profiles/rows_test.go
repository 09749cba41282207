package profiles

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every parquet table the loader reads has its rows form beside it, equal
// byte for byte to what `go generate ./profiles` writes now, and no rows
// file is left without its parquet file. Fails after a parquet file or a
// row type changed until the rows files are regenerated.
func TestEmbeddedRowsCurrent(t *testing.T) {
	want, err := GenerateRows(os.DirFS("."), embeddedTablesRoot)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	for name, data := range want {
		got, err := os.ReadFile(filepath.FromSlash(name))
		require.NoError(t, err, "%s is missing: run go generate ./profiles", name)
		assert.True(t, string(got) == string(data), "%s is stale: run go generate ./profiles", name)
	}
	err = filepath.WalkDir(embeddedTablesRoot, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, rowsExt) {
			_, ok := want[filepath.ToSlash(p)]
			assert.True(t, ok, "%s has no parquet file beside it: run go generate ./profiles", p)
		}
		return err
	})
	require.NoError(t, err)
}

// The embedded tables are the parquet files' rows, in their order: the
// rows form changes nothing but the time it takes.
func TestDefaultTablesEqualTheirParquetFiles(t *testing.T) {
	// H100 and H200 default sets; the other sets' rows files are checked
	// against their parquet files byte for byte (TestEmbeddedRowsCurrent).
	for hw, system := range map[string]string{"h100-sxm": "h100_sxm", "h200-sxm": "h200_sxm"} {
		_, version, err := TableVersions(hw)
		require.NoError(t, err)
		fromParquet, err := LoadTablesVersion(filepath.Join(embeddedTablesRoot, system), version)
		require.NoError(t, err)
		tb, err := DefaultTables(hw)
		require.NoError(t, err)
		assert.Equal(t, fromParquet.Gemm, tb.Gemm, hw)
		assert.Equal(t, fromParquet.ContextAttn, tb.ContextAttn, hw)
		assert.Equal(t, fromParquet.GenerationAttn, tb.GenerationAttn, hw)
		assert.Equal(t, fromParquet.MoE, tb.MoE, hw)
		assert.Equal(t, fromParquet.ContextMLA, tb.ContextMLA, hw)
		assert.Equal(t, fromParquet.GenerationMLA, tb.GenerationMLA, hw)
		assert.Equal(t, fromParquet.Comm, tb.Comm, hw)
		assert.Equal(t, fromParquet.DecodeContextOffset, tb.DecodeContextOffset, hw)
		assert.Equal(t, "embedded:"+fromParquet.Source, tb.Source, hw)
	}
}

// DefaultTablesFor holds exactly the rows its need selects, in table order
// (every collective and elementwise row, no MoE row for a dense model),
// with DefaultTables' source and notes; the same need gives the same
// tables, and two needs share the rows they have in common.
func TestDefaultTablesForSelectsRows(t *testing.T) {
	all, err := DefaultTables("h200-sxm")
	require.NoError(t, err)
	need := Need{GemmDtypes: []string{"fp8", "bfloat16"}, HeadDim: 64, KVDtype: "bfloat16", MoEDtypes: []string{"fp8"}}
	tb, err := DefaultTablesFor("H200", need)
	require.NoError(t, err)
	keep := func(rows []AttnRow) []AttnRow {
		var out []AttnRow
		for _, r := range rows {
			if r.HeadDim == 64 && r.KVCacheDtype == "bfloat16" && r.WindowSize == 0 {
				out = append(out, r)
			}
		}
		return out
	}
	var gemm []GemmRow
	for _, r := range all.Gemm {
		if r.Dtype == "fp8" || r.Dtype == "bfloat16" {
			gemm = append(gemm, r)
		}
	}
	var moe []MoERow
	for _, r := range all.MoE {
		if r.Dtype == "fp8" {
			moe = append(moe, r)
		}
	}
	assert.Equal(t, 2*35742, len(gemm))
	assert.Equal(t, gemm, tb.Gemm)
	assert.Equal(t, keep(all.ContextAttn), tb.ContextAttn)
	assert.Equal(t, 5435, len(tb.GenerationAttn))
	assert.Equal(t, keep(all.GenerationAttn), tb.GenerationAttn)
	assert.Equal(t, moe, tb.MoE)
	assert.Empty(t, tb.ContextMLA, "no MLA row for a model without MLA")
	assert.Equal(t, all.Comm, tb.Comm)
	assert.Equal(t, all.Ops, tb.Ops)
	assert.Equal(t, all.Source, tb.Source)
	assert.Equal(t, all.Notes, tb.Notes)
	assert.Equal(t, all.Hardware, tb.Hardware)
	assert.Equal(t, all.DecodeContextOffset, tb.DecodeContextOffset)

	again, err := DefaultTablesFor("h200-sxm", need)
	require.NoError(t, err)
	assert.Same(t, tb, again, "memoized per hardware and need")
	dense, err := DefaultTablesFor("h200-sxm", Need{GemmDtypes: []string{"fp8", "bfloat16"}, HeadDim: 128, KVDtype: "fp8"})
	require.NoError(t, err)
	assert.Empty(t, dense.MoE, "a dense model loads no MoE row")
	assert.Same(t, &tb.Gemm[0], &dense.Gemm[0], "the same GEMM rows, decoded once")
	mla, err := DefaultTablesFor("h200-sxm", Need{GemmDtypes: []string{"bfloat16"}, KVDtype: "bfloat16", MLA: true})
	require.NoError(t, err)
	assert.Empty(t, mla.ContextAttn)
	assert.NotEmpty(t, mla.ContextMLA)
	var mlaRows []AttnRow
	for _, r := range all.GenerationMLA {
		if r.KVCacheDtype == "bfloat16" {
			mlaRows = append(mlaRows, r)
		}
	}
	assert.Equal(t, mlaRows, mla.GenerationMLA)

	h800, err := DefaultTablesFor("h800", need)
	require.NoError(t, err)
	h100, err := DefaultTablesFor("h100-sxm", need)
	require.NoError(t, err)
	assert.Empty(t, h800.Comm)
	assert.Equal(t, h100.Gemm, h800.Gemm)
	assert.Equal(t, append(append([]string(nil), h100.Notes...), h800Notes...), h800.Notes)

	_, err = DefaultTablesFor("v100", need)
	assert.ErrorContains(t, err, `unknown hardware "v100"`)
}

// The rows form keeps every value exactly (the float64 bits, negative
// and extreme integers, long dictionaries), and decoding refuses what it
// cannot trust: another row type, a struct that changed, truncation.
func TestRowsFormRoundTripAndRefusals(t *testing.T) {
	var rows []GemmRow
	for i := range 70000 { // > 65,536 distinct latencies: a raw column
		rows = append(rows, GemmRow{Dtype: []string{"bfloat16", "fp8"}[i%2], M: int64(i % 300), N: -int64(i % 3),
			K: math.MaxInt64 - int64(i%2), LatencyMs: 1.0 / float64(i+3), EagerMs: math.SmallestNonzeroFloat64})
	}
	data, err := encodeRows(rows, func(r *GemmRow) string { return r.Dtype })
	require.NoError(t, err)
	got, err := decodeRows[GemmRow](data, nil)
	require.NoError(t, err)
	assert.Equal(t, rows, got)
	fp8, err := decodeRows[GemmRow](data, func(k string) bool { return k == "fp8" })
	require.NoError(t, err)
	require.Len(t, fp8, 35000)
	assert.Equal(t, rows[1], fp8[0])
	assert.Equal(t, rows[69999], fp8[34999])
	none, err := decodeRows[GemmRow](data, func(string) bool { return false })
	require.NoError(t, err)
	assert.Empty(t, none)

	_, err = decodeRows[AttnRow](data, nil)
	assert.ErrorIs(t, err, errStaleRows)
	assert.ErrorContains(t, err, "rows of GemmRow, want AttnRow")
	type GemmRowV2 struct { // the same name, another field
		Dtype   string
		M, N, K int64
	}
	_, err = decodeRows[GemmRowV2](data, nil)
	assert.ErrorIs(t, err, errStaleRows)
	for _, cut := range []int{3, 40, len(data) / 2, len(data) - 1} {
		_, err = decodeRows[GemmRow](data[:cut], nil)
		assert.Error(t, err, "cut at %d", cut)
	}
	_, err = decodeRows[GemmRow](append(append([]byte(nil), data...), 0), nil)
	assert.ErrorContains(t, err, "trailing bytes")
	_, err = decodeRows[GemmRow]([]byte("PAR1"), nil)
	assert.ErrorContains(t, err, "not a rows file")
}

// selectOneKey (8 key bytes a word) picks the rows the byte-by-byte
// selection picks, and refuses a key index past the dictionary wherever
// it lies (in a word or in the tail).
func TestSelectOneKeyMatchesByteLoop(t *testing.T) {
	byteLoop := func(col []byte, kept, n int) ([]int32, bool) {
		var sel []int32
		for i, c := range col {
			if int(c) >= n {
				return nil, false
			}
			if int(c) == kept {
				sel = append(sel, int32(i))
			}
		}
		return sel, true
	}
	seed := uint64(1)
	next := func() uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return seed >> 33 }
	for trial := 0; trial < 400; trial++ {
		n := 1 + int(next()%128)
		kept := int(next() % uint64(n))
		col := make([]byte, int(next()%70))
		for i := range col {
			col[i] = byte(next() % uint64(n))
			if next()%5 == 0 {
				col[i] = byte(kept)
			}
		}
		if trial%4 == 3 && len(col) > 0 {
			col[int(next()%uint64(len(col)))] = byte(n + int(next()%uint64(256-n))) // past the dictionary
		}
		want, ok := byteLoop(col, kept, n)
		got, err := selectOneKey(col, kept, n)
		if !ok {
			require.Error(t, err, "trial %d", trial)
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		assert.Equal(t, len(want), len(got), "trial %d", trial)
		for i := range want {
			require.Equal(t, want[i], got[i], "trial %d row %d", trial, i)
		}
	}
	sel, err := selectOneKey([]byte{0, 1, 1, 0, 2, 1, 1, 1, 1, 0, 1}, 1, 3)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 5, 6, 7, 8, 10}, sel)
	for _, col := range [][]byte{
		{0, 1, 1, 0, 2, 1, 1, 1, 1, 0, 3}, // key 3 of 3 in the tail
		{0, 1, 3, 0, 2, 1, 1, 1, 1, 0, 1}, // in a word
		{0, 1, 1, 0, 2, 1, 1, 200, 1, 0, 1},
	} {
		_, err = selectOneKey(col, 1, 3)
		assert.EqualError(t, err, "corrupt rows file (key index out of range)", "%v", col)
	}
}

// A width-1 column (numbers, strings) fills the selected rows from its dictionary and
// refuses an index past the dictionary in a selected row (an unselected
// row's byte is not read).
func TestFillColumnWidth1(t *testing.T) {
	fields, err := rowFields[GemmRow]()
	require.NoError(t, err)
	m := fields[1]
	require.Equal(t, "M", m.name)
	nums := make([]uint64, 3, 256)
	nums[0], nums[1], nums[2] = 10, 20, 30
	rows := make([]GemmRow, 3)
	base, size := unsafe.Pointer(&rows[0]), unsafe.Sizeof(GemmRow{})
	sel := []int32{0, 2, 3}
	require.NoError(t, fillColumn(base, size, m, sel, 1, []byte{2, 9, 0, 1}, nums, nil))
	assert.Equal(t, []int64{30, 10, 20}, []int64{rows[0].M, rows[1].M, rows[2].M})
	for _, col := range [][]byte{{2, 0, 0, 3}, {255, 0, 0, 1}} {
		assert.EqualError(t, fillColumn(base, size, m, sel, 1, col, nums, nil), "corrupt rows file (index out of range)", "%v", col)
	}
	// A string column the same way.
	dtype := fields[0]
	require.Equal(t, "Dtype", dtype.name)
	strs := []string{"bfloat16", "fp8"}
	require.NoError(t, fillColumn(base, size, dtype, sel, 1, []byte{1, 7, 0, 1}, nil, strs))
	assert.Equal(t, []string{"fp8", "bfloat16", "fp8"}, []string{rows[0].Dtype, rows[1].Dtype, rows[2].Dtype})
	for _, col := range [][]byte{{2, 0, 0, 1}, {0, 0, 0, 255}} {
		assert.EqualError(t, fillColumn(base, size, dtype, sel, 1, col, nil, strs), "corrupt rows file (index out of range)", "%v", col)
	}
}
