//go:build !amd64

package prefetch

import "unsafe"

// Line hints that the cache line holding addr will be read soon; on this
// architecture it does nothing (amd64 only: prefetch_amd64.s).
func Line(addr unsafe.Pointer) {}

// Span is Line for every cache line of the n bytes from addr; on this
// architecture it does nothing.
func Span(addr unsafe.Pointer, n uintptr) {}
