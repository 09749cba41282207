package router

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table agrees with a Go map through random puts and deletes, growth
// and wrap-around included.
func TestTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tb, ref := newTable(), map[uint64]int32{}
	var keys []uint64
	for step := 0; step < 200_000; step++ {
		if len(keys) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(keys))
			k := keys[i]
			keys[i] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			tb.del(k)
			delete(ref, k)
		} else {
			k := mix64(rng.Uint64()%5000 + 1)
			if _, ok := ref[k]; !ok {
				v := int32(rng.IntN(1 << 20))
				tb.put(k, v)
				ref[k] = v
				keys = append(keys, k)
			}
		}
		if step%1000 == 0 {
			for k, v := range ref {
				require.Equal(t, v, tb.get(k))
			}
			require.Equal(t, int32(-1), tb.get(mix64(99999)))
			require.Equal(t, len(ref), tb.n)
		}
	}
}
