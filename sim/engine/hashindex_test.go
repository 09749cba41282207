package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The index agrees with a Go map under random insert/delete churn,
// including deletions inside probe chains (small table, many collisions).
func TestHashIndexMatchesMap(t *testing.T) {
	x := newHashIndex(8, 0) // 16 slots
	ref := map[uint64]int32{}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 12)
	for i := range keys {
		keys[i] = uint64(rng.IntN(64)+1) << 60 >> 60 // few distinct low bits: collisions
		keys[i] = keys[i]*0x100 + uint64(i) + 1
		keys[i] |= uint64(rng.IntN(4)) << 40 // high halves too (slots split keys)
	}
	for step := 0; step < 20000; step++ {
		k := keys[rng.IntN(len(keys))]
		b := int32(rng.IntN(8))
		if rng.IntN(2) == 0 && len(ref) < 8 {
			x.putIfAbsent(k, b)
			if _, ok := ref[k]; !ok {
				ref[k] = b
			}
		} else {
			x.deleteIf(k, b)
			if v, ok := ref[k]; ok && v == b {
				delete(ref, k)
			}
		}
		for _, k := range keys {
			want, ok := ref[k]
			if !ok {
				want = -1
			}
			if !assert.Equal(t, want, x.get(k), "step %d key %x", step, k) {
				return
			}
		}
	}
	assert.Equal(t, len(ref), x.n)
}
