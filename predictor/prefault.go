package predictor

import "unsafe"

// A page fresh from the operating system that a memo probe reads first
// (an empty slot) is mapped to the shared zero page, and the store that
// fills a slot there faults again to give it its own page: a table
// probed before it is written takes two page faults a page (the step
// memo's 72 pages took 137 faults on the codegen run, ~8 µs each in this
// VM). Written first, a page faults once. But writing a whole table at
// once costs a short run the pages it would never touch (eight DP ranks'
// memos, 114 pages each), so a table is written only once its run has
// stored pagerStores entries in it (a long run, which reaches most of
// its pages): pager notes the pages of those first stores and then
// writes the zero value into one slot on each page none of them touched
// (all zero there: nothing is lost).

// pagerStores is how many stores make a run long enough to write a memo
// table's untouched pages.
const pagerStores = 128

// pager counts a memo table's first stores and the 4 KiB pages they fell
// on (tables of at most 128 pages).
type pager struct {
	n       int
	touched [2]uint64
}

// noteStore records a store into s[i] (call it while g.n < pagerStores);
// at the pagerStores-th it writes the pages no store touched. Not
// inlined: the memos' store paths only test g.n.
//
//go:noinline
func noteStore[T any](g *pager, s []T, i int) {
	first := uintptr(unsafe.Pointer(&s[0])) >> 12
	pg := uintptr(unsafe.Pointer(&s[i]))>>12 - first
	g.touched[pg/64%2] |= 1 << (pg % 64)
	if g.n++; g.n < pagerStores {
		return
	}
	var zero T
	size := unsafe.Sizeof(zero)
	base := uintptr(unsafe.Pointer(&s[0]))
	for pg := uintptr(1); ; pg++ { // page 0 holds s[0]: its first slot starts on it
		start := (first + pg) << 12
		j := int((start - base + size - 1) / size) // the first slot starting on page pg
		if j >= len(s) || pg >= 128 {
			break
		}
		if g.touched[pg/64]&(1<<(pg%64)) == 0 {
			s[j] = zero
		}
	}
	if g.touched[0]&1 == 0 {
		s[0] = zero
	}
}
