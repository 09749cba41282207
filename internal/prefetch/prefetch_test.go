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
