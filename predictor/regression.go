package predictor

import (
	"fmt"
	"math"
	"slices"

	"github.com/sajari/regression"
)

// PredictorInterp and PredictorRegression name the two ways of reading the
// operator tables (scenario key `predictor`, simulate/gate --predictor):
// interpolation between measured rows (the default), or per operator
// family a regression on physical features fitted to all of the family's
// rows (RegressionTables).
const (
	PredictorInterp     = "interp"
	PredictorRegression = "regression"
)

// RegressionMaxFitRows bounds the rows one fit uses: sajari/regression
// solves by a full QR factorization (an n × n Q), so larger families are
// fitted on every k-th row in table order and every row is then scored
// (Residuals over all rows, HeldOut over the rows the fit did not see).
const RegressionMaxFitRows = 1200

// LogLinear is one fitted family: log(latency ms) = Coeffs[0] +
// Σ Coeffs[i+1] · x_i, with x the family's feature vector (Features names
// them). A log-space least-squares fit weighs every row by its relative
// error, so small and large shapes count alike.
type LogLinear struct {
	Family   string    // e.g. "gemm bfloat16"
	Features []string  // names of x_i
	Coeffs   []float64 // intercept first
	// Rows is the family's table rows; FitRows of them were fitted.
	Rows, FitRows int
	// Residuals summarizes |predicted − measured| / measured over all rows;
	// HeldOut over the rows the fit did not use (N 0 when it used all).
	Residuals, HeldOut Residuals
	// floor is the family's fastest measured kernel, ms (the overhead
	// feature's scale).
	floor float64
}

// Residuals summarizes relative errors |predicted − measured| / measured.
type Residuals struct {
	N                   int
	Median, P90, Max    float64
	MeanSigned          float64 // mean of (predicted − measured) / measured
	WorstRow            string  // the row of the largest error
	worstErr, signedSum float64
}

// Ms is the fitted latency, milliseconds, at feature vector x.
func (f *LogLinear) Ms(x []float64) float64 {
	y := f.Coeffs[0]
	for i, v := range x {
		y += f.Coeffs[i+1] * v
	}
	return math.Exp(y)
}

// fitLogLinear fits log(lat) on features xs (one vector per row, names
// given) with sajari/regression, on at most RegressionMaxFitRows rows
// taken evenly in the given order, and scores every row. label names a
// row for the residual report. Rows with a non-finite feature or a
// latency ≤ 0 are skipped.
func fitLogLinear(family string, names []string, xs [][]float64, lat []float64, label func(i int) string) (*LogLinear, error) {
	var use []int
	for i, x := range xs {
		if lat[i] > 0 && !slices.ContainsFunc(x, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
			use = append(use, i)
		}
	}
	if len(use) < len(names)+2 {
		return nil, fmt.Errorf("regression %s: %d usable rows for %d features", family, len(use), len(names))
	}
	every := (len(use) + RegressionMaxFitRows - 1) / RegressionMaxFitRows
	r := new(regression.Regression)
	r.SetObserved("log latency ms")
	for j, n := range names {
		r.SetVar(j, n)
	}
	fitted := map[int]bool{}
	for k, i := range use {
		if k%every != 0 {
			continue
		}
		fitted[i] = true
		r.Train(regression.DataPoint(math.Log(lat[i]), xs[i]))
	}
	if err := r.Run(); err != nil {
		return nil, fmt.Errorf("regression %s: %w", family, err)
	}
	f := &LogLinear{Family: family, Features: names, Coeffs: r.GetCoeffs(), Rows: len(use), FitRows: len(fitted)}
	if slices.ContainsFunc(f.Coeffs, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		return nil, fmt.Errorf("regression %s: the fit is singular (features %v)", family, names)
	}
	var all, held []float64
	for _, i := range use {
		e := (f.Ms(xs[i]) - lat[i]) / lat[i]
		all = append(all, e)
		f.Residuals.add(e, label, i)
		if !fitted[i] {
			held = append(held, e)
			f.HeldOut.add(e, label, i)
		}
	}
	f.Residuals.finish(all)
	f.HeldOut.finish(held)
	return f, nil
}

func (r *Residuals) add(e float64, label func(int) string, i int) {
	r.signedSum += e
	if a := math.Abs(e); a > r.worstErr || r.WorstRow == "" {
		r.worstErr, r.WorstRow = a, label(i)
	}
}

func (r *Residuals) finish(errs []float64) {
	r.N = len(errs)
	if r.N == 0 {
		r.WorstRow = ""
		return
	}
	abs := make([]float64, len(errs))
	for i, e := range errs {
		abs[i] = math.Abs(e)
	}
	slices.Sort(abs)
	r.Median = quantile(abs, 0.5)
	r.P90 = quantile(abs, 0.9)
	r.Max = abs[len(abs)-1]
	r.MeanSigned = r.signedSum / float64(r.N)
}

// quantile of sorted values by linear interpolation between order
// statistics (numpy's default).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

// roofline is the physical time floor of a kernel, ms: its FLOPs at the
// peak rate or its bytes at the memory bandwidth, whichever is longer.
func roofline(flops, bytes, peakFLOPS, bandwidth float64) float64 {
	return max(flops/peakFLOPS, bytes/bandwidth) * 1e3
}

// overhead is the feature log(1 + floor / roof): how far below the
// family's fastest measured kernel (floor, ms; launch and tail effects)
// the roofline time lies. It is 0 for large kernels and grows as log of
// the ratio for tiny ones, so a log-linear fit can level off at the
// floor instead of following the roofline to zero.
func overhead(floor, roof float64) float64 { return math.Log1p(floor / roof) }

// familyFloor is the smallest positive latency among lat (ms).
func familyFloor(lat []float64) float64 {
	f := math.Inf(1)
	for _, v := range lat {
		if v > 0 {
			f = min(f, v)
		}
	}
	return f
}
