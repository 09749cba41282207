package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// smallStarts makes pools allocate the state of 2 blocks and indexes 16
// slots at first, so that every pool the tests build grows (growState,
// hashIndex.grow) many times while in use, and restores the sizes after.
func smallStarts(t *testing.T) {
	ps, is := poolStart, indexStart
	poolStart, indexStart = 2, 16
	t.Cleanup(func() { poolStart, indexStart = ps, is })
}

// The pool's model tests, with pools and indexes that grow while in use:
// the list model, the per-block chain reference, and random schedulers
// (preemption, shared prefixes, conversations, aborts) hold as with the
// state allocated whole.
func TestGrowingPoolsMatchTheModels(t *testing.T) {
	smallStarts(t)
	t.Run("list", TestBlockPoolMatchesList)
	t.Run("chains", TestChainRunsArePerBlock)
	t.Run("scheduler", TestSchedulerPoolInvariants)
	t.Run("index", TestHashIndexMatchesMap)
}

// An index grows by doubling when an insert would pass half full, up to
// twice the block count (a power of two), and answers as a Go map
// throughout: 3,000 distinct hashes of a 5,000-block pool, inserted,
// half deleted, inserted again.
func TestHashIndexGrowsToItsLimit(t *testing.T) {
	smallStarts(t)
	x := newHashIndex(5000, 0)
	require.Equal(t, 16, len(x.slots))
	require.Equal(t, 16384, x.limit) // 2 × 5,000 rounded up to a power of two
	ref := map[uint64]int32{}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func() {
		require.LessOrEqual(t, 2*x.n, len(x.slots), "more than half full")
		require.Equal(t, len(ref), x.n)
		for h, b := range ref {
			require.Equal(t, b, x.get(h))
		}
	}
	hs := make([]uint64, 3000)
	for i := range hs {
		hs[i] = rng.Uint64() | 1
		require.Equal(t, int32(i), x.putIfAbsent(hs[i], int32(i)))
		ref[hs[i]] = int32(i)
	}
	check()
	require.Equal(t, 8192, len(x.slots)) // 3,000 entries: 4,096 slots is 73 % full
	for i := 0; i < len(hs); i += 2 {
		x.deleteIf(hs[i], int32(i))
		delete(ref, hs[i])
	}
	check()
	for i := 0; i < len(hs); i += 2 {
		x.putIfAbsent(hs[i], int32(i+1))
		ref[hs[i]] = int32(i + 1)
	}
	check()
	require.LessOrEqual(t, len(x.slots), x.limit)
}

// A pool's block state grows as blocks are first handed out, never past
// the pool: 40 blocks taken one by one and 30 at once from a pool of 100
// leave state for 71 blocks (the null block and 70), then all 99.
func TestPoolStateGrowsWithFreshBlocks(t *testing.T) {
	smallStarts(t)
	p := NewBlockPool(100, 16, true)
	require.Len(t, p.meta, 2)
	for i := 0; i < 40; i++ {
		p.numFree--
		require.Equal(t, int32(i+1), p.take1())
	}
	got := p.Allocate(30, nil)
	require.Equal(t, int32(41), got[0])
	require.Equal(t, int32(70), got[29])
	require.GreaterOrEqual(t, len(p.meta), 71)
	require.Equal(t, len(p.meta), len(p.hash))
	p.Allocate(29, nil)
	require.Len(t, p.meta, 100)
	require.Len(t, p.hash, 100)
	for b := 1; b < 100; b++ {
		require.Equal(t, int32(1), p.meta[b].refCnt, "block %d", b)
	}
	require.Equal(t, 0, p.NumFree())
}

// metaOf is block b's state, a block never handed out (none kept yet:
// growState) reading as free; hashOf is its hash.
func metaOf[B int | int32](p *BlockPool, b B) blockMeta {
	if int(b) < len(p.meta) {
		return p.meta[b]
	}
	return blockMeta{}
}

func hashOf[B int | int32](p *BlockPool, b B) uint64 {
	if int(b) < len(p.hash) {
		return p.hash[b]
	}
	return 0
}

// A pool told how many blocks a run hands out (Config.ExpectBlocks)
// starts with state, ring and index for that many, at least minStart;
// told nothing, for poolStart (bounded by the pool).
func TestExpectBlocksSizesThePool(t *testing.T) {
	p := NewScheduler(Config{NumBlocks: 55869, BlockSize: 16, EnablePrefixCaching: true, ExpectBlocks: 4100}).Pool
	require.Equal(t, 4100, len(p.meta))
	require.Equal(t, 4100, len(p.hash))
	require.Equal(t, 16384, len(p.ring))         // ringStart: a power of two ≥ 2 × 4,100
	require.Equal(t, 16384, len(p.cached.slots)) // the same for the index
	require.Equal(t, 131072, p.cached.limit)     // 2 × 55,869 up to a power of two
	p = NewScheduler(Config{NumBlocks: 55869, BlockSize: 16, ExpectBlocks: 10}).Pool
	require.Equal(t, minStart, len(p.meta))
	require.Equal(t, 512, len(p.cached.slots))
	p = NewScheduler(Config{NumBlocks: 55869, BlockSize: 16}).Pool
	require.Equal(t, poolStart, len(p.meta))
	require.Equal(t, indexStart, len(p.cached.slots))
	p = NewScheduler(Config{NumBlocks: 7447, BlockSize: 16, ExpectBlocks: 477000}).Pool
	require.Equal(t, 7447, len(p.meta))
	require.Equal(t, 16384, len(p.cached.slots))
}
