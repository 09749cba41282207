package engine

// BlockPool is vLLM's paged KV cache: NumBlocks blocks of BlockSize tokens,
// a free queue ordered for eviction (least recently freed first, and a
// request's tail blocks before its head), and the prefix cache mapping a
// full block's chained hash to the block that holds it
// (vllm/v1/core/block_pool.py, kv_cache_utils.FreeKVCacheBlockQueue).
//
// Blocks are int32 ids; a freed block keeps its hash (and stays a cache
// hit) until it is handed out again.
type BlockPool struct {
	BlockSize int
	numBlocks int
	refCnt    []int32
	hash      []uint64 // 0 = not a cached full block
	prev      []int32  // free-queue links; -1 = none
	next      []int32
	inFree    []bool
	head      int32 // least recently freed (evicted first)
	tail      int32
	numFree   int
	cached    hashIndex
	caching   bool
	// Evictions counts cached blocks handed out again (their hash dropped).
	Evictions int64
}

// NewBlockPool returns a pool of numBlocks free blocks. caching enables
// the prefix cache (enable_prefix_caching).
func NewBlockPool(numBlocks, blockSize int, caching bool) *BlockPool {
	p := &BlockPool{
		BlockSize: blockSize, numBlocks: numBlocks, caching: caching,
		refCnt: make([]int32, numBlocks), hash: make([]uint64, numBlocks),
		prev: make([]int32, numBlocks), next: make([]int32, numBlocks),
		inFree: make([]bool, numBlocks), head: -1, tail: -1,
		cached: newHashIndex(numBlocks),
	}
	for i := 0; i < numBlocks; i++ {
		p.pushTail(int32(i))
	}
	return p
}

// NumBlocks is the pool's capacity in blocks.
func (p *BlockPool) NumBlocks() int { return p.numBlocks }

// NumFree is the number of blocks that can be handed out now (free,
// including cached blocks no request holds).
func (p *BlockPool) NumFree() int { return p.numFree }

// NumUsed is the number of blocks some request holds.
func (p *BlockPool) NumUsed() int { return p.numBlocks - p.numFree }

func (p *BlockPool) pushTail(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.inFree[b] = true
	p.numFree++
}

func (p *BlockPool) remove(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.inFree[b] = false
	p.numFree--
}

// Lookup returns the cached block holding hash h, or -1.
func (p *BlockPool) Lookup(h uint64) int32 {
	if !p.caching {
		return -1
	}
	return p.cached.get(h)
}

// Touch takes a reference on cached blocks a request reuses, pulling free
// ones out of the free queue.
func (p *BlockPool) Touch(blocks []int32) {
	for _, b := range blocks {
		if p.refCnt[b] == 0 && p.inFree[b] {
			p.remove(b)
		}
		p.refCnt[b]++
	}
}

// Allocate hands out n blocks from the head of the free queue, evicting
// their cached hashes. The caller checks NumFree first; Allocate panics on
// an impossible request because that is a scheduler bug, not user input.
func (p *BlockPool) Allocate(n int, dst []int32) []int32 {
	if n > p.numFree {
		panic("engine: BlockPool.Allocate beyond free blocks")
	}
	for i := 0; i < n; i++ {
		b := p.head
		p.remove(b)
		if h := p.hash[b]; h != 0 {
			p.cached.deleteIf(h, b)
			p.hash[b] = 0
			p.Evictions++
		}
		p.refCnt[b] = 1
		dst = append(dst, b)
	}
	return dst
}

// Free drops one reference on each block, given in eviction order (vLLM
// frees a request's blocks tail first so that its tail is evicted first).
func (p *BlockPool) Free(blocks []int32) {
	for _, b := range blocks {
		p.refCnt[b]--
		if p.refCnt[b] == 0 {
			p.pushTail(b)
		}
	}
}

// Cache records that block b holds the full block with chained hash h.
// An existing entry for h is kept (the first holder stays the hit).
func (p *BlockPool) Cache(b int32, h uint64) {
	if !p.caching || h == 0 {
		return
	}
	p.hash[b] = h
	p.cached.putIfAbsent(h, b)
}
