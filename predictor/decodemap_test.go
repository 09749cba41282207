package predictor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeMapGrowsKeepingPrices: the decode memo keeps every key and
// price when it moves into its sized map (decodeMapGrowAt keys), and
// prices after the move are the attention model's, as before it.
func TestDecodeMapGrowsKeepingPrices(t *testing.T) {
	p := mustNew(t, quantConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h100-sxm", 1))
	type kv struct {
		n   int
		sum int64
	}
	var seen []kv
	for n := 1; len(seen) < 3*decodeMapGrowAt; n++ {
		for _, ctx := range []int64{100, 777, 3000} {
			seen = append(seen, kv{n, int64(n) * ctx})
			p.decodeAttnMs(n, int64(n)*ctx)
		}
	}
	require.Len(t, p.decode, len(seen))
	q := mustNew(t, quantConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h100-sxm", 1))
	for _, s := range seen {
		key := [2]int32{int32(s.n), int32(math.Round(float64(s.sum) / float64(s.n) / 4))}
		want := q.attn.DecodeMs(s.n, float64(key[1])*4, q.heads, q.kvHeads)
		require.Equal(t, want, p.decode[key], "n %d", s.n)
		require.Equal(t, want, p.decodeAttnMs(s.n, s.sum), "n %d", s.n)
	}
}
