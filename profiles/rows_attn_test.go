package profiles

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AttnShapes and AttnShapePoints are AttnPoints' rows grouped by head
// shape: the shapes in order of their first row, each one's rows in table
// order, with the same values; on every embedded hardware, vLLM version,
// head_dim and KV cache dtype of its attention tables, context and
// generation, and a KV dtype the tables lack (no rows either way).
func TestAttnShapesAreAttnPointsByShape(t *testing.T) {
	type pt struct {
		batch, x int64
		ms       float64
	}
	type key struct{ h, kv int64 }
	checked := 0
	for _, hw := range KnownHardware() {
		versions, _, err := TableVersions(hw)
		require.NoError(t, err)
		for _, version := range versions {
			all, err := TablesFor(hw, version)
			require.NoError(t, err)
			type part struct {
				dim int64
				kv  string
			}
			parts := []part{{128, "no-such-dtype"}}
			for _, r := range all.ContextAttn {
				if p := (part{r.HeadDim, r.KVCacheDtype}); r.WindowSize == 0 && !slices.Contains(parts, p) {
					parts = append(parts, p)
				}
			}
			for _, p := range parts {
				lazy, err := LazyTablesFor(hw, version, Need{GemmDtypes: []string{"bfloat16"}, HeadDim: int(p.dim), KVDtype: p.kv})
				require.NoError(t, err)
				for _, context := range []bool{true, false} {
					var order []key
					want := map[key][]pt{}
					ok, err := lazy.AttnPoints(context, p.dim, p.kv, func(h, kv, batch, x int64, ms float64) {
						k := key{h, kv}
						if _, seen := want[k]; !seen {
							order = append(order, k)
						}
						want[k] = append(want[k], pt{batch, x, ms})
					})
					require.NoError(t, err)
					require.True(t, ok)
					shapes, ok, err := lazy.AttnShapes(context, p.dim, p.kv)
					require.NoError(t, err)
					require.True(t, ok, "%s %s %v: read by shape", hw, version, p)
					require.Len(t, shapes, len(order), "%s %s %v", hw, version, p)
					for i, s := range shapes {
						k := key{s.Heads, s.KVHeads}
						require.Equal(t, order[i], k, "%s %s %v: shape order", hw, version, p)
						var got []pt
						ok, err := lazy.AttnShapePoints(context, p.dim, p.kv, s.Heads, s.KVHeads, func(batch, x int64, ms float64) {
							got = append(got, pt{batch, x, ms})
						})
						require.NoError(t, err)
						require.True(t, ok)
						assert.Equal(t, len(want[k]), s.Rows, "%s %s %v %v: count", hw, version, p, k)
						assert.Equal(t, want[k], got, "%s %s %v %v: points", hw, version, p, k)
						checked++
					}
				}
			}
		}
	}
	assert.Greater(t, checked, 100, "shapes compared")
}

// indexShapes' general loop and its loop for the embedded parts' form
// (shapesDict2) index the same shapes and rows: the default H200 parts
// as embedded, and with their latencies stored raw (the general loop).
func TestIndexShapesLoopsAgree(t *testing.T) {
	lazy, err := LazyTablesFor("h200-sxm", "", Need{GemmDtypes: []string{"bfloat16"}, HeadDim: 128, KVDtype: "bfloat16"})
	require.NoError(t, err)
	for _, part := range []*lazyPart{lazy.lazy.context, lazy.lazy.generation} {
		p, err := parsedPart[AttnRow](part.file, part.keys)
		require.NoError(t, err)
		h, kv, batch, x := p.column("NumHeads"), p.column("NumKVHeads"), p.column("BatchSize"), p.column("ISL")
		lat, attn := p.column("LatencyMs"), p.column("AttnDtype")
		require.Equal(t, 2, lat.width, "the embedded form")
		raw := *lat
		raw.width, raw.raw, raw.col = 8, nil, make([]byte, 8*len(lat.col)/2)
		for i := range len(lat.col) / 2 {
			binary.LittleEndian.PutUint64(raw.col[8*i:], uint64(lat.value(int32(i))))
		}
		fast := indexShapes(p.sel, h, kv, batch, x, lat, attn, 0)
		general := indexShapes(p.sel, h, kv, batch, x, &raw, attn, 0)
		require.True(t, fast.ok)
		require.True(t, general.ok)
		assert.NotEmpty(t, fast.shapes)
		assert.Equal(t, general.shapes, fast.shapes, part.file)
		assert.Equal(t, general.shapeOf, fast.shapeOf, part.file)
	}
}
