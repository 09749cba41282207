package profiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"sync"
	"unsafe"
)

// This file is the embedded tables' pre-decoded form ("rows" files): a
// table's rows as the loader produced them from the parquet file, stored
// column by column so that start-up copies values instead of decoding
// parquet (decoding the H200 set took ~0.3 s; a run's part of the rows
// form takes ~1 ms). `go generate ./profiles` writes one <table>.rows next
// to every <table>.parquet under data/aiconfigurator, and
// TestEmbeddedRowsCurrent fails when one is missing or stale.
//
// Every row carries a partition key (the GEMM dtype, the attention
// head_dim/kv_cache_dtype, ...), so a run decodes only the rows it prices
// from (see Need), in file order.
//
// Layout (little-endian): rowsMagic; the row type's name and its fields
// (name, kind) in declaration order, which decoding checks against the Go
// struct (a changed struct is an error that says to regenerate); the row
// count; the partition key column; then one column per field. A column is
// a value width (0: one value for every row, 1 or 2:
// a dictionary of distinct values and an index per row, 8: the raw 64
// bits per row; strings always use a dictionary).

const rowsMagic = "frontier rows v1\n"

// Field kinds of a row struct: every table row is made of these.
const (
	kindInt    byte = 1
	kindFloat  byte = 2
	kindString byte = 3
)

// rowField is one field of a row struct as the rows form stores it.
type rowField struct {
	name   string
	kind   byte
	offset uintptr
}

// rowFields describes T's fields; every field must be an int64, a float64
// or a string.
func rowFields[T any]() ([]rowField, error) {
	typ := reflect.TypeFor[T]()
	out := make([]rowField, typ.NumField())
	for i := range out {
		f := typ.Field(i)
		out[i] = rowField{name: f.Name, offset: f.Offset}
		switch f.Type.Kind() {
		case reflect.Int64:
			out[i].kind = kindInt
		case reflect.Float64:
			out[i].kind = kindFloat
		case reflect.String:
			out[i].kind = kindString
		default:
			return nil, fmt.Errorf("rows form: %s.%s is a %s (want int64, float64 or string)", typ.Name(), f.Name, f.Type)
		}
	}
	return out, nil
}

// encodeRows writes rows in the rows form, partitioned by key (nil: one
// partition).
func encodeRows[T any](rows []T, key func(*T) string) ([]byte, error) {
	fields, err := rowFields[T]()
	if err != nil {
		return nil, err
	}
	if len(rows) > math.MaxUint32 {
		return nil, fmt.Errorf("rows form: %d rows is too many", len(rows))
	}
	var w rowsWriter
	w.bytes([]byte(rowsMagic))
	w.str(reflect.TypeFor[T]().Name())
	w.u32(len(fields))
	for _, f := range fields {
		w.str(f.name)
		w.buf = append(w.buf, f.kind)
	}
	w.u32(len(rows))
	// The partition key of every row, as a column of its own.
	keys := make([]string, len(rows))
	if key != nil {
		for i := range rows {
			keys[i] = key(&rows[i])
		}
	}
	if err := writeColumn(&w, keys, w.str); err != nil {
		return nil, fmt.Errorf("rows form: partition key: %w", err)
	}
	base := unsafe.Pointer(unsafe.SliceData(rows))
	size := unsafe.Sizeof(*new(T))
	for _, f := range fields {
		at := func(i int) unsafe.Pointer { return unsafe.Add(base, uintptr(i)*size+f.offset) }
		if f.kind == kindString {
			vals := make([]string, len(rows))
			for i := range rows {
				vals[i] = *(*string)(at(i))
			}
			if err := writeColumn(&w, vals, w.str); err != nil {
				return nil, fmt.Errorf("rows form: %s: %w", f.name, err)
			}
			continue
		}
		vals := make([]uint64, len(rows))
		for i := range rows {
			vals[i] = *(*uint64)(at(i)) // an int64 or a float64's bits
		}
		if err := writeColumn(&w, vals, w.u64); err != nil {
			return nil, fmt.Errorf("rows form: %s: %w", f.name, err)
		}
	}
	return w.buf, nil
}

type rowsWriter struct{ buf []byte }

func (w *rowsWriter) bytes(b []byte) { w.buf = append(w.buf, b...) }
func (w *rowsWriter) u32(v int)      { w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(v)) }
func (w *rowsWriter) u64(v uint64)   { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }
func (w *rowsWriter) str(s string)   { w.u32(len(s)); w.buf = append(w.buf, s...) }

// writeColumn writes one column: a dictionary of the distinct values with
// a 1- or 2-byte index per row (no index when every row holds the same
// value) when there are at most 65,536 of them, else (numbers only) the
// raw values.
func writeColumn[V comparable](w *rowsWriter, vals []V, put func(V)) error {
	var dict []V
	index := map[V]int{}
	for _, v := range vals {
		if _, ok := index[v]; !ok && len(dict) <= 1<<16 {
			index[v] = len(dict)
			dict = append(dict, v)
		}
	}
	width := 8
	switch {
	case len(dict) <= 1:
		width = 0
	case len(dict) <= 1<<8:
		width = 1
	case len(dict) <= 1<<16:
		width = 2
	}
	if width == 8 {
		raw, ok := any(vals).([]uint64)
		if !ok {
			return fmt.Errorf("more than %d distinct strings", 1<<16)
		}
		w.buf = append(w.buf, 8)
		for _, v := range raw {
			w.u64(v)
		}
		return nil
	}
	w.buf = append(w.buf, byte(width))
	w.u32(len(dict))
	for _, v := range dict {
		put(v)
	}
	for _, v := range vals {
		switch width {
		case 1:
			w.buf = append(w.buf, byte(index[v]))
		case 2:
			w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(index[v]))
		}
	}
	return nil
}

// errStaleRows says how to fix rows files that do not match the code.
var errStaleRows = errors.New("the embedded rows files do not match this build's row types: run go generate ./profiles")

// rowsReader reads the rows form; the first error sticks.
type rowsReader struct {
	b   []byte
	at  int
	err error
}

func (r *rowsReader) take(n int) []byte {
	if r.err != nil || n < 0 || r.at+n > len(r.b) {
		if r.err == nil {
			r.err = errors.New("truncated rows file")
		}
		return nil
	}
	out := r.b[r.at : r.at+n]
	r.at += n
	return out
}

func (r *rowsReader) u32() int {
	if b := r.take(4); b != nil {
		return int(binary.LittleEndian.Uint32(b))
	}
	return 0
}

func (r *rowsReader) u8() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *rowsReader) str() string { return string(r.take(r.u32())) }

// decodeRows reads a rows file into []T, keeping the rows whose partition
// key keep accepts (nil keeps every row), in file order.
func decodeRows[T any](data []byte, keep func(key string) bool) ([]T, error) {
	p, err := parseRows[T](data, keep)
	if err != nil {
		return nil, err
	}
	var rows []T
	if len(p.sel) > 0 {
		rows = make([]T, len(p.sel))
	}
	if err := p.fill(unsafe.Pointer(unsafe.SliceData(rows)), unsafe.Sizeof(*new(T)), p.sel); err != nil {
		return nil, err
	}
	return rows, nil
}

// rowsPart is a rows file read up to its values: the rows a partition
// selection kept (sel, file row numbers in file order) and every field's
// column, which fill copies into row structs.
type rowsPart struct {
	sel  []int32
	cols []rowsColumn
	// byShape memoizes an attention part's rows by head shape
	// (rows_attn.go).
	byShape struct {
		once sync.Once
		idx  *attnShapeIndex
	}
}

// rowsColumn is one field's column: width bytes per file row (0, 1, 2:
// indices into nums, raw or strs, 8: raw values).
type rowsColumn struct {
	field rowField
	width int
	col   []byte
	nums  []uint64 // a number dictionary of a 0- or 1-byte column
	raw   []byte   // a 2-byte number column's dictionary in place (fillRaw)
	strs  []string
}

// fill stores every field of the selected rows sel (a slice of p.sel)
// into the rows at base, size bytes apart.
func (p *rowsPart) fill(base unsafe.Pointer, size uintptr, sel []int32) error {
	for _, c := range p.cols {
		var err error
		if c.raw != nil {
			err = fillRaw(unsafe.Add(base, c.field.offset), size, sel, c.col, c.raw)
		} else {
			err = fillColumn(base, size, c.field, sel, c.width, c.col, c.nums, c.strs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseRows reads a rows file of T up to its values (rowsPart), keeping
// the rows whose partition key keep accepts (nil keeps every row).
func parseRows[T any](data []byte, keep func(key string) bool) (*rowsPart, error) {
	fields, err := rowFields[T]()
	if err != nil {
		return nil, err
	}
	r := &rowsReader{b: data}
	if string(r.take(len(rowsMagic))) != rowsMagic {
		return nil, errors.New("not a rows file")
	}
	if name := r.str(); name != reflect.TypeFor[T]().Name() && r.err == nil {
		return nil, fmt.Errorf("rows of %s, want %s: %w", name, reflect.TypeFor[T]().Name(), errStaleRows)
	}
	if n := r.u32(); n != len(fields) && r.err == nil {
		return nil, fmt.Errorf("%d fields, want %d: %w", n, len(fields), errStaleRows)
	}
	for _, f := range fields {
		if name, kind := r.str(), r.u8(); (name != f.name || kind != f.kind) && r.err == nil {
			return nil, fmt.Errorf("field %s, want %s: %w", name, f.name, errStaleRows)
		}
	}
	total := r.u32()
	p := &rowsPart{cols: make([]rowsColumn, 0, len(fields))}
	if width := r.u8(); width == 0 || width == 1 || width == 2 {
		keys := make([]bool, r.u32())
		for i := range keys {
			k := r.str()
			keys[i] = keep == nil || keep(k)
		}
		col := r.take(int(width) * total)
		if r.err == nil && len(keys) == 0 && total > 0 {
			return nil, errors.New("corrupt rows file (no partition key)")
		}
		if r.err == nil {
			var err error
			if p.sel, err = selectRows(col, int(width), total, keys); err != nil {
				return nil, err
			}
		}
	} else if r.err == nil {
		return nil, fmt.Errorf("corrupt rows file (key column width %d)", width)
	}
	if r.err != nil {
		return nil, r.err
	}
	for _, f := range fields {
		c := rowsColumn{field: f, width: int(r.u8())}
		if c.width != 8 {
			n := r.u32()
			if f.kind == kindString {
				c.strs = make([]string, n)
				for i := range c.strs {
					c.strs[i] = r.str()
				}
			} else if b := r.take(8 * n); c.width == 2 {
				c.raw = b
			} else {
				c.nums = make([]uint64, n, max(n, 256)) // fillColumn indexes 256 by a byte
				if b != nil {
					for i := range c.nums {
						c.nums[i] = binary.LittleEndian.Uint64(b[8*i:])
					}
				}
			}
			if n == 0 && total > 0 && r.err == nil {
				return nil, errors.New("corrupt rows file (empty dictionary)")
			}
		} else if f.kind == kindString {
			return nil, errors.New("corrupt rows file (raw string column)")
		}
		if c.width != 0 && c.width != 1 && c.width != 2 && c.width != 8 {
			return nil, fmt.Errorf("corrupt rows file (column width %d)", c.width)
		}
		c.col = r.take(c.width * total)
		if r.err != nil {
			return nil, r.err
		}
		p.cols = append(p.cols, c)
	}
	if r.at != len(r.b) {
		return nil, errors.New("corrupt rows file (trailing bytes)")
	}
	return p, nil
}

// selectRows lists the rows (of total, in a key column of width 0, 1 or
// 2 bytes per row) whose key keys marks kept. A width-1 column, every
// table's, reads a 256-entry state per byte: one load and one test a row.
func selectRows(col []byte, width, total int, keys []bool) ([]int32, error) {
	sel := make([]int32, 0, total)
	if width != 1 {
		for i := 0; i < total; i++ {
			k := dictIndex(col, width, i)
			if k >= len(keys) {
				return nil, errors.New("corrupt rows file (key index out of range)")
			}
			if keys[k] {
				sel = append(sel, int32(i))
			}
		}
		return sel, nil
	}
	if kept, ok := oneKey(keys); ok {
		return selectOneKey(col[:total], kept, len(keys))
	}
	const (
		drop = iota
		keep
		bad // no such key
	)
	var state [256]byte
	for k := range state {
		switch {
		case k >= len(keys):
			state[k] = bad
		case keys[k]:
			state[k] = keep
		}
	}
	for i, c := range col[:total] {
		if s := state[c]; s != drop {
			if s == bad {
				return nil, errors.New("corrupt rows file (key index out of range)")
			}
			sel = append(sel, int32(i))
		}
	}
	return sel, nil
}

// oneKey is the index of the only key keys marks kept, when there is
// exactly one and every key index fits in 7 bits (selectOneKey's word
// tests).
func oneKey(keys []bool) (int, bool) {
	kept := -1
	for k, ok := range keys {
		if ok {
			if kept >= 0 {
				return 0, false
			}
			kept = k
		}
	}
	return kept, kept >= 0 && len(keys) <= 128
}

// selectOneKey is selectRows of a width-1 key column where only key kept
// (of n ≤ 128 keys) is kept: it tests 8 rows a word (a run's usual
// partition, one GEMM dtype or one attention head_dim, is a third of a
// table's rows or less: most words hold one match or none), where the
// byte loop took ~8 instructions a row.
func selectOneKey(col []byte, kept, n int) ([]int32, error) {
	const ones, highs, lows = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	sel := make([]int32, 0, len(col))
	pattern := uint64(kept) * ones
	over := uint64(128-n) * ones // a byte b < 128 is ≥ n when b + 128 − n sets its high bit
	var bad uint64
	i := 0
	for ; i+8 <= len(col); i += 8 {
		w := binary.LittleEndian.Uint64(col[i:])
		bad |= ((w & lows) + over) | w
		x := w ^ pattern
		m := ^(((x & lows) + lows) | x | lows) // high bit of each byte equal to kept
		for m != 0 {
			sel = append(sel, int32(i+bits.TrailingZeros64(m)>>3))
			m &= m - 1
		}
	}
	for ; i < len(col); i++ {
		bad |= uint64(col[i]) + uint64(128-n) | uint64(col[i])
		if int(col[i]) == kept {
			sel = append(sel, int32(i))
		}
	}
	if bad&highs != 0 {
		return nil, errors.New("corrupt rows file (key index out of range)")
	}
	return sel, nil
}

// fillColumn stores field f of the selected rows (row sel[j] of the file
// into rows[j] at base, size bytes apart) from a column of width bytes
// per row: indices into nums or strs, or raw values (width 8). One loop
// per case, each a few instructions per row.
func fillColumn(base unsafe.Pointer, size uintptr, f rowField, sel []int32, width int, col []byte, nums []uint64, strs []string) error {
	if len(sel) == 0 {
		return nil
	}
	first := unsafe.Add(base, f.offset) // field f of the first row
	bad := false
	switch {
	case width == 8:
		for j, i := range sel {
			*(*uint64)(unsafe.Add(first, uintptr(j)*size)) = binary.LittleEndian.Uint64(col[8*i:])
		}
	case f.kind == kindString && width == 1 && len(strs) <= 256:
		var dict [256]string
		copy(dict[:], strs)
		bad = !fillWidth1(first, size, sel, col, &dict, len(strs))
	case f.kind == kindString:
		for j, i := range sel {
			k := dictIndex(col, width, int(i))
			if k >= len(strs) {
				bad = true
				break
			}
			*(*string)(unsafe.Add(first, uintptr(j)*size)) = strs[k]
		}
	case width == 0:
		for j := range sel {
			*(*uint64)(unsafe.Add(first, uintptr(j)*size)) = nums[0]
		}
	case width == 1:
		// nums has room for 256 (zeros past the dictionary).
		bad = !fillWidth1(first, size, sel, col, (*[256]uint64)(nums[:256:256]), len(nums))
	default:
		for j, i := range sel {
			k := int(binary.LittleEndian.Uint16(col[2*i:]))
			if k >= len(nums) {
				bad = true
				break
			}
			*(*uint64)(unsafe.Add(first, uintptr(j)*size)) = nums[k]
		}
	}
	if bad {
		return errors.New("corrupt rows file (index out of range)")
	}
	return nil
}

// fillWidth1 stores dict[col[i]] for each selected row i into the rows
// from first, size bytes apart, of a width-1 column whose dictionary
// holds n values (dict has room for every byte); false when an index is
// past them. past[c] (1 past the dictionary), ORed into marks, tests
// that in the same loop without a branch; sel's indices are below
// total, col's length (decodeRows took width × total bytes), so col is
// read without bounds checks.
func fillWidth1[V any](first unsafe.Pointer, size uintptr, sel []int32, col []byte, dict *[256]V, n int) bool {
	var past [256]byte
	for c := n; c < len(past); c++ {
		past[c] = 1
	}
	at := unsafe.Pointer(unsafe.SliceData(col))
	var marks byte
	for j, i := range sel {
		c := *(*byte)(unsafe.Add(at, i))
		marks |= past[c]
		*(*V)(unsafe.Add(first, uintptr(j)*size)) = dict[c]
	}
	return marks == 0
}

// fillRaw stores field values of the selected rows (row sel[j] of the
// file into the row at first + j·size) from a 2-byte index column into
// raw, a dictionary read in place, 8 bytes a value. A 2-byte column's
// dictionary holds up to 65,536 values (an H200 attention table's
// latencies: 16,868 and 23,630); copying it out of the file first was
// ~320 KB of fresh heap for a one-request run.
func fillRaw(first unsafe.Pointer, size uintptr, sel []int32, col, raw []byte) error {
	n := len(raw) / 8
	for j, i := range sel {
		k := int(binary.LittleEndian.Uint16(col[2*int(i):]))
		if k >= n {
			return errors.New("corrupt rows file (index out of range)")
		}
		*(*uint64)(unsafe.Add(first, uintptr(j)*size)) = binary.LittleEndian.Uint64(raw[8*k:])
	}
	return nil
}

// dictIndex is row i's dictionary index in a column of width 0, 1 or 2
// bytes per row.
func dictIndex(col []byte, width, i int) int {
	switch width {
	case 1:
		return int(col[i])
	case 2:
		return int(binary.LittleEndian.Uint16(col[2*i:]))
	}
	return 0
}
