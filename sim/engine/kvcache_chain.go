package engine

// chainRun records where a finished request's cache hits went in the
// free queue, for the next request with its prompt (touchChain): the
// hits chain[lo:end] of its prompt's memo chain were queued one after
// another, tail first, chain[j] at sequence number seq + (end − 1 − j).
// On BenchmarkSimulateCodegen a prompt's ~30 blocks of its own are
// freed so by one request and taken again by the next, where taking
// them one by one (the block's state read and written, its entry made
// stale, then skipped at the head) was ~30 instructions a block.
type chainRun struct {
	seq     uint32
	lo, end int32
	epoch   uint32 // the pool's epoch when recorded
	ok      bool
}

// touchChain is the cache hits of a prompt whose chain of blocks the
// index gave before (promptMemo.chain), taken as Touch takes them, in
// one pass that reads each block's state once: it appends to hit, and
// touches, the blocks of chain in order while each holds its hash in hs
// (chain[j] for hs[j]) and is no duplicate, and returns hit and how many
// it took. Each is then the index's block for its hash (dupRef says why),
// the block hashIndex.hits would give; checking that costs what a probe
// of the index does, so taking the hits apart from Touch paid nothing
// (BenchmarkSimulateCodegen: an admission hits ~35 blocks). Untouch
// undoes it exactly.
//
// run, the prompt's chainRun (consumed), lets the blocks it recorded go
// in one pass (reviveRun) where their entries are still where it says.
func (p *BlockPool) touchChain(chain []int32, hs []uint64, hit []int32, run *chainRun) ([]int32, int) {
	chain = chain[:min(len(chain), len(hs))]
	hs = hs[:len(chain)]
	lo, end := 0, 0
	if run.ok {
		run.ok = false
		if run.epoch == p.epoch && !p.perBlock {
			lo, end = int(run.lo), min(int(run.end), len(chain))
		}
	}
	var n, revived int
	if lo < end {
		if lo > 0 {
			n, revived = touchRun(p.meta, p.hash, p.ring, chain[:lo], hs[:lo])
		}
		if n == lo {
			// chain[lo]'s entry is at run.seq + run.end − 1 − lo.
			k := p.reviveRun(chain[lo:end], run.seq+uint32(int(run.end)-1-lo))
			n, revived = lo+k, revived+k
			if n < len(chain) {
				m, r := touchRun(p.meta, p.hash, p.ring, chain[n:], hs[n:])
				n, revived = n+m, revived+r
			}
		}
	} else {
		n, revived = touchRun(p.meta, p.hash, p.ring, chain, hs)
	}
	p.numFree -= revived
	p.stale += revived
	p.freeHashed -= revived // (a hit holds a hash)
	return append(hit, chain[:n]...), n
}

// reviveRun takes the first blocks of a chainRun, blocks[i] queued at
// sequence number top − i, while its entry there is still live: the
// entry is in the queue (not yet at the head: sequence numbers only
// grow, and the pool's epoch says none were renumbered) and still names
// the block (a block taken out of the queue leaves −1 there, and every
// block freed again gets a new entry). Such a block is free, no
// duplicate, and holds the hash it held when freed (a hit's, the one
// the chain's next request looks up: only handing it out or Cache,
// which changes the epoch, would change it), so it is taken as
// touchRun would take it, without reading its state: refCnt 1. Their
// entries, now stale, become one run the head skips at once: the
// lowest one says how many (numBlocks + k − 1; growRing and takeHead
// read it, the others keep their block ids, which Untouch's restoring
// each block's entry at its position puts back exactly). It returns how
// many it took; the caller counts them revived. (Counted by the index
// in blocks, not by a ring position moved down: that form's loop took a
// padding NOP a block, the jcc-erratum alignment of its bounds check.)
func (p *BlockPool) reviveRun(blocks []int32, top uint32) int {
	ring, meta := p.ring, p.meta
	if len(ring) == 0 || int32(p.qtail-1-top) < 0 || int32(top-p.qhead) < 0 {
		return 0 // (never an empty ring) past the tail, or reached by the head
	}
	blocks = blocks[:min(len(blocks), int(top-p.qhead)+1)]
	mask, k := uint(len(ring)-1), len(blocks)
	for i, b := range blocks {
		if ring[(uint(top)-uint(i))&mask] != b {
			k = i
			break
		}
		meta[b].refCnt = 1
	}
	if k > 0 {
		ring[(uint(top)-uint(k-1))&mask] = int32(p.numBlocks) + int32(k-1)
	}
	return k
}

// touchRun is touchChain's loop over its pool's state (meta, hash, ring):
// the blocks of chain it took and how many of them were free. Few
// values live in it, so that they stay in registers: a call of its own
// (inlined, touchChain's values were reloaded every block), ring's index
// unchecked (its length known nonzero): 25 instructions a revived block
// where it was 30. The hash (an array of its own: BlockPool.hash) is
// tested before the state is read: both read first kept one more value
// than the registers hold (a reload every block, 143 k instructions a
// BenchmarkSimulateCodegen run), and hash's length is meta's, so hash[b]
// needs no check of its own.
//
//go:noinline
func touchRun(meta []blockMeta, hash []uint64, ring []int32, chain []int32, hs []uint64) (n, revived int) {
	if len(ring) == 0 {
		return 0, 0 // (never: 64 entries at least)
	}
	hs, hash = hs[:len(chain)], hash[:len(meta)]
	for j, b := range chain {
		if hash[b] != hs[j] {
			return j, revived
		}
		m := &meta[b]
		c := m.refCnt
		if c&dupRef != 0 {
			return j, revived
		}
		if c == 0 {
			revived++ // its free-queue entry goes stale (a hashed block is never fresh)
			ring[uint(m.pos)&uint(len(ring)-1)] = -1
		}
		m.refCnt = c + 1
	}
	return len(chain), revived
}
