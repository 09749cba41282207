package engine

// hashIndex maps a block hash to the block holding it: open addressing
// with linear probing and backward-shift deletion (no tombstones), sized
// once to at least twice the block count. Each block holds at most one
// hash, so the table never holds more entries than blocks and never
// grows. Keys are already well-mixed 64-bit hashes (0 marks an empty slot;
// ChainHash never returns 0). It replaces a Go map, whose probe chains
// degraded under the constant insert/delete churn of eviction (28 % of a
// DP-8 run's time in map probing).
type hashIndex struct {
	keys []uint64
	vals []int32
	mask uint64
	n    int
}

func newHashIndex(blocks int) hashIndex {
	size := 16
	for size < 2*blocks {
		size <<= 1
	}
	return hashIndex{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1)}
}

// get returns the block for h, or -1.
func (x *hashIndex) get(h uint64) int32 {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		switch x.keys[i] {
		case h:
			return x.vals[i]
		case 0:
			return -1
		}
	}
}

// putIfAbsent records h → b unless h is present.
func (x *hashIndex) putIfAbsent(h uint64, b int32) {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		switch x.keys[i] {
		case h:
			return
		case 0:
			x.keys[i], x.vals[i] = h, b
			x.n++
			return
		}
	}
}

// deleteIf removes h when it maps to b.
func (x *hashIndex) deleteIf(h uint64, b int32) {
	i := h & x.mask
	for ; x.keys[i] != h; i = (i + 1) & x.mask {
		if x.keys[i] == 0 {
			return
		}
	}
	if x.vals[i] != b {
		return
	}
	// Backward-shift: move later entries of the probe chain into the hole.
	for j := (i + 1) & x.mask; x.keys[j] != 0; j = (j + 1) & x.mask {
		home := x.keys[j] & x.mask
		// Entry j may fill hole i if its home is not in (i, j] cyclically.
		if (j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j)) {
			x.keys[i], x.vals[i] = x.keys[j], x.vals[j]
			i = j
		}
	}
	x.keys[i], x.vals[i] = 0, 0
	x.n--
}
