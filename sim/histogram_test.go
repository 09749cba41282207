package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// addRepeated gives bit for bit what n additions give, over sums and
// addends of every size the histogram sees (gaps of 1 ns to hours, their
// squares, sums up to 10^30), near binade edges, and ties (an addend
// whose remainder is exactly half a unit, whose rounding alternates).
func TestAddRepeatedIsTheLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	loop := func(s, v float64, n int64) float64 {
		for ; n > 0; n-- {
			s += v
		}
		return s
	}
	check := func(s, v float64, n int64) {
		want, got := loop(s, v, n), addRepeated(s, v, n)
		if math.Float64bits(want) != math.Float64bits(got) {
			require.Failf(t, "addRepeated differs", "s %v v %v n %d: loop %v, addRepeated %v", s, v, n, want, got)
		}
	}
	for i := 0; i < 20000; i++ {
		v := float64(1 + rng.Int64N(1<<uint(rng.IntN(43))))
		if rng.IntN(2) == 0 {
			v *= v
		}
		s := 0.0
		switch rng.IntN(4) {
		case 0:
			s = math.Ldexp(1, rng.IntN(100)) - float64(rng.IntN(1000))*v // just below a binade edge
		case 1:
			s = float64(rng.Int64N(1 << 62))
		case 2:
			s = math.Ldexp(rng.Float64(), rng.IntN(100))
		}
		check(math.Max(s, 0), v, 1+rng.Int64N(3000))
	}
	// Ties: s's unit is 2 (s in [2^53, 2^54)), v odd: each addition ties.
	for _, v := range []float64{1, 3, 5, 7, 1e6 + 1} {
		check(1<<53, v, 1001)
		check(1<<53+2, v, 1000)
	}
	check(1e30, 1, 1e6) // additions that change nothing
}

// A weighted add is n adds: same counts, same sums to the bit, and the
// sums are those of adding every sample in turn (the runs of equal
// samples the histogram keeps pending included: a value often repeats
// here, over several calls).
func TestAddNIsAddNTimes(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	var sum, sumSq float64 // every sample added in turn
	rng := rand.New(rand.NewPCG(1, 2))
	v := int64(1)
	for i := 0; i < 3000; i++ {
		n := 1 + rng.Int64N(200)
		switch rng.IntN(5) {
		case 0:
			v = -rng.Int64N(3) // gaps below 1 ns count as 1 ns
		case 1, 2:
			// the value before again
		default:
			v = 1 + rng.Int64N(5e7)
		}
		for k := int64(0); k < n; k++ {
			a.Add(v)
			f := float64(max(v, 1))
			sum += f
			sumSq += f * f
		}
		b.AddN(v, n)
		if i%7 == 0 {
			require.Equal(t, sum/float64(b.n), b.Mean()) // a read mid-run settles the sums
		}
	}
	a.settle()
	b.settle()
	require.Equal(t, a.counts, b.counts)
	require.Equal(t, a.n, b.n)
	require.Equal(t, math.Float64bits(sum), math.Float64bits(a.sum))
	require.Equal(t, math.Float64bits(sum), math.Float64bits(b.sum))
	require.Equal(t, math.Float64bits(sumSq), math.Float64bits(a.sumSquares()))
	require.Equal(t, math.Float64bits(sumSq), math.Float64bits(b.sumSquares()))
}

// The sum of squares kept in units (Histogram.sqUnits) is the sum of
// adding each square in turn, also where an addition ties (a square that
// is an odd multiple of half the unit: here 3² = 4.5 units of 2 once the
// sum passes 2^53) and where runs leave a binade.
func TestSumSquaresInUnitsIsTheLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 200; trial++ {
		h := NewHistogram()
		var sumSq float64
		add := func(v, n int64) {
			h.AddN(v, n)
			f := float64(v)
			for k := int64(0); k < n; k++ {
				sumSq += f * f
			}
		}
		add(1e7+1, 90+rng.Int64N(20)) // the sum of squares near 2^53 (unit 1, then 2)
		for i := 0; i < 40; i++ {
			switch rng.IntN(3) {
			case 0:
				add(1+2*rng.Int64N(8), 1+rng.Int64N(2000)) // small odd values: ties with unit 2
			case 1:
				add(1+rng.Int64N(1<<uint(1+rng.IntN(30))), 1+rng.Int64N(300))
			default:
				add(1e7+rng.Int64N(1e6), 1+rng.Int64N(50)) // the sum across binades
			}
		}
		h.settle()
		require.Equal(t, math.Float64bits(sumSq), math.Float64bits(h.sumSquares()), "trial %d", trial)
	}
}

// TestPercentileIsTheSortedBucket: the histogram's percentiles, its
// counts in blocks allocated as samples arrive, are the middles of the
// buckets the sorted samples' ranks fall in, for samples spread over many
// blocks (1 ns to 2^62 ns, and int64's largest) and packed in one.
func TestPercentileIsTheSortedBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 50; trial++ {
		h := NewHistogram()
		var buckets []int
		for i := 0; i < 1+rng.IntN(400); i++ {
			var v int64
			switch {
			case trial%2 == 0:
				v = 1 + rng.Int64N(1<<uint(1+rng.IntN(62)))
			case i == 7:
				v = math.MaxInt64
			default:
				v = 90_000_000 + rng.Int64N(20_000_000)
			}
			n := 1 + rng.Int64N(3)
			h.AddN(v, n)
			for k := int64(0); k < n; k++ {
				buckets = append(buckets, bucket(float64(v)))
			}
		}
		slices.Sort(buckets)
		for _, p := range []float64{0, 1, 25, 50, 90, 99, 99.9, 100} {
			rank := max(int(math.Ceil(p/100*float64(len(buckets)))), 1)
			require.Equal(t, bucketMid(buckets[rank-1]), h.Percentile(p), "trial %d p%g", trial, p)
		}
	}
}
