package engine

import "slices"

// hashIndex maps a block hash to the block holding it: open addressing
// with linear probing and backward-shift deletion (no tombstones), at
// most half full: it starts with room for the entries a run is expected
// to hold (newBlockPool), else at indexStart slots (or twice the block
// count, if less), and doubles when an insert would pass half, up to
// twice the block count. Each block holds at most one hash, so the table
// never holds more entries than blocks. Keys are already well-mixed 64-bit hashes (0 marks an empty slot;
// ChainHash never returns 0). It replaces a Go map, whose probe chains
// degraded under the constant insert/delete churn of eviction (28 % of a
// DP-8 run's time in map probing). A slot keeps its key and block
// together (12 bytes), so a probe that hits costs one cache miss, not two.
type hashIndex struct {
	slots []slot
	mask  uint64
	n     int
	limit int // the most slots it grows to: 2 × blocks, a power of two
}

// indexStart is the slots an index starts with (192 KiB) when nothing
// says how many entries a run needs (Config.ExpectBlocks 0): the indexes
// of pools up to 8,192 blocks then never grow.
var indexStart = 16384 // (a var: grow_test.go starts indexes small)

// slot is one entry: the key split in halves (so the slot packs into 12
// bytes) and its block.
type slot struct {
	lo, hi uint32
	val    int32
}

func (e *slot) key() uint64 { return uint64(e.hi)<<32 | uint64(e.lo) }

func (e *slot) set(h uint64, b int32) { e.lo, e.hi, e.val = uint32(h), uint32(h>>32), b }

func newHashIndex(blocks, expect int) hashIndex {
	limit := halfFull(blocks, 16, 1<<62)
	size := min(limit, indexStart)
	if expect > 0 {
		size = halfFull(expect, 16, limit)
	}
	x := hashIndex{slots: make([]slot, size), mask: uint64(size - 1), limit: limit}
	// One zero word a 4 KiB page: a fresh page first read (a lookup that
	// finds its slot empty) maps the shared zero page and the insert
	// after faults again; written first, it faults once (the codegen
	// run's 48 pages: 94 faults, ~8 µs each in this VM). Only a small
	// index (at most 64 pages): a large one's pages mostly stay untouched
	// in a run (written at once, a 50,000,000-block cache's index made
	// 1.6 GB resident: attack10e finding 1).
	if size*12 <= 256<<10 {
		for i := 0; i < size; i += 4096 / 12 {
			x.slots[i] = slot{}
		}
	}
	return x
}

// get returns the block for h, or -1.
func (x *hashIndex) get(h uint64) int32 {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		switch x.slots[i].key() {
		case h:
			return x.slots[i].val
		case 0:
			return -1
		}
	}
}

// putIfAbsent records h → b unless h is present, and returns the block
// h maps to after.
func (x *hashIndex) putIfAbsent(h uint64, b int32) int32 {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		switch x.slots[i].key() {
		case h:
			return x.slots[i].val
		case 0:
			if 2*(x.n+1) > len(x.slots) && len(x.slots) < x.limit {
				x.grow()
				return x.putIfAbsent(h, b)
			}
			x.slots[i].set(h, b)
			x.n++
			return b
		}
	}
}

// grow doubles the table, inserting its entries again (get, put and
// delete answer as before: only where an entry sits changes).
//
//go:noinline
func (x *hashIndex) grow() {
	old := x.slots
	x.slots = make([]slot, 2*len(old))
	x.mask = uint64(len(x.slots) - 1)
	for _, e := range old {
		if h := e.key(); h != 0 {
			i := h & x.mask
			for x.slots[i].key() != 0 {
				i = (i + 1) & x.mask
			}
			x.slots[i] = e
		}
	}
}

// deleteIf removes h when it maps to b.
func (x *hashIndex) deleteIf(h uint64, b int32) {
	i := h & x.mask
	for ; x.slots[i].key() != h; i = (i + 1) & x.mask {
		if x.slots[i].key() == 0 {
			return
		}
	}
	if x.slots[i].val != b {
		return
	}
	// Backward-shift: move later entries of the probe chain into the hole.
	for j := (i + 1) & x.mask; x.slots[j].key() != 0; j = (j + 1) & x.mask {
		home := x.slots[j].key() & x.mask
		// Entry j may fill hole i if its home is not in (i, j] cyclically.
		if (j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j)) {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = slot{}
	x.n--
}

// hits appends to hit the blocks holding hs[0], hs[1], … up to the first
// hash not present, and returns hit and whether every hash was present.
// It is get in a loop with no calls, into a list grown once, so that the
// table, its mask and the list stay in registers: a prompt's lookups
// were 44 instructions a block inside computedBlocks
// (BenchmarkSimulateCodegen).
func (x *hashIndex) hits(hs []uint64, hit []int32) ([]int32, bool) {
	n0 := len(hit)
	hit = slices.Grow(hit, len(hs))[:n0+len(hs)]
	out := hit[n0:]
	slots, mask := x.slots, x.mask
	for j, h := range hs {
		i := h & mask
		for k := slots[i].key(); k != h; k = slots[i].key() {
			if k == 0 {
				return hit[:n0+j], false
			}
			i = (i + 1) & mask
		}
		out[j] = slots[i].val
	}
	return hit, true
}
