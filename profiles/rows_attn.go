package profiles

import (
	"encoding/binary"
	"math"
	"slices"
)

// This file reads an attention part of a LazyTablesFor set by head shape
// (AttnShapes, AttnShapePoints): the rows AttnPoints visits, but where
// AttnPoints decodes every column of every row of the part for each
// call, one pass per part (kept for the process) reads the columns'
// dictionary indices in place and lists each shape's rows; a shape's
// points are then decoded from its own rows only. A predictor counts the
// shapes once and reads the points of the one or two it prices: a
// one-request Llama-2-7b process spent 8.5 M of its 29 M instructions in
// AttnPoints' four passes over ~10,000 rows each.

// AttnShape is one (query heads, KV heads) shape of the rows AttnPoints
// visits and how many of them it has.
type AttnShape struct {
	Heads, KVHeads int64
	Rows           int
}

// attnShapeIndex is an attention part's visited rows by head shape
// (rowsPart.byShape; ok false: the part is not in the form read so).
type attnShapeIndex struct {
	ok     bool
	shapes []AttnShape
	sel    []int32 // the part's selected rows
	// shapeOf is by selected row: 0 for one AttnPoints does not visit,
	// else 1 + its shape's index (at most 255 shapes; a byte a row, where
	// lists of rows by shape took ~40 page faults a start-up).
	shapeOf []byte
	batch   *rowsColumn
	x       *rowsColumn
	lat     *rowsColumn // LatencyMs: a float64's bits
}

// attnShapes is the part AttnPoints(context, headDim, kvDtype) reads, by
// shape, when it is in the form read so; ok is false when it is not (t
// holds decoded rows, the part is not exactly one head_dim, KV dtype and
// window, the head or attn_dtype columns are not one-byte dictionaries,
// or an index lies past its dictionary: AttnPoints reads it then, and
// reports what it finds). idx is nil when no row can match (a dtype in no
// dictionary: AttnPoints visits no row).
func (t *Tables) attnShapes(context bool, headDim int64, kvDtype string) (idx *attnShapeIndex, ok bool, err error) {
	part, xName := (*lazyPart)(nil), "Step"
	if t.lazy != nil {
		part = t.lazy.generation
		if context {
			part, xName = t.lazy.context, "ISL"
		}
	}
	if part == nil || !slices.Equal(part.keys, []string{attnKey(headDim, kvDtype, 0)}) {
		return nil, false, nil
	}
	p, err := parsedPart[AttnRow](part.file, part.keys)
	if err != nil {
		return nil, false, err
	}
	h, kv, batch, x := p.column("NumHeads"), p.column("NumKVHeads"), p.column("BatchSize"), p.column(xName)
	lat, attn, kvd := p.column("LatencyMs"), p.column("AttnDtype"), p.column("KVCacheDtype")
	if h == nil || kv == nil || batch == nil || x == nil || lat == nil || attn == nil || kvd == nil ||
		p.column("HeadDim") == nil || p.column("WindowSize") == nil {
		return nil, false, nil // AttnPoints says errStaleRows
	}
	wantAttn, wantKV := slices.Index(attn.strs, "bfloat16"), slices.Index(kvd.strs, kvDtype)
	if wantAttn < 0 || wantKV < 0 {
		return nil, true, nil
	}
	p.byShape.once.Do(func() { p.byShape.idx = indexShapes(p.sel, h, kv, batch, x, lat, attn, wantAttn) })
	idx = p.byShape.idx
	return idx, idx.ok, nil
}

// indexShapes lists the selected rows AttnPoints visits (attn_dtype
// index wantAttn, a positive latency) by (heads, KV heads) shape, in one
// pass that also checks every selected row's indices against their
// dictionaries (as AttnPoints' decoding does; not ok at the first one
// past its dictionary).
func indexShapes(sel []int32, h, kv, batch, x, lat, attn *rowsColumn, wantAttn int) *attnShapeIndex {
	idx := &attnShapeIndex{batch: batch, x: x, lat: lat, sel: sel, shapeOf: make([]byte, len(sel))}
	if h.width > 1 || kv.width > 1 || attn.width > 1 || !batch.selInRange(sel) || !x.selInRange(sel) {
		return idx
	}
	hc, kc, ac := h.oneByte(), kv.oneByte(), attn.oneByte() // nil: one value, index 0
	nh, nkv, na := h.size(), kv.size(), attn.size()
	latW, latCol, latRaw, latNums, nLat := lat.width, lat.col, lat.raw, lat.nums, lat.size()
	at := make([]byte, nh*nkv) // shape index + 1 by the heads' and KV heads' indices
	if hc != nil && kc != nil && ac == nil && wantAttn == 0 && latW == 2 {
		// Every embedded part's form: a loop of its own (few values to
		// keep), where the general one kept them on the stack.
		if !shapesDict2(sel, hc, kc, nh, nkv, latCol, latRaw, at, idx.shapeOf) {
			return idx
		}
		for j, s := range idx.shapeOf {
			if s != 0 && s > byte(len(idx.shapes)) {
				i := sel[j]
				idx.shapes = append(idx.shapes, AttnShape{Heads: h.value(i), KVHeads: kv.value(i)})
			}
			if s != 0 {
				idx.shapes[s-1].Rows++
			}
		}
		idx.ok = len(idx.shapes) < 256
		return idx
	}
	for j, i := range sel {
		hi, ki, ai := 0, 0, 0
		if hc != nil {
			hi = int(hc[i])
		}
		if kc != nil {
			ki = int(kc[i])
		}
		if ac != nil {
			ai = int(ac[i])
		}
		if hi >= nh || ki >= nkv || ai >= na {
			return idx
		}
		var bits uint64
		switch latW {
		case 8:
			bits = binary.LittleEndian.Uint64(latCol[8*int(i):])
		case 2:
			li := int(binary.LittleEndian.Uint16(latCol[2*int(i):]))
			if li >= nLat {
				return idx
			}
			bits = binary.LittleEndian.Uint64(latRaw[8*li:])
		default:
			li := 0
			if latW == 1 {
				li = int(latCol[i])
			}
			if li >= nLat {
				return idx
			}
			bits = latNums[li]
		}
		if ai != wantAttn || math.Float64frombits(bits) <= 0 {
			continue
		}
		s := &at[hi*nkv+ki]
		if *s == 0 {
			if len(idx.shapes) == 255 {
				return idx
			}
			idx.shapes = append(idx.shapes, AttnShape{Heads: h.value(i), KVHeads: kv.value(i)})
			*s = byte(len(idx.shapes))
		}
		idx.shapes[*s-1].Rows++
		idx.shapeOf[j] = *s
	}
	idx.ok = true
	return idx
}

// shapesDict2 is indexShapes' loop for one-byte head columns, one
// attn_dtype (the one wanted) and a two-byte latency dictionary: it
// numbers the shapes 1, 2, ... in order of their first visited row into
// at and marks each visited row's shape in shapeOf; false when an index
// lies past its dictionary or a 256th shape comes.
func shapesDict2(sel []int32, hc, kc []byte, nh, nkv int, lat, raw []byte, at, shapeOf []byte) bool {
	n, next := len(raw)/8, byte(1)
	for j, i := range sel {
		hi, ki, li := int(hc[i]), int(kc[i]), int(binary.LittleEndian.Uint16(lat[2*int(i):]))
		if hi >= nh || ki >= nkv || li >= n {
			return false
		}
		if math.Float64frombits(binary.LittleEndian.Uint64(raw[8*li:])) <= 0 {
			continue
		}
		s := &at[hi*nkv+ki]
		if *s == 0 {
			if next == 0 {
				return false // 255 shapes taken
			}
			*s, next = next, next+1
		}
		shapeOf[j] = *s
	}
	return true
}

// oneByte is a one-byte column's indices (nil for a one-value column).
func (c *rowsColumn) oneByte() []byte {
	if c.width == 1 {
		return c.col
	}
	return nil
}

// selInRange tells whether every selected row's dictionary index lies
// inside the column's dictionary (a raw column has none).
func (c *rowsColumn) selInRange(sel []int32) bool {
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

// AttnShapes lists the head shapes of the rows AttnPoints(context,
// headDim, kvDtype, ...) visits, in order of their first row, with each
// one's count of rows. ok is false where AttnPoints would decode the
// rows instead (t holds them decoded, or its columns are in a form read
// only that way): read them with AttnPoints then.
func (t *Tables) AttnShapes(context bool, headDim int64, kvDtype string) (shapes []AttnShape, ok bool, err error) {
	idx, ok, err := t.attnShapes(context, headDim, kvDtype)
	if !ok || err != nil || idx == nil {
		return nil, ok, err
	}
	return slices.Clone(idx.shapes), true, nil
}

// AttnShapePoints calls fn, in table order, for each row AttnPoints
// (context, headDim, kvDtype, ...) visits whose shape is heads/kvHeads
// (one AttnShapes listed): its batch, x (ISL for context attention,
// Step for generation) and latency, milliseconds. ok is AttnShapes'.
func (t *Tables) AttnShapePoints(context bool, headDim int64, kvDtype string, heads, kvHeads int64, fn func(batch, x int64, ms float64)) (ok bool, err error) {
	idx, ok, err := t.attnShapes(context, headDim, kvDtype)
	if !ok || err != nil || idx == nil {
		return ok, err
	}
	for k, s := range idx.shapes {
		if s.Heads != heads || s.KVHeads != kvHeads {
			continue
		}
		for j, of := range idx.shapeOf {
			if int(of) == k+1 {
				i := idx.sel[j]
				fn(idx.batch.value(i), idx.x.value(i), math.Float64frombits(uint64(idx.lat.value(i))))
			}
		}
	}
	return true, nil
}
