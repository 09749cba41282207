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
	assert.Equal(t, []string{"tables from mine; context attention, generation attention, moe, context mla, generation mla, collectives and elementwise ops from the default h100-sxm set"}, out.Notes)
	assert.Empty(t, top.Notes, "inputs untouched")
}

func TestAndList(t *testing.T) {
	assert.Equal(t, "", andList(nil))
	assert.Equal(t, "gemm", andList([]string{"gemm"}))
	assert.Equal(t, "gemm and moe", andList([]string{"gemm", "moe"}))
	assert.Equal(t, "gemm, moe and collectives", andList([]string{"gemm", "moe", "collectives"}))
}
