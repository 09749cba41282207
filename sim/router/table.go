package router

// table maps well-mixed nonzero 64-bit keys to int32 values: open
// addressing with linear probing and backward-shift deletion, so no
// tombstones. A Go map degrades under the constant insert/delete churn of
// LRU eviction (its probing took 65 % of BenchmarkRoute32x1e5's
// prefix-cache run, 99 µs a request); the engine's prefix-cache index
// (engine.hashIndex) avoids maps for the same reason. Unlike that index,
// this one grows (load ≤ 1/2), so a router's memory follows what it
// remembers, not the replicas' capacity.
type table struct {
	slots []slot
	mask  uint64
	n     int
}

// slot keeps a key and its value together: a probe that hits costs one
// cache miss, not two.
type slot struct {
	key uint64
	val int32
}

func newTable() *table { return &table{slots: make([]slot, 16), mask: 15} }

// get returns the value of k, or -1.
func (t *table) get(k uint64) int32 {
	for i := k & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].key {
		case k:
			return t.slots[i].val
		case 0:
			return -1
		}
	}
}

// put sets k → v (k absent).
func (t *table) put(k uint64, v int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	i := k & t.mask
	for t.slots[i].key != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i] = slot{k, v}
	t.n++
}

// del removes k (present).
func (t *table) del(k uint64) {
	i := k & t.mask
	for t.slots[i].key != k {
		i = (i + 1) & t.mask
	}
	// Backward shift: later entries of the probe chain fill the hole when
	// their home slot is not in (hole, j] cyclically.
	for j := (i + 1) & t.mask; t.slots[j].key != 0; j = (j + 1) & t.mask {
		if home := t.slots[j].key & t.mask; (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	t.n--
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([]slot, 2*len(old))
	t.mask, t.n = uint64(len(t.slots)-1), 0
	for _, s := range old {
		if s.key != 0 {
			t.put(s.key, s.val)
		}
	}
}
