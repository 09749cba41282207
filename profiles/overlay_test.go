package profiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverlayFillsOnlyMissingFamilies(t *testing.T) {
	top := &Tables{Source: "mine", Gemm: []GemmRow{{Dtype: "bfloat16", M: 1, N: 2, K: 3, LatencyMs: 9}}}
	base := &Tables{Hardware: "h100-sxm", Gemm: []GemmRow{{}, {}}, Comm: []CommRow{{Op: "all_reduce"}}, DecodeContextOffset: 1,
		GenerationAttn: []AttnRow{{BatchSize: 1}}}
	out := Overlay(top, base)
	assert.Equal(t, top.Gemm, out.Gemm, "gemm from the folder")
	assert.Equal(t, base.Comm, out.Comm, "collectives from the defaults")
	assert.Equal(t, int64(1), out.DecodeContextOffset, "offset travels with the decode table")
	assert.Len(t, out.Notes, 1)
	assert.Contains(t, out.Notes[0], "collectives")
	assert.Empty(t, top.Notes, "inputs untouched")
}
