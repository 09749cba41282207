package prefetch

import "unsafe"

// Line hints that the cache line holding addr will be read soon
// (PREFETCHT0: into every cache level). Any address is allowed, nil or
// unmapped included: a prefetch never faults and changes no memory.
//
//go:noescape
func Line(addr unsafe.Pointer)
