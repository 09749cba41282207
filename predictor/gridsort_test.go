package predictor

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// gridData.build orders the points by batch as sort.SliceStable did (a
// stable sort's order is its comparison's alone): the same rows on
// random point sets with repeated batches, repeated x and ties in both,
// where which repeated point a series keeps depends on the order.
func TestGridBuildSortsAsSliceStable(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	for trial := 0; trial < 200; trial++ {
		points := make([]point, 1+rng.Intn(300))
		for i := range points {
			points[i] = point{batch: float64(int(1) << rng.Intn(6)), x: float64(1 + rng.Intn(20)), y: rng.Float64()}
		}
		want := append([]point(nil), points...)
		sort.SliceStable(want, func(i, j int) bool { return want[i].batch < want[j].batch })
		var got []point
		g := &gridData{points: func() []point {
			got = append([]point(nil), points...)
			return got
		}}
		g.build()
		require.Equal(t, want, got, "trial %d: the sorted points", trial)
	}
}
