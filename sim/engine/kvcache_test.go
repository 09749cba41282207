package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The free queue hands blocks out in the order a linked list would (the
// never-used blocks first, then least recently freed first), however
// blocks are taken out of its middle (cache hits) and freed again, except
// that while no free block holds a hash any free block may go: random
// allocations, frees, touches and cached hashes against a plain list; the
// evictions, and the counts that let Allocate skip reading a block's
// state (stale entries, free blocks holding a hash), are recounted after
// every operation.
func TestFreeQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for _, n := range []int{2, 5, 64, 700} {
		p := NewBlockPool(n, 16, true)
		var queue []int32 // the reference free queue
		for b := 1; b < n; b++ {
			queue = append(queue, int32(b))
		}
		refs, used, hashed := make([]int, n), make([]bool, n), make([]bool, n)
		var held []int32
		var evictions int64
		for i := 0; i < 20000; i++ {
			switch op := rng.IntN(4); {
			case op == 0 && len(queue) > 0:
				k := 1 + rng.IntN(min(len(queue), 4))
				got := p.Allocate(k, nil)
				if !slices.ContainsFunc(queue, func(b int32) bool { return hashed[b] }) {
					// Free blocks all alike: any k of them, each once.
					for _, b := range got {
						j := slices.Index(queue, b)
						require.GreaterOrEqual(t, j, 0, "n %d op %d: block %d is not free", n, i, b)
						queue = slices.Delete(queue, j, j+1)
					}
				} else {
					require.Equal(t, queue[:k], got, "n %d op %d", n, i)
					queue = queue[k:]
				}
				for _, b := range got {
					refs[b]++
					used[b] = true
					if hashed[b] {
						evictions++
						hashed[b] = false
					}
				}
				held = append(held, got...)
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
			case op == 3 && len(held) > 0:
				// A held block becomes full: cached under a new hash.
				b := held[rng.IntN(len(held))]
				if hashed[b] {
					continue // a block is hashed once, until evicted
				}
				p.Cache(b, uint64(i+1))
				hashed[b] = true
			}
			require.Equal(t, len(queue), p.NumFree(), "n %d op %d", n, i)
			require.Equal(t, evictions, p.Evictions, "n %d op %d", n, i)
			freeHashed := 0
			for _, b := range queue {
				if hashed[b] {
					freeHashed++
				}
			}
			require.Equal(t, freeHashed, p.freeHashed, "n %d op %d", n, i)
			requireStaleCount(t, p)
		}
	}
}

// requireStaleCount recounts the ring's stale entries.
func requireStaleCount(t *testing.T, p *BlockPool) {
	t.Helper()
	stale := 0
	for seq := p.qhead; seq != p.qtail; seq++ {
		b := p.ring[seq&uint32(len(p.ring)-1)]
		if b == -1 {
			stale++
			continue
		}
		if k := b - int32(p.NumBlocks()); k >= 0 { // a run of k + 1 stale entries (reviveRun)
			require.LessOrEqual(t, int(k), int(p.qtail-seq-1), "run of stale entries at %d past the tail", seq)
			stale += int(k) + 1
			seq += uint32(k)
			continue
		}
		// An entry not −1 is its block's live one; a lazy one (^b, or
		// the plain top p.lazy ones) keeps the state its holder left.
		if b < 0 || p.qtail-seq <= p.lazy {
			lb := b
			if b < 0 {
				lb = ^b
			} else {
				require.True(t, p.stale == 0 && p.freeHashed == 0, "plain lazy entry %d of block %d", seq, b)
			}
			m := metaOf(p, lb)
			require.True(t, m.refCnt&refMask == 1 && hashOf(p, lb) == 0, "lazy entry %d of block %d", seq, lb)
			continue
		}
		m := metaOf(p, b)
		require.True(t, m.refCnt&refMask == 0 && m.pos == seq, "entry %d of block %d is live", seq, b)
	}
	require.Equal(t, stale, p.stale)
}

// A block freed, then a cache hit (its entry goes stale), then freed
// again when the ring is full: the ring grows while the block is still
// held, so its old entry is dropped as stale, not kept as live (Allocate
// trusts the count and would hand the block out twice).
func TestFreeQueueGrowsPastAStaleEntry(t *testing.T) {
	p := NewBlockPool(3, 16, true)
	require.Equal(t, []int32{1, 2}, p.Allocate(2, nil))
	p.Free([]int32{1})
	p.Touch([]int32{1}) // entry 0 goes stale
	for len(p.ring) > int(p.qtail-p.qhead) {
		p.Free([]int32{2})
		p.Touch([]int32{2})
	}
	requireStaleCount(t, p)
	p.Free([]int32{1}) // the ring is full: it grows first
	requireStaleCount(t, p)
	require.Equal(t, 1, p.NumFree())
	require.Equal(t, []int32{1}, p.Allocate(1, nil))
	p.Free([]int32{2})
	require.Equal(t, []int32{2}, p.Allocate(1, nil), "block 1 is held: never handed out again")
}
