package engine

import (
	"slices"
)

// Free drops one reference on each block, given in eviction order (vLLM
// frees a request's blocks tail first so that its tail is evicted first);
// a block no request holds any more goes to the free queue's tail.
func (p *BlockPool) Free(blocks []int32) { p.free(blocks, false) }

// FreeTailFirst is Free of blocks in reverse order (a request's blocks,
// its tail first): a finished request's path. When the ring has room for
// every block (it then cannot fill) the loop keeps the ring's tail and
// the counts in locals, written once (31 instructions a block before,
// on BenchmarkSimulateCodegen); otherwise free grows the ring as it
// fills.
func (p *BlockPool) FreeTailFirst(blocks []int32) {
	_ = p.freeTailFirst(blocks, false)
}

// freeTailFirst is FreeTailFirst, told whether every block holds a hash
// (allHashed: cache hits a request held, Scheduler.freeBlocks), which
// the loop then does not test block by block (5 instructions a block;
// BenchmarkSimulateCodegen frees ~35 hits a request).
//
// It returns how many of the blocks, from the last, went to the free
// queue one after another (blocks[len(blocks)−run:], their entries the
// queue's run entries from its tail before the call, tail first): a
// chainRun's (freeBlocks), 0 when the ring had to grow.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (p *BlockPool) freeTailFirst(blocks []int32, allHashed bool) (run int) {
	if p.lazy > 0 {
		p.encode()
	}
	if int(p.qtail-p.qhead)+len(blocks) > len(p.ring) {
		p.free(blocks, true)
		return 0
	}
	meta, ring, qtail := p.meta, p.ring, p.qtail
	if len(ring) == 0 {
		panic("engine: empty free-queue ring") // (never: 64 entries at least; lets ring's index go unchecked)
	}
	// The run first, in a loop of its own (tracking where it ends in
	// one loop spilled its registers: 3 instructions a block).
	i := len(blocks) - 1
	for ; i >= 0; i-- {
		b := blocks[i]
		m := &meta[b]
		c := m.refCnt
		if c&refMask > 1 {
			break
		}
		m.refCnt = c & dupRef
		m.pos = qtail
		ring[uint(qtail)&uint(len(ring)-1)] = b
		qtail++
	}
	run = int(qtail - p.qtail)
	for ; i >= 0; i-- {
		b := blocks[i]
		m := &meta[b]
		c := m.refCnt
		if c&refMask > 1 {
			m.refCnt = c - 1
			continue
		}
		m.refCnt = c & dupRef
		m.pos = qtail
		ring[uint(qtail)&uint(len(ring)-1)] = b
		qtail++
	}
	hashed := int(qtail - p.qtail)
	if !allHashed { // count the queued blocks that hold one
		hashed = 0
		hash := p.hash
		for seq := p.qtail; seq != qtail; seq++ {
			if hash[ring[seq&uint32(len(ring)-1)]] != 0 {
				hashed++
			}
		}
	}
	p.numFree += int(qtail - p.qtail)
	p.freeHashed += hashed
	p.qtail = qtail
	return run
}

// FreeTailPrivate is FreeTailFirst of a request's blocks whose
// blocks[from:] no other request holds and hold no hash (blocks past
// the shared and cache-hit ones of a request never preempted:
// Scheduler.freeBlocks says), those queued lazily: their entries are
// the block ids complemented (^b, below −1; −1 marks a stale entry),
// their state left as their holder left it (refCnt 1, pos unset), read
// by nothing until one is handed out again, which then writes nothing
// either (Allocate, take1, takeHead). A private block is never a cache
// hit or cached while free (only held blocks are). A random prompt's
// blocks are freed and handed out again in turn, and writing their
// state twice was ~30 instructions a block (BenchmarkMillion); a
// repeated prompt's output blocks were read again, cold, at the free
// queue's head (BenchmarkSimulateCodegen). The free queue's order is
// FreeTailFirst's.
func (p *BlockPool) FreeTailPrivate(blocks []int32, from int) {
	_, _ = p.freeTailPrivate(blocks, from, 0)
}

// freeTailPrivate is FreeTailPrivate told that blocks[:hits] hold a
// hash (freeTailFirst's allHashed), hits ≤ from. It returns where the
// hits' entries start and freeTailFirst's run of them (a chainRun).
func (p *BlockPool) freeTailPrivate(blocks []int32, from, hits int) (seq uint32, run int) {
	priv := blocks[from:]
	if n := len(priv); n > 0 {
		if int(p.qtail-p.qhead)+n > len(p.ring) {
			p.growRing(n)
		}
		ring, qtail := p.ring, p.qtail
		mask := uint32(len(ring) - 1)
		lo := qtail & mask
		switch {
		case p.stale == 0 && p.freeHashed == 0 && int(lo)+n <= len(ring):
			// Every free block alike: plain ids on the top (lazy),
			// copied then reversed (tail first), where a loop was 10
			// instructions a block.
			copy(ring[lo:int(lo)+n], priv)
			slices.Reverse(ring[lo : int(lo)+n])
			p.lazy += uint32(n)
		case int(lo)+n <= len(ring):
			// Complemented, tail first, in one pass from the last slot
			// down (9 instructions a block, where copying, reversing
			// and complementing in turn was ~15 and swapping and
			// complementing pairs 16 a pair).
			dst, j := ring[lo:int(lo)+n], n-1
			for _, b := range priv {
				dst[j] = ^b
				j--
			}
		default:
			p.encode()
			for i, b := range priv {
				ring[(qtail+uint32(n-1-i))&mask] = ^b
			}
		}
		p.qtail = qtail + uint32(n)
		p.numFree += n
	}
	if from > hits {
		_ = p.freeTailFirst(blocks[hits:from], false)
	}
	if hits > 0 {
		seq = p.qtail
		run = p.freeTailFirst(blocks[:hits], true)
	}
	return seq, run
}

// encode complements the plain lazy entries (lazy), before another
// entry goes on top of them or the ring grows.
func (p *BlockPool) encode() {
	ring := p.ring
	mask := uint32(len(ring) - 1)
	for seq := p.qtail - p.lazy; seq != p.qtail; seq++ {
		ring[seq&mask] = ^ring[seq&mask]
	}
	p.lazy = 0
}

// free is Free, of blocks in reverse order when tailFirst, growing the
// ring whenever it is full.
func (p *BlockPool) free(blocks []int32, tailFirst bool) {
	if p.lazy > 0 {
		p.encode()
	}
	k, dk := 0, 1 // blocks[k] next, k moving by dk
	if tailFirst {
		k, dk = len(blocks)-1, -1
	}
	for range blocks {
		b := blocks[k]
		k += dk
		m := &p.meta[b]
		if m.refCnt&refMask > 1 {
			m.refCnt--
			continue
		}
		if int(p.qtail-p.qhead) == len(p.ring) {
			// Grown while b is still held, so that an entry b left
			// stale (freed, then a cache hit) counts as stale.
			p.growRing(1)
		}
		m.refCnt &= dupRef
		p.ring[p.qtail&uint32(len(p.ring)-1)] = b
		m.pos = p.qtail
		p.qtail++
		p.numFree++
		if p.hash[b] != 0 {
			p.freeHashed++
		}
	}
}

// Untouch drops the references Touch or touchChain took on blocks (an
// admission that did not go ahead), with nothing else done to the pool
// since: a block no request holds then is free again with its entry
// where it was (Touch kept its position), as before.
func (p *BlockPool) Untouch(blocks []int32) {
	meta, ring := p.meta, p.ring
	mask := uint32(len(ring) - 1)
	revived := 0
	for _, b := range blocks {
		m := &meta[b]
		if m.refCnt--; m.refCnt&refMask == 0 {
			revived++
			ring[m.pos&mask] = b
		}
	}
	p.numFree += revived
	p.stale -= revived
	p.freeHashed += revived
}
