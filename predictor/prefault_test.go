package predictor

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestNoteStoreWritesUntouchedPages: until its pagerStores-th store a
// pager only notes pages; then it writes the zero value into the first
// slot starting on each 4 KiB page no noted store fell on, and nothing
// else: stored slots keep their values (here every slot starts at 7, so
// the writes show).
func TestNoteStoreWritesUntouchedPages(t *testing.T) {
	s := new([1 << stepMemoBits]stepSlot)[:] // 256 KiB: page-aligned
	for i := range s {
		s[i].lo = 7
	}
	page := func(i int) uintptr {
		return uintptr(unsafe.Pointer(&s[i]))>>12 - uintptr(unsafe.Pointer(&s[0]))>>12
	}
	var g pager
	stored := map[int]bool{}
	for k := 0; k < pagerStores; k++ {
		i := (k * 97) % 1500 // pages 0–23 only
		s[i].lo = int64(1000 + i)
		stored[i] = true
		noteStore(&g, s, i)
		if k < pagerStores-1 {
			for j := range s {
				if !stored[j] {
					require.Equal(t, int64(7), s[j].lo, "store %d: slot %d written early", k, j)
				}
			}
		}
	}
	touched := map[uintptr]bool{}
	for i := range stored {
		touched[page(i)] = true
	}
	written := 0
	for j := range s {
		switch first := j == 0 || page(j-1) != page(j); {
		case stored[j]:
			require.Equal(t, int64(1000+j), s[j].lo, "slot %d keeps its store", j)
		case first && !touched[page(j)]:
			require.Zero(t, s[j].lo, "slot %d: the first on untouched page %d", j, page(j))
			written++
		default:
			require.Equal(t, int64(7), s[j].lo, "slot %d left alone", j)
		}
	}
	require.Equal(t, int(page(len(s)-1))+1-len(touched), written)
	require.Greater(t, written, 35) // 40 of the 64 pages
}
