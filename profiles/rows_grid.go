package profiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// This file reads the GEMM and attention parts a LazyTablesFor set keeps
// (rows_lazy.go) the way a predictor builds its grids from them, field
// by field from the columns: no row struct, and a GEMM grid's axes from
// the columns' dictionaries (the distinct values the rows index).

// GemmGrid is the GEMM rows of one dtype on their (m, n, k) grid, as
// predictor.NewGemm builds it from rows.
type GemmGrid struct {
	M, N, K []float64 // distinct m, n and k of the dtype's rows, ascending (GEMM dimensions, elements; aiconfigurator's gemm_perf table)
	// LatencyMs is by (in·len(K) + ik)·len(M) + im: the latency of the
	// last row at that point with a positive latency, NaN where none.
	LatencyMs []float64
}

// GemmGrid is dtype's GEMM grid read from a LazyTablesFor set's rows
// form; ok is false when t holds its GEMM rows decoded (Gemm) or their
// m/n/k columns are not dictionaries: build it from the rows then
// (t.EachGemm reads them in either form). A dtype without rows gives
// empty axes.
func (t *Tables) GemmGrid(dtype string) (g GemmGrid, ok bool, err error) {
	if t.lazy == nil || t.lazy.gemm == nil {
		return g, false, nil
	}
	part := t.lazy.gemm
	p, err := parsedPart[GemmRow](part.file, part.keys)
	if err != nil {
		return g, false, err
	}
	dt, m, n, k, lat := p.column("Dtype"), p.column("M"), p.column("N"), p.column("K"), p.column("LatencyMs")
	if dt == nil || m == nil || n == nil || k == nil || lat == nil {
		return g, false, errStaleRows
	}
	if m.width > 2 || n.width > 2 || k.width > 2 {
		return g, false, nil
	}
	want := uint64(slices.Index(dt.strs, dtype))
	if want == math.MaxUint64 { // not in the dictionary: no row
		return g, true, nil
	}
	cols := []*rowsColumn{m, n, k, lat, dt}
	if slices.Equal(part.keys, []string{dtype}) {
		cols = cols[:4] // the partition is the dtype: every row is one
		if m.width == 1 && n.width == 1 && k.width == 1 && lat.width == 8 {
			return gemmGridBytes(p.sel, m, n, k, lat)
		}
	}
	of := func(v [][]uint64, j int) bool { return len(v) == 4 || v[4][j] == want }
	// The dictionary entries the dtype's rows use, then each one's place
	// on its axis.
	dm, dn, dk := m.numbers(), n.numbers(), k.numbers()
	usedM, usedN, usedK := make([]bool, len(dm)), make([]bool, len(dn)), make([]bool, len(dk))
	err = p.chunks(cols, 0b10111, func(v [][]uint64) {
		for j := range v[0] {
			if of(v, j) {
				usedM[v[0][j]], usedN[v[1][j]], usedK[v[2][j]] = true, true, true
			}
		}
	})
	if err != nil {
		return g, false, fmt.Errorf("embedded tables %s: %w", part.file, err)
	}
	var atM, atN, atK []int
	g.M, atM = dictAxis(dm, usedM)
	g.N, atN = dictAxis(dn, usedN)
	g.K, atK = dictAxis(dk, usedK)
	g.LatencyMs = make([]float64, len(g.M)*len(g.N)*len(g.K))
	for i := range g.LatencyMs {
		g.LatencyMs[i] = math.NaN()
	}
	err = p.chunks(cols, 0b10111, func(v [][]uint64) {
		for j := range v[0] {
			if ms := math.Float64frombits(v[3][j]); ms > 0 && of(v, j) {
				g.LatencyMs[(atN[v[1][j]]*len(g.K)+atK[v[2][j]])*len(g.M)+atM[v[0][j]]] = ms
			}
		}
	})
	if err != nil {
		return g, false, fmt.Errorf("embedded tables %s: %w", part.file, err)
	}
	return g, true, nil
}

// gemmGridBytes is GemmGrid where every selected row is of the dtype
// and m, n and k are 1-byte dictionary indices, latency raw bits (every
// embedded GEMM table): two loops over the rows reading the columns in
// place, no buffer; 256-entry tables take any byte, and one past a
// dictionary is refused after the first loop.
func gemmGridBytes(sel []int32, m, n, k, lat *rowsColumn) (g GemmGrid, ok bool, err error) {
	cm, cn, ck, cl := m.col, n.col, k.col, lat.col
	var usedM, usedN, usedK [256]bool
	markUsed(sel, cm, cn, ck, &usedM, &usedN, &usedK)
	if slices.Contains(usedM[len(m.nums):], true) || slices.Contains(usedN[len(n.nums):], true) || slices.Contains(usedK[len(k.nums):], true) {
		return g, false, errors.New("corrupt rows file (index out of range)")
	}
	var atM, atN, atK [256]int
	g.M = bytesAxis(m.nums, &usedM, &atM)
	g.N = bytesAxis(n.nums, &usedN, &atN)
	g.K = bytesAxis(k.nums, &usedK, &atK)
	g.LatencyMs = make([]float64, len(g.M)*len(g.N)*len(g.K))
	for i := range g.LatencyMs {
		g.LatencyMs[i] = math.NaN()
	}
	// A row's place, (atN·len(K) + atK)·len(M) + atM, as a sum of one
	// offset per axis.
	nk, nm := len(g.K), len(g.M)
	for b := range atN {
		atN[b] *= nk * nm
		atK[b] *= nm
	}
	fillGrid(g.LatencyMs, sel, cm, cn, ck, cl, &atM, &atN, &atK)
	return g, true, nil
}

// markUsed marks the m, n and k dictionary entries the selected rows use
// (a function of its own, as fillGrid: written inside gemmGridBytes, the
// two loops kept their values on the stack, ~80 instructions a row for
// both where they are ~60 now).
func markUsed(sel []int32, cm, cn, ck []byte, usedM, usedN, usedK *[256]bool) {
	cn, ck = cn[:len(cm)], ck[:len(cm)]
	for _, i := range sel {
		usedM[cm[i]], usedN[cn[i]], usedK[ck[i]] = true, true, true
	}
}

// fillGrid stores each selected row's positive latency (raw bits in cl)
// in grid at offM + offN + offK of its m, n and k indices.
func fillGrid(grid []float64, sel []int32, cm, cn, ck, cl []byte, offM, offN, offK *[256]int) {
	cn, ck = cn[:len(cm)], ck[:len(cm)]
	for _, i := range sel {
		if ms := math.Float64frombits(binary.LittleEndian.Uint64(cl[8*int(i):])); ms > 0 {
			grid[offN[cn[i]]+offK[ck[i]]+offM[cm[i]]] = ms
		}
	}
}

// bytesAxis is dictAxis for a 1-byte column, its indices in at.
func bytesAxis(dict []uint64, used *[256]bool, at *[256]int) []float64 {
	vals, idx := dictAxis(dict, used[:len(dict)])
	copy(at[:], idx)
	return vals
}

// dictAxis is the ascending distinct values (int64 bits in dict) that
// used marks, and each dictionary entry's index among them.
func dictAxis(dict []uint64, used []bool) ([]float64, []int) {
	var vals []float64
	for j, u := range used {
		if u {
			vals = append(vals, float64(int64(dict[j])))
		}
	}
	slices.Sort(vals)
	vals = slices.Compact(vals) // a dictionary holds each value once; kept for safety
	at := make([]int, len(dict))
	for j, u := range used {
		if u {
			at[j], _ = slices.BinarySearch(vals, float64(int64(dict[j])))
		}
	}
	return vals, at
}

// AttnPoints calls fn, in table order, for each row of an attention
// table (context: ContextAttn, else GenerationAttn) of a LazyTablesFor
// set with head_dim headDim, kv_cache_dtype kvDtype, attn_dtype
// bfloat16, window_size 0 and a positive latency: the rows
// predictor.NewAttention reads, given as it reads them (x is ISL for
// context attention, Step for generation). ok is false when t holds the
// rows decoded: read ContextAttn or GenerationAttn then.
func (t *Tables) AttnPoints(context bool, headDim int64, kvDtype string, fn func(heads, kvHeads, batch, x int64, ms float64)) (ok bool, err error) {
	part, xName := (*lazyPart)(nil), "Step"
	if t.lazy != nil {
		part = t.lazy.generation
		if context {
			part, xName = t.lazy.context, "ISL"
		}
	}
	if part == nil {
		return false, nil
	}
	p, err := parsedPart[AttnRow](part.file, part.keys)
	if err != nil {
		return false, err
	}
	cols := []*rowsColumn{p.column("NumHeads"), p.column("NumKVHeads"), p.column("BatchSize"), p.column(xName),
		p.column("LatencyMs"), p.column("AttnDtype"), p.column("KVCacheDtype"), p.column("HeadDim"), p.column("WindowSize")}
	if slices.Contains(cols, nil) {
		return false, errStaleRows
	}
	wantAttn, wantKV := uint64(slices.Index(cols[5].strs, "bfloat16")), uint64(slices.Index(cols[6].strs, kvDtype))
	if wantKV == math.MaxUint64 || wantAttn == math.MaxUint64 { // no row
		return true, nil
	}
	if slices.Equal(part.keys, []string{attnKey(headDim, kvDtype, 0)}) {
		cols = cols[:6] // the partition is the head_dim, KV dtype and no window
	}
	err = p.chunks(cols, 0, func(v [][]uint64) {
		for j := range v[0] {
			ms := math.Float64frombits(v[4][j])
			if ms <= 0 || v[5][j] != wantAttn || len(v) > 6 && (v[6][j] != wantKV || int64(v[7][j]) != headDim || v[8][j] != 0) {
				continue
			}
			fn(int64(v[0][j]), int64(v[1][j]), int64(v[2][j]), int64(v[3][j]), ms)
		}
	})
	if err != nil {
		return true, fmt.Errorf("embedded tables %s: %w", part.file, err)
	}
	return true, nil
}

// gridChunk is how many rows chunks decodes at a time.
const gridChunk = 512

// chunks decodes cols for the selected rows, gridChunk rows at a time,
// and calls fn with each column's values (v[c][j]: column c of the j-th
// row of the chunk): a number's value (its dictionary index where bit c
// of index is set), a string's dictionary index. An error is an index
// past a dictionary (fn has not seen its chunk).
func (p *rowsPart) chunks(cols []*rowsColumn, index uint, fn func(v [][]uint64)) error {
	buf := make([]uint64, len(cols)*gridChunk)
	v := make([][]uint64, len(cols))
	for at := 0; at < len(p.sel); at += gridChunk {
		sel := p.sel[at:min(at+gridChunk, len(p.sel))]
		for c, col := range cols {
			v[c] = buf[c*gridChunk : c*gridChunk+len(sel)]
			if !col.decode(sel, v[c], index>>c&1 == 1 || col.field.kind == kindString) {
				return errors.New("corrupt rows file (index out of range)")
			}
		}
		fn(v)
	}
	return nil
}

// column is the field named name's column (nil: none).
func (p *rowsPart) column(name string) *rowsColumn {
	for i := range p.cols {
		if p.cols[i].field.name == name {
			return &p.cols[i]
		}
	}
	return nil
}

// decode stores the selected rows' values (index: their dictionary
// indices; a raw column has none) into out (len(sel) long), one loop per
// width; false when an index is past the dictionary.
func (c *rowsColumn) decode(sel []int32, out []uint64, index bool) bool {
	col, nums, raw, n := c.col, c.nums, c.raw, c.size() // locals: out's stores cannot move them
	out = out[:len(sel)]
	top := 0 // the largest index read
	switch {
	case c.width == 0:
		v := uint64(0)
		if !index {
			v = nums[0]
		}
		for j := range out {
			out[j] = v
		}
	case c.width == 1 && index:
		for j, i := range sel {
			k := col[i]
			top = max(top, int(k))
			out[j] = uint64(k)
		}
	case c.width == 1:
		dict := (*[256]uint64)(nums[:256]) // parseRows gives it room
		for j, i := range sel {
			k := col[i]
			top = max(top, int(k))
			out[j] = dict[k]
		}
	case c.width == 2:
		for j, i := range sel {
			k := int(binary.LittleEndian.Uint16(col[2*int(i):]))
			if k >= n {
				return false
			}
			out[j] = uint64(k)
			if !index {
				out[j] = binary.LittleEndian.Uint64(raw[8*k:])
			}
		}
	default:
		for j, i := range sel {
			out[j] = binary.LittleEndian.Uint64(col[8*int(i):])
		}
		return !index
	}
	return top < n
}

// size is how many values the column's dictionary holds.
func (c *rowsColumn) size() int {
	switch {
	case c.field.kind == kindString:
		return len(c.strs)
	case c.raw != nil:
		return len(c.raw) / 8
	}
	return len(c.nums)
}

// numbers is a number column's dictionary (a 2-byte one's copied out).
func (c *rowsColumn) numbers() []uint64 {
	if c.raw == nil {
		return c.nums
	}
	out := make([]uint64, len(c.raw)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(c.raw[8*i:])
	}
	return out
}
