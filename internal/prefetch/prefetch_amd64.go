package prefetch

import "unsafe"

// Line hints that the cache line holding addr will be read soon
// (PREFETCHT0: into every cache level). Any address is allowed, nil or
// unmapped included: a prefetch never faults and changes no memory.
//
//go:noescape
func Line(addr unsafe.Pointer)

// Span is Line for every cache line of the n bytes from addr (a few
// lines: one call, where a Line per line costs a call each). Any address
// is allowed, as for Line; n = 0 hints nothing.
//
//go:noescape
func Span(addr unsafe.Pointer, n uintptr)
