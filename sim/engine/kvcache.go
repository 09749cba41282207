package engine

import "slices"

// BlockPool is vLLM's paged KV cache: NumBlocks blocks of BlockSize tokens,
// a free queue ordered for eviction (least recently freed first, and a
// request's tail blocks before its head), and the prefix cache mapping a
// full block's chained hash to the block that holds it
// (vllm/v1/core/block_pool.py, kv_cache_utils.FreeKVCacheBlockQueue).
//
// The free queue is a ring of block ids in freeing order. vLLM's is a
// doubly linked list so that a cache hit can take a free block out of the
// middle; here such a block just stops being free (refCnt > 0) and its
// entry goes stale: it is overwritten with −1 (at meta.pos, the entry a
// free block's is) and skipped when it reaches the head without reading
// the block's state; every block freed again gets a new entry. So an
// entry is live exactly when it is not −1 (nor one of a run below). An
// entry below −1 is a lazy one, of block ^e, whose state was not written
// when it was freed (FreeTailPrivate). An entry e ≥ numBlocks starts a
// run of e − numBlocks + 1 stale entries, skipped at once (a prompt's
// blocks taken back together: reviveRun). The order blocks leave is the
// linked list's, and handing one out reads the ring in order instead of
// chasing links across the pool.
//
// Blocks are int32 ids; a freed block keeps its hash (and stays a cache
// hit) until it is handed out again. Block 0 is vLLM's null block: the
// pool takes it out of the free queue at creation and never hands it out,
// so a pool of NumBlocks (num_gpu_blocks) serves NumBlocks − 1 blocks, as
// vLLM's does (block_pool.py BlockPool.__init__: null_block =
// free_block_queue.popleft(); get_usage divides by num_gpu_blocks − 1).
type BlockPool struct {
	BlockSize int
	numBlocks int
	// meta is each block's references and free-queue place, hash its
	// cached hash (0 = none), in an array of its own: freeing a request's
	// blocks and taking them back (freeTailFirst, reviveRun, take1)
	// touch only meta, 8 blocks a cache line where one array of both
	// held 4. BenchmarkSimulateCodegen (cachegrind, a fully associative
	// 32 KiB D1, so that no layout luck counts): ~45 k fewer D1 misses a
	// run, 4.6 % (freeTailFirst −29 k, reviveRun −24 k; touchRun,
	// takeHead and Cache, which read both, +22 k).
	meta []blockMeta
	hash []uint64
	// The free queue is the blocks never handed out, fresh to numBlocks −
	// 1 in order, then the ring's entries qhead … qtail − 1 (sequence
	// numbers, modulo its power-of-two length) of blocks freed since,
	// least recently freed first: a pool starts without touching its
	// blocks' state, and most runs never reach most of a large pool.
	fresh        int32
	ring         []int32
	qhead, qtail uint32
	numFree      int
	// stale counts the ring's stale entries and freeHashed the free
	// blocks that hold a cached hash. With both 0, the head entry is a
	// live block with nothing to evict, and Allocate hands it out without
	// reading its state: in a long run the head is the block freed least
	// recently, whose state has left the CPU's caches (reading it was
	// 31 % of BenchmarkMillion's time).
	stale, freeHashed int
	// lazy counts the ring's top entries (qtail − lazy … qtail − 1) that
	// are lazy entries kept as plain block ids (FreeTailPrivate while
	// every free block is alike, where Allocate and take1 hand them out
	// again from the top: no decoding). They are complemented (encode)
	// before any other entry is queued or the ring grows, so they exist
	// only while stale and freeHashed are 0.
	lazy uint32
	// epoch changes whenever the ring's sequence numbers do (growRing)
	// or a free block's hash may (Cache): a chainRun recorded before
	// holds no more (touchChain).
	epoch uint32
	// perBlock makes touchChain take every block one by one (the
	// reference TestChainRunsArePerBlock compares chainRuns with).
	perBlock bool
	cached   hashIndex
	caching  bool
	// Evictions counts cached blocks handed out again (their hash dropped).
	Evictions int64
}

// blockMeta is one block's state but its hash (BlockPool.hash). refCnt
// first: at offset 0 a store to it is one instruction (at 4 the
// compiler computed the address in two: +1 a block in reviveRun).
type blockMeta struct {
	// refCnt counts the requests holding it (0 = free: in the free queue
	// unless fresh) in its bits below dupRef, which marks a duplicate.
	refCnt int32
	pos    uint32 // the sequence number of its live free-queue entry (refCnt 0; a lazy entry's block: unset)
}

// dupRef, in a block's refCnt, is set when the block's hash was, at its
// latest Cache, already the index's hit on another block: a block
// without it that holds hash h is the index's block for h (its entry
// goes only when the block is evicted, its hash cleared, and a hash
// comes back only through Cache), which touchChain relies on. It is
// cleared with the hash (a block handed out again is set to refCnt 1).
// A bit of refCnt, which touchChain reads anyway, not a field or array
// of its own: a separate array cost 3.9 M instructions of
// BenchmarkSimulateCodegen (spilled registers), a bool field (24-byte
// state) 2.7 M, a bit of pos (which the frees then read) 3.4 M.
const (
	dupRef  = 1 << 30
	refMask = dupRef - 1
)

// NewBlockPool returns a pool of numBlocks blocks (vLLM's num_gpu_blocks,
// the null block included), numBlocks − 1 of them free. caching enables
// the prefix cache (enable_prefix_caching).
//
// A block's state (meta, hash) exists from when it is first handed out:
// the arrays start at the blocks a run is expected to need
// (newBlockPool; poolStart when unknown) and grow with fresh (growState),
// and the prefix cache's index grows with its entries (hashIndex), so a
// large pool costs what a run uses of it. Allocated whole, DeepSeek-V2-Lite
// on an H200 (206,075 blocks: ~9.5 MB zeroed per engine) spent 45 % of a
// `capacity --gpus 4` search (probes of 50 requests) clearing them.
func NewBlockPool(numBlocks, blockSize int, caching bool) *BlockPool {
	return newBlockPool(numBlocks, blockSize, caching, 0)
}

// newBlockPool is NewBlockPool with its first allocation sized for
// expect blocks (Config.ExpectBlocks, at least minStart; 0 = unknown:
// poolStart), the most a run is expected to hand out. A capacity probe
// of 100 requests on Llama-3.1-8B (55,869 blocks) then starts at 4,100
// blocks, not 16,384.
func newBlockPool(numBlocks, blockSize int, caching bool, expect int) *BlockPool {
	start := poolStart
	if expect > 0 {
		expect = max(expect, minStart)
		start = expect
	}
	n := min(numBlocks, start)
	return &BlockPool{
		BlockSize: blockSize, numBlocks: numBlocks, caching: caching,
		meta: make([]blockMeta, n), hash: make([]uint64, n), fresh: 1, // block 0: the null block
		numFree: max(numBlocks-1, 0), cached: newHashIndex(numBlocks, expect), ring: make([]int32, ringStart(n)),
	}
}

// minStart is the fewest blocks a pool allocates state for at first.
const minStart = 256

// ringStart is the free queue's first ring length: a power of two, at
// least twice the blocks (live entries fill at most half of it before
// growRing doubles it), between 64 and 16,384 entries (64 KiB). Grown
// from 64, BenchmarkSimulateCodegen's ring (7,447 blocks) was rebuilt 8
// times a run on its way to 16,384, ~0.66 M instructions (callgrind)
// and a write to the state of every live block each time; started so,
// it never grows there.
func ringStart(numBlocks int) int { return halfFull(numBlocks, 64, 16384) }

// halfFull is the smallest power of two from lo that holds n entries at
// most half full, but at most hi (lo and hi powers of two): the first
// length of the free-queue ring and of the prefix-cache index.
func halfFull(n, lo, hi int) int {
	size := lo
	for size < hi && size < 2*n {
		size <<= 1
	}
	return size
}

// poolStart is how many blocks' state a pool allocates at first (256 KiB
// of meta and hash) when nothing says how many a run needs
// (Config.ExpectBlocks 0): pools up to it never grow.
var poolStart = 16384 // (a var: grow_test.go starts pools small)

// growState makes room in meta and hash for fresh block b (twice the
// length, at most numBlocks), before b is first handed out.
//
//go:noinline
func (p *BlockPool) growState(b int32) {
	n := min(p.numBlocks, max(2*len(p.meta), int(b)+1))
	p.meta = append(make([]blockMeta, 0, n), p.meta...)[:n]
	p.hash = append(make([]uint64, 0, n), p.hash...)[:n]
}

// NumBlocks is the pool's size in blocks (num_gpu_blocks, the null block
// included).
func (p *BlockPool) NumBlocks() int { return p.numBlocks }

// NumFree is the number of blocks that can be handed out now (free,
// including cached blocks no request holds).
func (p *BlockPool) NumFree() int { return p.numFree }

// NumUsed is the number of blocks some request holds: NumBlocks − 1 (the
// null block) − NumFree.
func (p *BlockPool) NumUsed() int { return max(p.numBlocks-1, 0) - p.numFree }

// Usage is vLLM's KV cache usage, a fraction in [0, 1]: 1 − free ÷
// (num_gpu_blocks − 1), cached blocks no request holds counted free
// (block_pool.py get_usage, vLLM 0.11.0); 0 for a pool of one block.
func (p *BlockPool) Usage() float64 {
	if p.numBlocks <= 1 {
		return 0
	}
	return 1 - float64(p.numFree)/float64(p.numBlocks-1)
}

// growRing makes room for need more entries: the live entries, in
// order, in a ring twice as long (or more) unless stale ones fill half
// of it.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (p *BlockPool) growRing(need int) {
	p.encode()
	mask, live := uint32(len(p.ring)-1), 0
	nb := int32(p.numBlocks)
	for seq := p.qhead; seq != p.qtail; seq++ {
		if e := p.ring[seq&mask]; e >= nb {
			seq += uint32(e - nb) // a run's stale entries (reviveRun)
		} else if e != -1 {
			live++
		}
	}
	n := len(p.ring)
	if live >= n/2 {
		n *= 2
	}
	for n-live < need {
		n *= 2
	}
	ring := make([]int32, n)
	k := uint32(0)
	for seq := p.qhead; seq != p.qtail; seq++ {
		if e := p.ring[seq&mask]; e >= nb {
			seq += uint32(e - nb)
		} else if e != -1 {
			ring[k] = e
			if e >= 0 { // (a lazy entry's block keeps no position)
				p.meta[e].pos = k
			}
			k++
		}
	}
	p.ring, p.qhead, p.qtail, p.stale = ring, 0, k, 0
	p.epoch++
}

// Lookup returns the cached block holding hash h, or -1.
func (p *BlockPool) Lookup(h uint64) int32 {
	if !p.caching {
		return -1
	}
	return p.cached.get(h)
}

// Touch takes a reference on cached blocks a request reuses (cache hits:
// blocks holding a hash, never a lazy entry's: FreeTailPrivate), pulling
// free ones out of the free queue. The pool's counts are kept in locals and
// written once (a block's state is one load and one store per block:
// 33 instructions a block before, on BenchmarkSimulateCodegen where an
// admission touches ~35 cached blocks).
func (p *BlockPool) Touch(blocks []int32) {
	meta, hash, ring, fresh := p.meta, p.hash, p.ring, p.fresh
	mask := uint32(len(ring) - 1)
	revived, hashed := 0, 0
	for _, b := range blocks {
		m := &meta[b]
		if m.refCnt&refMask == 0 {
			revived++ // its free-queue entry goes stale
			if b < fresh {
				ring[m.pos&mask] = -1
			}
			if hash[b] != 0 {
				hashed++
			}
		}
		m.refCnt++
	}
	p.numFree -= revived
	p.stale += revived
	p.freeHashed -= hashed
}

// Allocate hands out n blocks from the head of the free queue, evicting
// their cached hashes. The caller checks NumFree first; Allocate panics on
// an impossible request because that is a scheduler bug, not user input.
func (p *BlockPool) Allocate(n int, dst []int32) []int32 {
	if n > p.numFree {
		panic("engine: BlockPool.Allocate beyond free blocks")
	}
	p.numFree -= n
	if p.stale == 0 && p.freeHashed == 0 {
		// Every free block is alike (none holds a hash, no entry is
		// stale) and every block freed later queues behind them all, so
		// which of them goes first changes no eviction: hand out the
		// most recently freed, whose state is still in the CPU's caches,
		// and touch only as many blocks as a run holds at once (the
		// head's least recently freed block cost a cache miss each:
		// Allocate and Free were 26 % of BenchmarkMillion's time).
		// The ring, its tail and the pool's state in locals, and dst
		// grown once (no append in the loop): stores to the pool made
		// every block reload them (30 instructions a block:
		// BenchmarkMillion's admissions).
		// The entries are copied, then reversed (most recent first),
		// where a loop was 17 instructions a block; past the top lazy
		// ones (plain ids whose blocks already say held), decoded.
		ring, meta, qtail := p.ring, p.meta, p.qtail
		mask := uint32(len(ring) - 1)
		k := min(n, int(qtail-p.qhead))
		d0 := len(dst)
		dst = slices.Grow(dst, k)[:d0+k]
		out := dst[d0:]
		if lo := (qtail - uint32(k)) & mask; int(lo)+k <= len(ring) {
			copy(out, ring[lo:int(lo)+k])
			slices.Reverse(out)
		} else {
			for j := range out {
				out[j] = ring[(qtail-1-uint32(j))&mask]
			}
		}
		lz := min(uint32(k), p.lazy)
		p.lazy -= lz
		for j, e := range out[lz:] {
			if e < 0 { // a complemented lazy entry (none is stale here)
				out[int(lz)+j] = ^e
			} else {
				meta[e].refCnt = 1
			}
		}
		p.qtail = qtail - uint32(k)
		n -= k
	}
	for ; n > 0 && p.fresh < int32(p.numBlocks); n-- {
		b := p.fresh // never used: no hash, no free-queue entry
		p.fresh++
		if int(b) >= len(p.meta) {
			p.growState(b)
		}
		p.meta[b].refCnt = 1
		dst = append(dst, b)
	}
	for ; n > 0; n-- {
		dst = append(dst, p.takeHead())
	}
	return dst
}

// take1 hands out one block, Allocate(1, nil)'s, the caller having
// checked and taken it from NumFree: the path a decode takes each time
// its token starts a block (allocDecode, which appends it itself: the
// append and the check in here were 34 instructions a block on
// BenchmarkSimulateCodegen).
func (p *BlockPool) take1() int32 {
	if qtail := p.qtail; p.stale == 0 && p.freeHashed == 0 && qtail != p.qhead {
		qtail-- // as Allocate: the most recently freed
		b := p.ring[qtail&uint32(len(p.ring)-1)]
		p.qtail = qtail
		if p.lazy > 0 {
			p.lazy-- // a plain lazy entry: its state says held already
			return b
		}
		if b < 0 {
			return ^b // a complemented one
		}
		p.meta[b].refCnt = 1
		return b
	}
	if b := p.fresh; b < int32(p.numBlocks) {
		p.fresh++ // never used: no hash, no free-queue entry
		if int(b) >= len(p.meta) {
			p.growState(b)
		}
		p.meta[b].refCnt = 1
		return b
	}
	// takeHead's lazy entry at the head, without the call (the ring's
	// length known nonzero leaves its index unchecked).
	if ring, qhead := p.ring, p.qhead; len(ring) > 0 {
		if e := ring[uint(qhead)&uint(len(ring)-1)]; e < -1 {
			p.qhead = qhead + 1
			return ^e
		}
	}
	return p.takeHead()
}

// takeLazy is take1's common case, small enough to inline without PGO
// where take1 is not (cost 265): the head's block when its entry is lazy
// (FreeTailPrivate: nothing to read or write) and take1 would take the
// head (some entry stale or some free block holding a hash, no block
// fresh), else −1 (the caller then calls take1). 89 % of
// BenchmarkSimulateCodegen's 144 k takes; the call to take1 and its
// loads of the pool were ~12 instructions of each (callgrind).
func (p *BlockPool) takeLazy() int32 {
	if p.stale|p.freeHashed != 0 && p.fresh >= int32(p.numBlocks) {
		if e := p.ring[uint(p.qhead)&uint(len(p.ring)-1)]; e < -1 {
			p.qhead++
			return ^e
		}
	}
	return -1
}

// takeHead hands out the free queue's head block (one is free), evicting
// its cached hash.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (p *BlockPool) takeHead() int32 {
	// The head entry, skipping stale ones (−1: blocks taken out of the
	// middle) without reading any block's state. With no free block
	// holding a hash, the block's state is not read either: in a long
	// run the head is the block freed least recently, whose state has
	// left the CPU's caches. The ring and its head are locals: stores to
	// the pool inside the loop made each skip reload them (9
	// instructions a skip; BenchmarkSimulateCodegen skips 270,000 a run).
	// A lazy entry's block (FreeTailPrivate) goes without reading its
	// state either: it holds no hash and already says held.
	// The skipped entries are counted by the head's move, and ring's
	// length known nonzero leaves its index unchecked (a skip was 9
	// instructions).
	ring, q0 := p.ring, p.qhead
	if len(ring) == 0 {
		panic("engine: empty free-queue ring") // (never: 64 entries at least)
	}
	qhead, nb := q0, int32(p.numBlocks)
	b := ring[uint(qhead)&uint(len(ring)-1)]
	for b == -1 || b >= nb { // only while some entry is stale
		if b == -1 {
			qhead++
		} else {
			qhead += uint32(b-nb) + 1 // a run of stale entries (reviveRun)
		}
		b = ring[uint(qhead)&uint(len(ring)-1)]
	}
	p.stale -= int(qhead - q0)
	p.qhead = qhead + 1
	if b < 0 {
		return ^b
	}
	if p.freeHashed > 0 {
		if h := &p.hash[b]; *h != 0 {
			p.cached.deleteIf(*h, b)
			*h = 0
			p.freeHashed--
			p.Evictions++
		}
	}
	p.meta[b].refCnt = 1
	return b
}

// Cache records that block b holds the full block with chained hash h.
// An existing entry for h is kept (the first holder stays the hit).
func (p *BlockPool) Cache(b int32, h uint64) {
	if !p.caching || h == 0 {
		return
	}
	m := &p.meta[b]
	if m.refCnt&refMask == 0 { // not expected (callers cache blocks they hold), kept exact
		p.epoch++ // (a free block's hash changes: chainRun)
		if p.hash[b] == 0 {
			p.freeHashed++
		}
	}
	p.hash[b] = h
	if p.cached.putIfAbsent(h, b) != b {
		m.refCnt |= dupRef // another block is h's hit: b holds a duplicate
	} else {
		m.refCnt &= refMask
	}
}

// cacheHeld is Cache of block b held by one request alone and never
// indexed in its hands: a block of the request's own past its cache hits
// and the blocks it had indexed (cacheFull, allocDecode). Its refCnt is
// then exactly 1: it was set to 1 when handed out (or, a lazy entry's,
// left at 1 by a holder that never indexed it: FreeTailPrivate), no other
// request can have taken it (only an indexed block is a hit), and only
// Cache sets dupRef. So its state is written without being read (perf,
// BenchmarkSimulateCodegen: Cache stalled on that load, 0.53 % of the
// run's samples, the block's state last written when it was freed).
func (p *BlockPool) cacheHeld(b int32, h uint64) {
	if !p.caching || h == 0 {
		return
	}
	if checkCacheHeld && p.meta[b].refCnt != 1 {
		panic("engine: cacheHeld of a block not held by one request alone") // a bug (tests set checkCacheHeld)
	}
	p.hash[b] = h
	c := int32(1)
	if p.cached.putIfAbsent(h, b) != b {
		c |= dupRef // another block is h's hit: b holds a duplicate
	}
	p.meta[b].refCnt = c
}

// checkCacheHeld makes cacheHeld check its block's refCnt (tests).
var checkCacheHeld bool
