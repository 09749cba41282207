package predictor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrefaultWritesEachPage: prefault writes the zero value at one
// element of each 4 KiB page (every 4096/size-th element from the first)
// and nothing else.
func TestPrefaultWritesEachPage(t *testing.T) {
	s := make([]stepSlot, 200) // 72-byte slots: every 56th
	for i := range s {
		s[i].lo = 7
	}
	prefault(s)
	for i := range s {
		want := int64(7)
		if i%(4096/72) == 0 {
			want = 0
		}
		require.Equal(t, want, s[i].lo, "slot %d", i)
	}
	b := make([]int64, 1025) // 8-byte words: every 512th
	for i := range b {
		b[i] = 1
	}
	prefault(b)
	require.Equal(t, []int64{0, 0, 0}, []int64{b[0], b[512], b[1024]})
	require.Equal(t, int64(1), b[511]+b[513]-b[1023])
}
