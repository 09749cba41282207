package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The queue pops events in (time, push order), the hot event beside the
// heap included: random pushes (many at equal times) and pops against a
// sorted list.
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var q queue
	type ref struct{ at, seq int64 }
	var want []ref
	seq := int64(0)
	for i := 0; i < 100000; i++ {
		if rng.IntN(2) > 0 || len(want) == 0 {
			seq++
			at := rng.Int64N(50)
			q.push(at, kick{&Core{ID: int(seq)}})
			// pushes come in seq order: insert after every (at, ·) ≤ at
			k, _ := slices.BinarySearchFunc(want, at+1, func(r ref, t int64) int { return int(r.at - t) })
			want = slices.Insert(want, k, ref{at, seq})
			continue
		}
		require.Equal(t, want[0].at, q.next())
		it := q.pop()
		require.Equal(t, want[0], ref{it.at, int64(it.ev.(kick).c.ID)}, "pop %d", i)
		want = want[1:]
		require.Equal(t, len(want), q.len())
	}
}
