package profiles

import (
	"fmt"
	"unsafe"
)

// This file keeps the GEMM and attention rows of a deployment's embedded
// tables in their rows form until a predictor reads them (LazyTablesFor):
// the predictor builds its grids row by row from a small reused buffer,
// where decoding them into []GemmRow and []AttnRow first made ~4 MB of
// row structs for a Llama-8B start-up (about 1,050 of its page faults,
// written once, read once, then unmapped at exit).

// lazyRows are the parts of a Tables still in the rows form.
type lazyRows struct {
	gemm, context, generation *lazyPart
}

// lazyPart is one table's part in the embedded rows form: its file and
// the partition keys selected (nil: every row).
type lazyPart struct {
	file string
	keys []string
}

// lazySlot is where a table file's part goes in lazyRows.
type lazySlot func(*lazyRows) **lazyPart

// Lazy tells whether t is a LazyTablesFor set, whose Gemm, ContextAttn
// and GenerationAttn fields are nil while the rows stay in the embedded
// rows form (read them with EachGemm, EachContextAttn,
// EachGenerationAttn).
func (t *Tables) Lazy() bool { return t.lazy != nil }

// mustBeDecoded panics when t is a LazyTablesFor set: fn reads the row
// fields such a set leaves nil, and would see no rows. A bug, not input:
// only sim's defaultTables makes lazy sets, for the predictor alone.
func mustBeDecoded(t *Tables, fn string) {
	if t.Lazy() {
		panic("profiles: " + fn + " reads decoded rows; a LazyTablesFor set keeps them undecoded (use the Each methods)")
	}
}

// EachGemm calls fn with every GEMM row, in table order (Gemm's rows, or
// those of a LazyTablesFor set not decoded into Gemm). The row is fn's
// only for the call: rows of a lazy set share one buffer. An error is a
// corrupt embedded rows file.
func (t *Tables) EachGemm(fn func(*GemmRow)) error {
	if t.lazy != nil && t.lazy.gemm != nil {
		return eachPart(t.lazy.gemm, fn)
	}
	return eachOf(t.Gemm, fn)
}

// EachContextAttn is EachGemm for ContextAttn's rows.
func (t *Tables) EachContextAttn(fn func(*AttnRow)) error {
	if t.lazy != nil && t.lazy.context != nil {
		return eachPart(t.lazy.context, fn)
	}
	return eachOf(t.ContextAttn, fn)
}

// EachGenerationAttn is EachGemm for GenerationAttn's rows.
func (t *Tables) EachGenerationAttn(fn func(*AttnRow)) error {
	if t.lazy != nil && t.lazy.generation != nil {
		return eachPart(t.lazy.generation, fn)
	}
	return eachOf(t.GenerationAttn, fn)
}

func eachOf[T any](rows []T, fn func(*T)) error {
	for i := range rows {
		fn(&rows[i])
	}
	return nil
}

// eachChunk is how many rows eachPart decodes at a time: its buffer
// (56 KB of GEMM rows) is reused for the whole table.
const eachChunk = 1024

// eachPart calls fn with every row of part, in file order, each chunk of
// rows decoded into one buffer.
func eachPart[T any](part *lazyPart, fn func(*T)) error {
	p, err := parsedPart[T](part.file, part.keys)
	if err != nil {
		return err
	}
	buf := make([]T, min(len(p.sel), eachChunk))
	base, size := unsafe.Pointer(unsafe.SliceData(buf)), unsafe.Sizeof(*new(T))
	for i := 0; i < len(p.sel); i += eachChunk {
		sel := p.sel[i:min(i+eachChunk, len(p.sel))]
		if err := p.fill(base, size, sel); err != nil {
			return fmt.Errorf("embedded tables %s: %w", part.file, err)
		}
		for j := range sel {
			fn(&buf[j])
		}
	}
	return nil
}

// parsedPart is the embedded rows file read up to its values, keeping
// the partitions keys names (nil: every row), once per process.
func parsedPart[T any](file string, keys []string) (*rowsPart, error) {
	e := partOf(file, keys, "parsed ")
	e.once.Do(func() {
		data, err := embeddedData(file)
		if err == nil {
			e.rows, err = parseRows[T](data, keepKeys(keys))
		}
		if err != nil {
			e.err = fmt.Errorf("embedded tables %s: %w", file, err)
		}
	})
	p, _ := e.rows.(*rowsPart)
	return p, e.err
}
