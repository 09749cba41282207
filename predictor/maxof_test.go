package predictor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// maxOf gives math.Max's bits for every pair of inputs: equal values,
// zeros of both signs, infinities, NaN, and random values of every size
// and sign.
func TestMaxOfIsMathMax(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994,
		1<<52 - 0.5, 1<<52 - 1.5, 1 << 52, 1<<52 + 1, 1 << 53, 1<<30 - 0.5, 1<<30 - 1.5, 1 << 30, 1<<31 - 0.5, 1 << 31, 1e300, -1e300,
		math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, math.MaxFloat64}
	rng := rand.New(rand.NewPCG(5, 8))
	xs := append([]float64{}, special...)
	for i := 0; i < 20000; i++ {
		x := math.Ldexp(rng.Float64(), rng.IntN(70)-10)
		if rng.IntN(3) == 0 {
			x = -x
		}
		xs = append(xs, x)
	}
	for i := 0; i < 20000; i++ {
		x, y := xs[rng.IntN(len(xs))], xs[rng.IntN(len(xs))]
		if i < len(special)*len(special) {
			x, y = special[i/len(special)], special[i%len(special)]
		}
		if got, want := maxOf(x, y), math.Max(x, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("maxOf(%v, %v) = %v, math.Max %v", x, y, got, want)
		}
	}
}
