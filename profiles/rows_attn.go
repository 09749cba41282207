package profiles

import (
	"encoding/binary"
	"math"
	"slices"
)

// This file reads an attention part of a LazyTablesFor set by head shape
// (AttnShapes, AttnShapePoints): the rows AttnPoints visits, but where
// AttnPoints decodes every column of every row of the part for each
// call, these read the query and KV head columns' one-byte dictionary
// indices in place and decode a row's other values only when it is of
// the shape asked. A predictor counts the shapes once and reads the
// points of the one or two it prices: a one-request Llama-2-7b process
// spent 8.5 M of its 29 M instructions in AttnPoints' four passes over
// ~10,000 rows each.

// AttnShape is one (query heads, KV heads) shape of the rows AttnPoints
// visits and how many of them it has.
type AttnShape struct {
	Heads, KVHeads int64
	Rows           int
}

// attnByShape is an attention part whose columns AttnShapes reads in
// place: the part is exactly one head_dim, KV dtype and window (every
// row is of them), the head columns are one-byte dictionaries (or one
// value), attn_dtype a dictionary of at most 256 strings, and every index lies inside its dictionary.
type attnByShape struct {
	sel                 []int32
	heads, kv, batch, x *rowsColumn
	lat                 *rowsColumn // LatencyMs: a float64's bits
	attn                []byte      // AttnDtype's indices (nil: one value)
	wantAttn            byte
}

// attnShapeView is the part AttnPoints(context, headDim, kvDtype) reads,
// when it is in the form attnByShape reads; ok is false when it is not
// (t holds decoded rows, or the columns are stored otherwise: use
// AttnPoints then). none is true when no row can match (the dtype is in
// no dictionary): AttnPoints visits no row then.
func (t *Tables) attnShapeView(context bool, headDim int64, kvDtype string) (v attnByShape, none, ok bool, err error) {
	part, xName := (*lazyPart)(nil), "Step"
	if t.lazy != nil {
		part = t.lazy.generation
		if context {
			part, xName = t.lazy.context, "ISL"
		}
	}
	if part == nil || !slices.Equal(part.keys, []string{attnKey(headDim, kvDtype, 0)}) {
		return v, false, false, nil
	}
	p, err := parsedPart[AttnRow](part.file, part.keys)
	if err != nil {
		return v, false, false, err
	}
	h, kv, batch, x := p.column("NumHeads"), p.column("NumKVHeads"), p.column("BatchSize"), p.column(xName)
	lat, attn, kvd := p.column("LatencyMs"), p.column("AttnDtype"), p.column("KVCacheDtype")
	if h == nil || kv == nil || batch == nil || x == nil || lat == nil || attn == nil || kvd == nil ||
		p.column("HeadDim") == nil || p.column("WindowSize") == nil {
		return v, false, false, nil // AttnPoints says errStaleRows
	}
	wantAttn, wantKV := slices.Index(attn.strs, "bfloat16"), slices.Index(kvd.strs, kvDtype)
	if wantAttn < 0 || wantKV < 0 {
		return v, true, true, nil
	}
	if h.width > 1 || kv.width > 1 || attn.width > 1 || wantAttn > 255 {
		return v, false, false, nil
	}
	if !p.rangeChecked(h, kv, batch, x, lat, attn) {
		return v, false, false, nil
	}
	v = attnByShape{sel: p.sel, heads: h, kv: kv, batch: batch, x: x, lat: lat, wantAttn: byte(wantAttn)}
	if attn.width == 1 {
		v.attn = attn.col
	}
	return v, false, true, nil
}

// rangeChecked tells whether every selected row's dictionary index in
// cols lies inside its column's dictionary, worked out on the first call
// (the part's callers always pass the same columns): reading by shape
// then meets no error AttnPoints would report (it reports them, and this
// path falls back to it).
func (p *rowsPart) rangeChecked(cols ...*rowsColumn) bool {
	p.inRange.once.Do(func() {
		p.inRange.ok = true
		for _, c := range cols {
			p.inRange.ok = p.inRange.ok && c.indicesInRange(p.sel)
		}
	})
	return p.inRange.ok
}

// indicesInRange tells whether every selected row's dictionary index
// lies inside the column's dictionary (a raw column has none).
func (c *rowsColumn) indicesInRange(sel []int32) bool {
	n, col := c.size(), c.col
	switch c.width {
	case 0:
		return n > 0 || len(sel) == 0
	case 1:
		top := byte(0)
		for _, i := range sel {
			top = max(top, col[i])
		}
		return len(sel) == 0 || int(top) < n
	case 2:
		top := uint16(0)
		for _, i := range sel {
			top = max(top, binary.LittleEndian.Uint16(col[2*int(i):]))
		}
		return len(sel) == 0 || int(top) < n
	}
	return true
}

// value is the selected row i's value (a number column; indices checked).
func (c *rowsColumn) value(i int32) int64 {
	switch c.width {
	case 0:
		return int64(c.nums[0])
	case 1:
		return int64(c.nums[c.col[i]])
	case 2:
		k := int(binary.LittleEndian.Uint16(c.col[2*int(i):]))
		return int64(binary.LittleEndian.Uint64(c.raw[8*k:]))
	}
	return int64(binary.LittleEndian.Uint64(c.col[8*int(i):]))
}

// index is the row's one-byte dictionary index (0 for a one-value column).
func (c *rowsColumn) index(i int32) byte {
	if c.width == 0 {
		return 0
	}
	return c.col[i]
}

// visits tells whether AttnPoints visits row i: bf16 attention, a
// positive latency (the part is the head_dim, KV dtype and window).
func (v *attnByShape) visits(i int32) bool {
	if v.attn != nil && v.attn[i] != v.wantAttn || v.attn == nil && v.wantAttn != 0 {
		return false
	}
	return !(v.ms(i) <= 0)
}

// ms is row i's latency, milliseconds.
func (v *attnByShape) ms(i int32) float64 { return math.Float64frombits(uint64(v.lat.value(i))) }

// AttnShapes lists the head shapes of the rows AttnPoints(context,
// headDim, kvDtype, ...) visits, in order of their first row, with each
// one's count of rows. ok is false where AttnPoints would decode the
// rows instead (t holds them decoded, or its columns are in a form read
// only that way): read them with AttnPoints then.
func (t *Tables) AttnShapes(context bool, headDim int64, kvDtype string) (shapes []AttnShape, ok bool, err error) {
	v, none, ok, err := t.attnShapeView(context, headDim, kvDtype)
	if !ok || none || err != nil {
		return nil, ok, err
	}
	// Shape index + 1 by the heads' and KV heads' dictionary indices.
	nkv := v.kv.size()
	at := make([]int32, v.heads.size()*nkv)
	for _, i := range v.sel {
		if !v.visits(i) {
			continue
		}
		s := &at[int(v.heads.index(i))*nkv+int(v.kv.index(i))]
		if *s == 0 {
			shapes = append(shapes, AttnShape{Heads: v.heads.value(i), KVHeads: v.kv.value(i)})
			*s = int32(len(shapes))
		}
		shapes[*s-1].Rows++
	}
	return shapes, true, nil
}

// AttnShapePoints calls fn, in table order, for each row AttnPoints
// (context, headDim, kvDtype, ...) visits whose shape is heads/kvHeads
// (one AttnShapes listed): its batch, x (ISL for context attention,
// Step for generation) and latency, milliseconds. ok is AttnShapes'.
func (t *Tables) AttnShapePoints(context bool, headDim int64, kvDtype string, heads, kvHeads int64, fn func(batch, x int64, ms float64)) (ok bool, err error) {
	v, none, ok, err := t.attnShapeView(context, headDim, kvDtype)
	if !ok || none || err != nil {
		return ok, err
	}
	hi, kvi := -1, -1 // the shape's dictionary indices
	for j := range v.heads.size() {
		if int64(v.heads.nums[j]) == heads {
			hi = j
		}
	}
	for j := range v.kv.size() {
		if int64(v.kv.nums[j]) == kvHeads {
			kvi = j
		}
	}
	if hi < 0 || kvi < 0 {
		return true, nil
	}
	for _, i := range v.sel {
		if int(v.heads.index(i)) == hi && int(v.kv.index(i)) == kvi && v.visits(i) {
			fn(v.batch.value(i), v.x.value(i), v.ms(i))
		}
	}
	return true, nil
}
