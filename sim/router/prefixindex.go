package router

import "math/bits"

// prefixIndex is a router's memory of which replica holds which prompt
// blocks: every block it sent to a replica, in an LRU of that replica's
// capacity, as llm-d's approximate prefix-cache indexer keeps an LRU of
// block hashes per server. Its capacity, as llm-d's AutoTune sets it, is
// the server's KV block count (vLLM's num_gpu_blocks) counted in router
// blocks, which hold BlockTokens tokens where the server's hold
// block_size: with 16-token KV blocks the router remembers 4× the tokens
// the server can cache. It learns only from its own routing: it does not
// see a replica's evictions, so it guesses them by LRU.
//
// A request's blocks are touched last block first, so a prompt's head is
// the most recent and is forgotten last: a replica's remembered blocks of
// one chain are always a prefix of it, as vLLM evicts a request's tail
// blocks first. (llm-d's indexer adds head first.)
type prefixIndex struct {
	words   int      // bitset words per entry: ⌈replicas / 64⌉
	entries *table   // block hash → entry
	bits    []uint64 // entry e's replicas: bits[e·words : (e+1)·words]
	meta    []entryMeta
	freeE   []int32   // free entries
	nodes   *table    // nodeKey(entry, replica) → LRU node, but the first holder's
	node    []lruNode // LRU nodes of every replica
	freeN   []int32   // free nodes
	lists   []lruList // each replica's LRU: head = most recent
	n       int       // replicas
}

// entryMeta is one remembered block. Its first holder's LRU node is kept
// here rather than in the nodes table: most blocks (a prompt's own tail)
// only ever have one holder, so they cost no nodes-table work.
type entryMeta struct {
	hash                uint64
	holders             int32 // replicas holding it
	firstRep, firstNode int32 // the inline holder (firstRep -1: none)
}

type lruNode struct {
	entry, prev, next int32
}

type lruList struct {
	head, tail int32
	size, cap  int
}

// newPrefixIndex remembers up to capacity[i] blocks for replica i.
func newPrefixIndex(capacity []int) *prefixIndex {
	x := &prefixIndex{words: (len(capacity) + 63) / 64, entries: newTable(), nodes: newTable(), n: len(capacity)}
	for _, c := range capacity {
		x.lists = append(x.lists, lruList{head: -1, tail: -1, cap: max(c, 1)})
	}
	return x
}

// longest returns how many leading blocks of hashes some replica holds,
// and the set of replicas holding that many (a bitset), in
// O(blocks × ⌈replicas/64⌉). cand is reused scratch.
func (x *prefixIndex) longest(hashes []uint64, cand []uint64) (int, []uint64) {
	cand = cand[:0]
	for w := 0; w < x.words; w++ {
		cand = append(cand, ^uint64(0))
	}
	matched := 0
	for _, h := range hashes {
		e := x.entries.get(h)
		if e < 0 {
			break
		}
		b := x.bits[int(e)*x.words:]
		any := uint64(0)
		for w := range cand {
			any |= cand[w] & b[w]
		}
		if any == 0 {
			break
		}
		for w := range cand {
			cand[w] &= b[w]
		}
		matched++
	}
	return matched, cand
}

// counts sets counts[i] to how many leading blocks of hashes replica i
// holds (llm-d's matchLongestPrefix). O(blocks × replicas) at most.
func (x *prefixIndex) counts(hashes []uint64, counts []int, cand []uint64) []uint64 {
	for i := range counts {
		counts[i] = 0
	}
	cand = cand[:0]
	for w := 0; w < x.words; w++ {
		cand = append(cand, ^uint64(0))
	}
	for k, h := range hashes {
		e := x.entries.get(h)
		if e < 0 {
			return cand
		}
		b := x.bits[int(e)*x.words:]
		alive := false
		for w := range cand {
			cand[w] &= b[w]
			for m := cand[w]; m != 0; m &= m - 1 {
				if i := w*64 + bits.TrailingZeros64(m); i < len(counts) {
					counts[i] = k + 1
					alive = true
				}
			}
		}
		if !alive {
			return cand
		}
	}
	return cand
}

// touch records that replica rep was sent hashes (a request's prompt
// blocks): each becomes rep's most recent, the head block last; blocks
// beyond rep's capacity are forgotten, least recent first.
func (x *prefixIndex) touch(rep int, hashes []uint64) {
	l := &x.lists[rep]
	w, bit := rep/64, uint64(1)<<(rep%64)
	for i := len(hashes) - 1; i >= 0; i-- {
		e := x.entry(hashes[i])
		if x.bits[int(e)*x.words+w]&bit != 0 {
			nd := x.nodeOf(e, rep)
			x.unlink(l, nd)
			x.pushFront(l, nd)
			continue
		}
		nd := x.newNode(e)
		if m := &x.meta[e]; m.firstRep < 0 {
			m.firstRep, m.firstNode = int32(rep), nd
		} else {
			x.nodes.put(x.nodeKey(e, rep), nd)
		}
		x.pushFront(l, nd)
		x.bits[int(e)*x.words+w] |= bit
		x.meta[e].holders++
		if l.size > l.cap {
			x.evict(rep, l)
		}
	}
}

// nodeOf is the LRU node of replica rep (a holder) for entry e.
func (x *prefixIndex) nodeOf(e int32, rep int) int32 {
	if m := &x.meta[e]; m.firstRep == int32(rep) {
		return m.firstNode
	}
	return x.nodes.get(x.nodeKey(e, rep))
}

// nodeKey is the nodes table's key of (entry, replica): mix64 is a
// bijection with mix64(0) = 0, so distinct pairs get distinct nonzero keys.
func (x *prefixIndex) nodeKey(e int32, rep int) uint64 {
	return mix64(uint64(e)*uint64(x.n) + uint64(rep) + 1)
}

func (x *prefixIndex) entry(h uint64) int32 {
	if e := x.entries.get(h); e >= 0 {
		return e
	}
	var e int32
	if n := len(x.freeE); n > 0 {
		e, x.freeE = x.freeE[n-1], x.freeE[:n-1]
	} else {
		e = int32(len(x.meta))
		x.meta = append(x.meta, entryMeta{})
		x.bits = append(x.bits, make([]uint64, x.words)...)
	}
	x.meta[e] = entryMeta{hash: h, firstRep: -1}
	x.entries.put(h, e)
	return e
}

func (x *prefixIndex) newNode(e int32) int32 {
	if n := len(x.freeN); n > 0 {
		nd := x.freeN[n-1]
		x.freeN = x.freeN[:n-1]
		x.node[nd] = lruNode{entry: e, prev: -1, next: -1}
		return nd
	}
	x.node = append(x.node, lruNode{entry: e, prev: -1, next: -1})
	return int32(len(x.node) - 1)
}

func (x *prefixIndex) pushFront(l *lruList, nd int32) {
	n := &x.node[nd]
	n.prev, n.next = -1, l.head
	if l.head >= 0 {
		x.node[l.head].prev = nd
	} else {
		l.tail = nd
	}
	l.head = nd
	l.size++
}

func (x *prefixIndex) unlink(l *lruList, nd int32) {
	n := &x.node[nd]
	if n.prev >= 0 {
		x.node[n.prev].next = n.next
	} else {
		l.head = n.next
	}
	if n.next >= 0 {
		x.node[n.next].prev = n.prev
	} else {
		l.tail = n.prev
	}
	l.size--
}

// evict forgets replica rep's least recent block.
func (x *prefixIndex) evict(rep int, l *lruList) {
	nd := l.tail
	x.unlink(l, nd)
	e := x.node[nd].entry
	m := &x.meta[e]
	if m.firstRep == int32(rep) {
		m.firstRep = -1
	} else {
		x.nodes.del(x.nodeKey(e, rep))
	}
	x.freeN = append(x.freeN, nd)
	x.bits[int(e)*x.words+rep/64] &^= 1 << (rep % 64)
	if m.holders--; m.holders == 0 {
		x.entries.del(m.hash)
		x.freeE = append(x.freeE, e)
	}
}
