package predictor

import "unsafe"

// prefault writes a zero word on each 4 KiB page of s. Fresh from the
// operating system, a page first read (a memo probe finding an empty
// slot) is mapped to the shared zero page, and the write that fills a
// slot faults again to give it its own: a table probed before it is
// written takes two page faults a page, where writing it first takes one
// (the step memo's 72 pages: 137 faults on the codegen run, about 8 µs
// each in this VM). Not inlined: the memos call it once, from their hot
// paths, which stay as they were.
//
//go:noinline
func prefault[T any](s []T) {
	var zero T
	step := max(4096/int(unsafe.Sizeof(zero)), 1)
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
}
