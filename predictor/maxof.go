package predictor

import "math"

// maxOf is math.Max(x, y), inlinable, for the step pricing path (step:
// twice a step priced afresh, ~22 k calls a BenchmarkSimulateCodegen
// run), where math.Max is an assembly call on amd64 (archMax, ~24
// instructions). Where one is strictly greater (neither is NaN then, nor
// are both zeros) math.Max returns it; equal values (±0 included) and
// NaNs go to math.Max.
func maxOf(x, y float64) float64 {
	if x > y {
		return x
	}
	if y > x {
		return y
	}
	return math.Max(x, y)
}
