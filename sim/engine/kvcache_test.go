package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The free queue hands blocks out in the order a linked list would (the
// never-used blocks first, then least recently freed first), however
// blocks are taken out of its middle (cache hits) and freed again: random
// allocations, frees and touches against a plain list.
func TestFreeQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for _, n := range []int{2, 5, 64, 700} {
		p := NewBlockPool(n, 16, true)
		var queue []int32 // the reference free queue
		for b := 1; b < n; b++ {
			queue = append(queue, int32(b))
		}
		refs, used := make([]int, n), make([]bool, n)
		var held []int32
		for i := 0; i < 20000; i++ {
			switch op := rng.IntN(3); {
			case op == 0 && len(queue) > 0:
				k := 1 + rng.IntN(min(len(queue), 4))
				got := p.Allocate(k, nil)
				require.Equal(t, queue[:k], got, "n %d op %d", n, i)
				for _, b := range got {
					refs[b]++
					used[b] = true
				}
				held = append(held, got...)
				queue = queue[k:]
			case op == 1 && len(held) > 0:
				j := rng.IntN(len(held))
				b := held[j]
				held = slices.Delete(held, j, j+1)
				p.Free([]int32{b})
				if refs[b]--; refs[b] == 0 {
					queue = append(queue, b)
				}
			case op == 2:
				// A cache hit on a block someone freed (or holds).
				b := int32(1 + rng.IntN(n-1))
				if !used[b] {
					continue // never used: a fresh block is no cache hit
				}
				p.Touch([]int32{b})
				if refs[b] == 0 {
					queue = slices.DeleteFunc(queue, func(x int32) bool { return x == b })
				}
				refs[b]++
				held = append(held, b)
			}
			require.Equal(t, len(queue), p.NumFree(), "n %d op %d", n, i)
		}
	}
}
