package profiles

import (
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
