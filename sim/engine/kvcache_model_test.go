package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// listPool is the block pool as vLLM writes its free queue
// (kv_cache_utils.py FreeKVCacheBlockQueue: popleft hands out, append
// frees, remove takes a cache hit out of the middle), one hash per block
// and, as BlockPool.Cache documents, the first holder of a hash indexed
// (vLLM's BlockHashToBlockMap keeps every holder: a known difference this
// test does not judge).
type listPool struct {
	free      []int32
	ref       []int
	hash      []uint64
	index     map[uint64]int32
	evictions int64
}

func newListPool(n int) *listPool {
	m := &listPool{ref: make([]int, n), hash: make([]uint64, n), index: map[uint64]int32{}}
	for b := 1; b < n; b++ {
		m.free = append(m.free, int32(b))
	}
	return m
}

func (m *listPool) allocate(k int) []int32 {
	got := slices.Clone(m.free[:k])
	m.free = m.free[k:]
	for _, b := range got {
		if h := m.hash[b]; h != 0 {
			if m.index[h] == b {
				delete(m.index, h)
			}
			m.hash[b] = 0
			m.evictions++
		}
		m.ref[b] = 1
	}
	return got
}

func (m *listPool) freeBlocks(bs []int32) {
	for _, b := range bs {
		if m.ref[b]--; m.ref[b] == 0 {
			m.free = append(m.free, b)
		}
	}
}

func (m *listPool) touch(b int32) {
	if m.ref[b] == 0 {
		m.free = slices.DeleteFunc(m.free, func(x int32) bool { return x == b })
	}
	m.ref[b]++
}

func (m *listPool) cache(b int32, h uint64) {
	m.hash[b] = h
	if _, ok := m.index[h]; !ok {
		m.index[h] = b
	}
}

// BlockPool against listPool over random requests' block lists: the pool
// may give out other free blocks than the list's while none holds a hash
// (block ids reach no output), so the two are compared through a pairing
// of their blocks made at each allocation: the free queues' hashes in
// order (0 for none), each block's holders, cache hits (the hit block
// pairs with the list's), evictions and the free count agree after every
// operation. Hashes repeat (two requests filling a block with the same
// tokens), requests free several blocks at once tail first, and half the
// runs allocate rarely, so that hits and frees fill the ring with stale
// entries and it grows while some of them are a block freed again; in a
// third of the runs blocks are rarely hashed, so that requests holding
// no hash and no shared block are freed lazily (FreeTailPrivate) and
// their blocks handed out again from the lazy entries.
func TestBlockPoolMatchesList(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	privates, lazyTaken := 0, 0
	for _, n := range []int{2, 3, 9, 40, 300} {
		for trial := 0; trial < 6; trial++ {
			p, m := NewBlockPool(n, 16, true), newListPool(n)
			pair := map[int32]int32{} // pool block -> list block, for held and hashed blocks
			var reqs [][]int32        // each request's pool blocks
			nextHash := uint64(1)
			hashes := []uint64{}
			for i := 0; i < 3000; i++ {
				op := rng.IntN(7)
				if trial%2 == 1 && op < 2 && rng.IntN(8) != 0 {
					// Few allocations: the head stays put while cache
					// hits and frees fill the ring with stale entries.
					op = 2 + rng.IntN(5)
				}
				if trial >= 4 && op >= 3 && rng.IntN(16) != 0 {
					// Few hashes: the free blocks mostly all alike, freed
					// lazily (FreeTailPrivate) and handed out again.
					op = rng.IntN(3)
				}
				switch {
				case op == 0 && p.NumFree() > 0: // a request allocates
					k := 1 + rng.IntN(min(p.NumFree(), 5))
					got, want := p.Allocate(k, nil), m.allocate(k)
					require.Len(t, got, k)
					for j, b := range got {
						pair[b] = want[j]
					}
					reqs = append(reqs, got)
				case op == 1 && len(reqs) > 0 && p.NumFree() > 0: // a request grows (a decode's path)
					r := rng.IntN(len(reqs))
					p.numFree-- // allocDecode takes the block from NumFree, then take1 hands it out
					got, want := p.take1(), m.allocate(1)
					pair[got] = want[0]
					reqs[r] = append(reqs[r], got)
				case (op == 2 || op == 6) && len(reqs) > 0: // a request finishes (or is preempted): tail first
					r := rng.IntN(len(reqs))
					bs := slices.Clone(reqs[r])
					slices.Reverse(bs)
					mb := make([]int32, len(bs))
					for j, b := range bs {
						mb[j] = pair[b]
					}
					from := len(reqs[r]) // blocks[from:] hold no hash and no other holder
					for from > 0 && metaOf(p, reqs[r][from-1]).refCnt&refMask == 1 && hashOf(p, reqs[r][from-1]) == 0 {
						from--
					}
					switch {
					case from < len(reqs[r]) && i%3 != 0:
						p.FreeTailPrivate(reqs[r], from+rng.IntN(len(reqs[r])-from+1))
						privates++
					case i%2 == 0:
						p.Free(bs)
					default:
						p.FreeTailFirst(reqs[r])
					}
					m.freeBlocks(mb)
					reqs = slices.Delete(reqs, r, r+1)
				case op == 3 && len(reqs) > 0: // a held block fills: cached, maybe under a hash another holds
					r := rng.IntN(len(reqs))
					b := reqs[r][rng.IntN(len(reqs[r]))]
					if hashOf(p, b) != 0 {
						continue
					}
					h := nextHash
					if len(hashes) > 0 && rng.IntN(3) == 0 {
						h = hashes[rng.IntN(len(hashes))]
					} else {
						nextHash++
						hashes = append(hashes, h)
					}
					p.Cache(b, h)
					m.cache(pair[b], h)
				case (op == 4 || op == 5) && len(hashes) > 0: // a new request hits cached blocks
					h := hashes[rng.IntN(len(hashes))]
					for try := 0; try < 8; try++ { // mostly hashes still cached
						if _, ok := m.index[h]; ok {
							break
						}
						h = hashes[rng.IntN(len(hashes))]
					}
					b, mb := p.Lookup(h), int32(-1)
					if x, ok := m.index[h]; ok {
						mb = x
					}
					if b < 0 || mb < 0 {
						require.Equal(t, mb < 0, b < 0, "n %d op %d: hit on %x", n, i, h)
						continue
					}
					require.Equal(t, mb, pair[b], "n %d op %d: hit on %x", n, i, h)
					if m.ref[mb] == 0 && trial%2 == 0 && rng.IntN(2) == 0 {
						// Take the block and a fresh one in one request.
						if p.NumFree() < 2 {
							continue
						}
						p.Touch([]int32{b})
						m.touch(mb)
						got, want := p.Allocate(1, nil), m.allocate(1)
						pair[got[0]] = want[0]
						reqs = append(reqs, []int32{b, got[0]})
						break
					}
					p.Touch([]int32{b})
					m.touch(mb)
					reqs = append(reqs, []int32{b})
				}
				// Compare.
				require.Equal(t, len(m.free), p.NumFree(), "n %d op %d", n, i)
				require.Equal(t, m.evictions, p.Evictions, "n %d op %d", n, i)
				holders := make([]int, n)
				for _, bs := range reqs {
					for _, b := range bs {
						holders[b]++
					}
				}
				lazy := make([]bool, n)
				for seq := p.qhead; seq != p.qtail; seq++ {
					e := p.ring[seq&uint32(len(p.ring)-1)]
					if p.qtail-seq <= p.lazy {
						e = ^e // a plain lazy entry
					}
					if e < -1 {
						holders[^e]++ // a lazy entry's block says held
						lazy[^e] = true
						lazyTaken++
					}
				}
				seen := map[int32]bool{}
				for b := int32(1); b < int32(n); b++ {
					if holders[b] != int(metaOf(p, b).refCnt&refMask) {
						t.Fatalf("n %d op %d: block %d has %d references, %d holders", n, i, b, metaOf(p, b).refCnt&refMask, holders[b])
					}
					if holders[b] > 0 && !lazy[b] {
						mb := pair[b]
						if seen[mb] || m.ref[mb] != holders[b] || m.hash[mb] != hashOf(p, b) {
							t.Fatalf("n %d op %d: block %d (hash %x) pairs with list block %d (paired twice %v, %d references, hash %x)",
								n, i, b, hashOf(p, b), mb, seen[mb], m.ref[mb], m.hash[mb])
						}
						seen[mb] = true
					}
				}
				require.Equal(t, freeHashes(m), poolFreeHashes(p), "n %d op %d", n, i)
				requireStaleCount(t, p)
				fh := 0
				for _, h := range freeHashes(m) {
					if h != 0 {
						fh++
					}
				}
				require.Equal(t, fh, p.freeHashed, "n %d op %d", n, i)
				// The index: every hash the list finds, the pool finds in
				// the paired block; no hash the list dropped.
				require.Equal(t, len(m.index), p.cached.n, "n %d op %d", n, i)
				for h, mb := range m.index {
					if b := p.Lookup(h); b < 0 || hashOf(p, b) != h || pair[b] != mb {
						t.Fatalf("n %d op %d: hash %x: pool block %d, list block %d", n, i, h, b, mb)
					}
				}
			}
		}
	}
	t.Logf("private frees %d, lazy entries seen %d", privates, lazyTaken)
	require.Greater(t, privates, 2000)
	require.Greater(t, lazyTaken, 15000)
}

// freeHashes is the list's free queue as hashes, in order.
func freeHashes(m *listPool) []uint64 {
	out := []uint64{}
	for _, b := range m.free {
		out = append(out, m.hash[b])
	}
	return out
}

// poolFreeHashes is the pool's free queue as hashes, in order: the fresh
// blocks, then the ring's live entries.
func poolFreeHashes(p *BlockPool) []uint64 {
	out := []uint64{}
	for b := p.fresh; b < int32(p.numBlocks); b++ {
		out = append(out, hashOf(p, b))
	}
	for seq := p.qhead; seq != p.qtail; seq++ {
		if b := p.ring[seq&uint32(len(p.ring)-1)]; b >= 0 {
			out = append(out, hashOf(p, b))
		} else if b < -1 {
			out = append(out, hashOf(p, ^b)) // a lazy entry's: 0
		}
	}
	return out
}
