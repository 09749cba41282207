package predictor

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// Grids built from a profiles.LazyTablesFor set (the rows form read
// column by column: Tables.GemmGrid, Tables.AttnShapes) are the grids
// NewGemm and NewAttention build from the decoded rows, bit for bit, on
// every embedded hardware, every GEMM dtype (alone, and with bfloat16
// as a quantized model needs) and every head_dim and KV cache dtype of
// its attention tables; and the lazy path is the one taken.
func TestLazyTablesBuildTheRowsGrids(t *testing.T) {
	for _, hw := range profiles.KnownHardware() {
		all, err := profiles.DefaultTables(hw)
		require.NoError(t, err)
		dtypes, _ := PricedDtypes(all)
		type shape struct {
			dim int64
			kv  string
		}
		var shapes []shape
		for _, r := range all.ContextAttn {
			if s := (shape{r.HeadDim, r.KVCacheDtype}); r.WindowSize == 0 && !slices.Contains(shapes, s) {
				shapes = append(shapes, s)
			}
		}
		require.NotEmpty(t, shapes, hw)
		for i, d := range dtypes {
			s := shapes[i%len(shapes)]
			for _, gemm := range [][]string{{d}, {d, "bfloat16"}} {
				need := profiles.Need{GemmDtypes: gemm, HeadDim: int(s.dim), KVDtype: s.kv}
				lazy, err := profiles.LazyTablesFor(hw, "", need)
				require.NoError(t, err)
				rows, err := profiles.TablesForNeed(hw, "", &need)
				require.NoError(t, err)
				assert.Nil(t, lazy.Gemm, hw)
				assert.Nil(t, lazy.ContextAttn, hw)
				assert.NotEmpty(t, rows.Gemm, hw)

				_, ok, err := lazy.GemmGrid(d)
				require.NoError(t, err)
				assert.True(t, ok, "%s %s: the lazy GEMM path", hw, d)
				want, err := NewGemm(rows.Gemm, d)
				require.NoError(t, err)
				got, err := gemmFrom(lazy, d)
				require.NoError(t, err)
				assert.Equal(t, want.m, got.m, "%s %s m", hw, d)
				assert.Equal(t, want.n, got.n, "%s %s n", hw, d)
				assert.Equal(t, want.k, got.k, "%s %s k", hw, d)
				assert.True(t, sameBits(want.grid.raw, got.grid.raw), "%s %s grid", hw, d)
			}
			for _, s := range shapes {
				need := profiles.Need{GemmDtypes: []string{"bfloat16"}, HeadDim: int(s.dim), KVDtype: s.kv}
				lazy, err := profiles.LazyTablesFor(hw, "", need)
				require.NoError(t, err)
				rows, err := profiles.TablesForNeed(hw, "", &need)
				require.NoError(t, err)
				ok, err := lazy.AttnPoints(true, s.dim, s.kv, func(_, _, _, _ int64, _ float64) {})
				require.NoError(t, err)
				assert.True(t, ok, "%s %v: the lazy attention path", hw, s)
				_, ok, err = lazy.AttnShapes(false, s.dim, s.kv)
				require.NoError(t, err)
				assert.True(t, ok, "%s %v: attention read by shape", hw, s)
				want, wantErr := NewAttention(rows, int(s.dim), s.kv)
				got, gotErr := NewAttention(lazy, int(s.dim), s.kv)
				assert.Equal(t, wantErr, gotErr, "%s %v", hw, s)
				if wantErr != nil {
					continue
				}
				for _, m := range [][2]map[headKey]grid2{{want.prefill, got.prefill}, {want.decode, got.decode}} {
					require.Equal(t, len(m[0]), len(m[1]), "%s %v shapes", hw, s)
					for k, g := range m[0] {
						require.Contains(t, m[1], k)
						assert.Equal(t, g.lazy.points(), m[1][k].lazy.points(), "%s %v %v points", hw, s, k)
						assert.Equal(t, g.lazy.post == nil, m[1][k].lazy.post == nil)
					}
				}
			}
		}
	}
}

// sameBits: equal float64 slices, NaN where NaN.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
