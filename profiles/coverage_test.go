package profiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribe(t *testing.T) {
	a, b := compareFixture()
	a.MoE = b.MoE
	got := Describe(a)
	require.Len(t, got, 8)
	assert.Equal(t, FamilyCoverage{Family: "context mla"}, got[6], "no MLA rows")
	assert.Equal(t, FamilyCoverage{Family: "gemm", Rows: 5, Dtypes: []string{"bfloat16", "fp8"}, Groups: []string{
		"bfloat16: 4 rows, m 1..8 (4 values), n 4096, k 4096, 1 (n,k) pairs",
		"fp8: 1 rows, m 1, n 4096, k 4096, 1 (n,k) pairs",
	}}, got[0])
	assert.Equal(t, []string{
		"batch 1, isl 512, cached prefix 512",
		"1 head configurations (query/kv heads per GPU): 32/8",
		"head_dim 128, window 0, attn dtype bfloat16, kv cache bfloat16",
	}, got[1].Groups)
	assert.Equal(t, "batch 1, context 1024..2048 (2 values) (step is the context length)", got[2].Groups[0])
	assert.Equal(t, []string{
		"tokens 1, distributions balanced",
		"1 shapes (hidden, inter, topk, experts, tp, ep): (4096,14336,2,8,1,1)",
	}, got[3].Groups)
	assert.Equal(t, []string{"all_reduce nccl: 1 rows, bfloat16, GPUs 2, message 1024 elements"}, got[4].Groups)
	assert.Equal(t, []string{"rmsnorm: 1 rows, bfloat16, tokens 1, width 4096"}, got[5].Groups)

	// aiconfigurator's convention is stated, and the context shown.
	assert.Equal(t, "batch 1, context 1024..2049 (2 values) (step + 1)", Describe(b)[2].Groups[0])
	empty := Describe(&Tables{})
	assert.Equal(t, FamilyCoverage{Family: "comm"}, empty[4])
}

func TestIntSetList(t *testing.T) {
	var s intSet
	for _, v := range []int64{8, 1, 4, 4} {
		s.add(v)
	}
	assert.Equal(t, "1 4 8", s.list())
	assert.Equal(t, "1..8 (3 values)", s.span())
	for v := int64(16); v < 1<<10; v *= 2 {
		s.add(v)
	}
	assert.Equal(t, "1..512 (9 values)", s.list(), "more than 8 values: a span")
	assert.Equal(t, "-", intSet(nil).span())
}
