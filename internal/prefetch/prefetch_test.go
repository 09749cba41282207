package prefetch

import (
	"testing"
	"unsafe"
)

// TestLineChangesNothing: a prefetch of a live value leaves it as it was,
// and one of nil (as a caller past a slice's end would never pass, but an
// empty pointer might) does not fault.
func TestLineChangesNothing(t *testing.T) {
	v := [16]int64{1, 2, 3}
	for i := range v {
		Line(unsafe.Pointer(&v[i]))
	}
	if v != [16]int64{1, 2, 3} {
		t.Fatalf("prefetch changed memory: %v", v)
	}
	Line(nil)
}

// TestSpanChangesNothing: Span over a value, from an unaligned start and
// across lines, at length 0 and from nil, leaves memory as it was and
// does not fault.
func TestSpanChangesNothing(t *testing.T) {
	v := [40]int64{1, 2, 3}
	want := v
	for _, off := range []uintptr{0, 1, 7, 63, 100} {
		for _, n := range []uintptr{0, 1, 64, 104, 200} {
			Span(unsafe.Add(unsafe.Pointer(&v[0]), off), n)
		}
	}
	Span(nil, 0)
	Span(nil, 256)
	if v != want {
		t.Fatalf("prefetch changed memory: %v", v)
	}
}
