package profiles

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A LazyTablesFor set is TablesForNeed's with its GEMM and attention
// rows kept in the rows form: EachGemm, EachContextAttn and
// EachGenerationAttn visit exactly TablesForNeed's rows in order, every
// other table and field is the same, h800 shares h100-sxm's, and the
// set is memoized apart from the decoded one.
func TestLazyTablesForVisitsTheRows(t *testing.T) {
	for _, hw := range []string{"h200-sxm", "h800"} {
		need := Need{GemmDtypes: []string{"fp8", "bfloat16"}, HeadDim: 128, KVDtype: "bfloat16", MoEDtypes: []string{"fp8"}}
		rows, err := TablesForNeed(hw, "", &need)
		require.NoError(t, err)
		lazy, err := LazyTablesFor(hw, "", need)
		require.NoError(t, err)
		assert.NotSame(t, rows, lazy)
		again, err := LazyTablesFor(hw, "", need)
		require.NoError(t, err)
		assert.Same(t, lazy, again)
		assert.Nil(t, lazy.Gemm)
		assert.Nil(t, lazy.ContextAttn)
		assert.Nil(t, lazy.GenerationAttn)
		gemm, context, generation := collect(t, lazy.EachGemm), collect(t, lazy.EachContextAttn), collect(t, lazy.EachGenerationAttn)
		assert.True(t, reflect.DeepEqual(rows.Gemm, gemm), hw)
		if hw == "h200-sxm" {
			assert.Len(t, gemm, 2*35742)
		}
		assert.NotEmpty(t, context, hw)
		assert.True(t, reflect.DeepEqual(rows.ContextAttn, context), hw)
		assert.True(t, reflect.DeepEqual(rows.GenerationAttn, generation), hw)
		assert.True(t, reflect.DeepEqual(rows.GenerationAttn, collect(t, rows.EachGenerationAttn)), "a decoded set's rows")
		copyOf := *lazy
		copyOf.lazy, copyOf.Gemm, copyOf.ContextAttn, copyOf.GenerationAttn = nil, rows.Gemm, rows.ContextAttn, rows.GenerationAttn
		copyOf.MoEFallback, rows.MoEFallback = nil, nil // funcs: compared apart
		assert.Equal(t, *rows, copyOf, "every other table and field")
	}
}

func collect[T any](t *testing.T, each func(func(*T)) error) []T {
	var out []T
	require.NoError(t, each(func(r *T) { out = append(out, *r) }))
	return out
}

// A row whose dictionary index is past its column's dictionary is an
// error (not a panic, not a value read past it) from every lazy reader;
// a rows form the build does not match is one too.
func TestLazyRowsRefuseABadIndex(t *testing.T) {
	rows := []GemmRow{{"bfloat16", 1, 2, 3, 0.5, 0}, {"bfloat16", 2, 2, 3, 0.7, 0}, {"fp8", 1, 2, 3, 0.4, 0}}
	data, err := encodeRows(rows, func(r *GemmRow) string { return r.Dtype })
	require.NoError(t, err)
	good := "test/good_gemm.rows"
	embeddedRows[good] = string(data)
	tb := &Tables{lazy: &lazyRows{gemm: &lazyPart{file: good, keys: []string{"bfloat16"}}}}
	g, ok, err := tb.GemmGrid("bfloat16")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, GemmGrid{M: []float64{1, 2}, N: []float64{2}, K: []float64{3}, LatencyMs: []float64{0.5, 0.7}}, g)
	assert.Equal(t, rows[:2], collect(t, tb.EachGemm))
	every := &Tables{lazy: &lazyRows{gemm: &lazyPart{file: good}}}
	g2, ok, err := every.GemmGrid("bfloat16")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, g, g2, "the same grid through the dtype column")

	// The M column (width 1, a dictionary of 2) is the first after the
	// key column: its row indices are bytes 0, 1, 0. Point one past it.
	p, err := parseRows[GemmRow](data, nil)
	require.NoError(t, err)
	m := p.column("M")
	require.Equal(t, 1, m.width)
	bad := []byte(string(data))
	at := int(uintptr(unsafe.Pointer(&m.col[0])) - uintptr(unsafe.Pointer(&data[0]))) // parseRows reads in place
	bad[at+1] = 7
	file := "test/bad_gemm.rows"
	embeddedRows[file] = string(bad)
	defer func() { delete(embeddedRows, file); delete(embeddedRows, good) }()
	tb = &Tables{lazy: &lazyRows{gemm: &lazyPart{file: file, keys: []string{"bfloat16"}}}}
	_, _, err = tb.GemmGrid("bfloat16")
	assert.ErrorContains(t, err, "index out of range", "1-byte columns of one dtype (gemmGridBytes)")
	assert.ErrorContains(t, tb.EachGemm(func(*GemmRow) {}), "index out of range")
	tb = &Tables{lazy: &lazyRows{gemm: &lazyPart{file: file}}} // every row: the dtype column read
	_, _, err = tb.GemmGrid("bfloat16")
	assert.ErrorContains(t, err, "index out of range")
}

// A 2-byte number column (its dictionary read in place: fillRaw,
// rowsColumn.decode) reads every value, and refuses an index past its
// dictionary, decoded into rows or read by GemmGrid.
func TestRawDictionaryColumns(t *testing.T) {
	var rows []GemmRow
	for i := range 1200 { // 300 m values: a 2-byte column
		rows = append(rows, GemmRow{Dtype: "bfloat16", M: int64(i%300 + 1), N: 8, K: 16, LatencyMs: float64(i%300+1) / 7})
	}
	data, err := encodeRows(rows, func(r *GemmRow) string { return r.Dtype })
	require.NoError(t, err)
	p, err := parseRows[GemmRow](data, nil)
	require.NoError(t, err)
	m := p.column("M")
	require.Equal(t, 2, m.width)
	require.Nil(t, m.nums)
	require.Len(t, m.raw, 8*300)
	got, err := decodeRows[GemmRow](data, nil)
	require.NoError(t, err)
	assert.Equal(t, rows, got)
	good := "test/raw_gemm.rows"
	embeddedRows[good] = string(data)
	tb := &Tables{lazy: &lazyRows{gemm: &lazyPart{file: good}}}
	g, ok, err := tb.GemmGrid("bfloat16")
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, g.M, 300)
	assert.Equal(t, []float64{1, 2, 3}, g.M[:3])
	assert.Equal(t, 300.0/7, g.LatencyMs[299])

	bad := []byte(string(data))
	at := int(uintptr(unsafe.Pointer(&m.col[0])) - uintptr(unsafe.Pointer(&data[0])))
	bad[at+2*5], bad[at+2*5+1] = 0xff, 0xff // row 5's m: index 65,535 of 300
	_, err = decodeRows[GemmRow](bad, nil)
	assert.ErrorContains(t, err, "index out of range")
	file := "test/raw_bad_gemm.rows"
	embeddedRows[file] = string(bad)
	defer func() { delete(embeddedRows, file); delete(embeddedRows, good) }()
	_, _, err = (&Tables{lazy: &lazyRows{gemm: &lazyPart{file: file}}}).GemmGrid("bfloat16")
	assert.ErrorContains(t, err, "index out of range")
}

// A LazyTablesFor set says so (Lazy), and the functions that read the row
// fields it leaves nil refuse it loudly instead of seeing no rows.
func TestLazySetRefusedByDecodedReaders(t *testing.T) {
	need := Need{GemmDtypes: []string{"bfloat16"}, HeadDim: 128, KVDtype: "bfloat16"}
	lazy, err := LazyTablesFor("h200-sxm", "", need)
	require.NoError(t, err)
	rows, err := TablesForNeed("h200-sxm", "", &need)
	require.NoError(t, err)
	assert.True(t, lazy.Lazy())
	assert.False(t, rows.Lazy())
	assert.PanicsWithValue(t, "profiles: Describe reads decoded rows; a LazyTablesFor set keeps them undecoded (use the Each methods)",
		func() { Describe(lazy) })
	assert.Panics(t, func() { CompareTables(rows, lazy) })
	assert.Panics(t, func() { Overlay(rows, lazy) })
	assert.Panics(t, func() { _ = WriteTables(t.TempDir(), lazy) })
	assert.NotPanics(t, func() { Describe(rows) })
	assert.Equal(t, len(rows.Gemm), Describe(rows)[0].Rows)
}
