package predictor

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"frontier/profiles"
)

// Series features: each measured series (one GEMM (n, k) pair over m, one
// attention head shape over batch and length, one MoE shape and split over
// tokens, one collective and GPU count over message size) is fitted on its
// own, log latency on the roofline time of the point, the axis itself and
// the overhead term. With the physics in the features a series needs few
// coefficients, so the fit follows the curve but not a single row's noise,
// and it extends the series along its axis by the same physics.
var (
	gemmSeriesFeatures    = []string{"log roofline_ms", "log m", "(log m)²", "log(1+floor/roofline)"}
	attnSeriesFeatures    = []string{"log roofline_ms", "log length", "(log length)²", "log(1+floor/roofline)"}
	moeSeriesFeatures     = []string{"log roofline_ms", "log tokens", "(log tokens)²", "log(1+floor/roofline)"}
	commSeriesFeatures    = []string{"log wire_ms", "log elements", "log(1+floor/wire)"}
	regressionTablesCache sync.Map // regressionKey → *regressed
)

// Extension points added beyond each series' measured range (the axis
// values the tables stop short of in long-context and large-batch
// deployments): GEMM rows m, prefill prompt lengths (batch 1), MoE tokens.
var (
	gemmExtendM       = []int64{16384, 32768, 65536}
	prefillExtendISL  = []int64{32768, 65536, 131072}
	moeExtendTokens   = []int64{32768, 65536}
	minSeriesRowsUsed = 5 // a shorter series keeps its measured rows
)

// regressionNote says what the regression predictor prices from, and
// that its series reach past the measured ranges (the extension points
// above): a shape there is inside the regressed table, not counted as
// extrapolated, and "the table's" edge in a reach is the regressed one.
func regressionNote(source string) string {
	last := func(v []int64) int64 { return v[len(v)-1] }
	return fmt.Sprintf("predictor regression: GEMM, attention, MoE and collective latencies are per-series regressions of %s, "+
		"which also extend the series past the measured ranges (GEMM m up to %d, prefill prompt length up to %d, MoE tokens up to %d); "+
		"shapes there are priced by the fit and count as inside the (regressed) tables",
		source, last(gemmExtendM), last(prefillExtendISL), last(moeExtendTokens))
}

type regressed struct {
	t     *profiles.Tables
	fits  []*LogLinear // one summary per family: the residuals of its series fits
	err   error
	ready sync.Once
}

// RegressionTables returns t with every latency of the GEMM, attention,
// MoE and collective tables replaced by its series' regression (smoothing
// the measurement noise), and rows added past each series' measured end
// (gemmExtendM, prefillExtendISL, moeExtendTokens) from the same fit, so
// the interpolating predictor built on it prices through the regressions.
// Eager latencies scale with the kernel latency. MLA and elementwise
// tables are kept as measured. Built once per (t, hardware) and shared.
func RegressionTables(t *profiles.Tables, hw profiles.Hardware) (*profiles.Tables, error) {
	v, _ := regressionTablesCache.LoadOrStore(regressionKey{t, hw.Name}, &regressed{})
	g := v.(*regressed)
	g.ready.Do(func() { g.t, g.fits, g.err = buildRegressed(t, hw) })
	return g.t, g.err
}

// SeriesFits returns, per family, the residuals of the series regressions
// RegressionTables uses (family names as Regressions.All; Rows and
// FitRows sum over the family's series).
func SeriesFits(t *profiles.Tables, hw profiles.Hardware) ([]*LogLinear, error) {
	v, _ := regressionTablesCache.LoadOrStore(regressionKey{t, hw.Name}, &regressed{})
	g := v.(*regressed)
	g.ready.Do(func() { g.t, g.fits, g.err = buildRegressed(t, hw) })
	return g.fits, g.err
}

func buildRegressed(t *profiles.Tables, hw profiles.Hardware) (*profiles.Tables, []*LogLinear, error) {
	if t.Lazy() { // its fits read t.Gemm and the attention rows
		panic("predictor: RegressionTables reads decoded rows; a LazyTablesFor set keeps them undecoded") // a bug, not input
	}
	r := &Regressions{t: t, hw: hw}
	out := *t
	out.Source = t.Source + " (regression)"
	out.Notes = append(slices.Clone(t.Notes), regressionNote(t.Source))
	var fits []*LogLinear
	var err error
	if out.Gemm, fits, err = r.regressGemm(fits); err != nil {
		return nil, nil, err
	}
	if out.GenerationAttn, fits, err = r.regressAttn(t.GenerationAttn, "decode attention", false, fits); err != nil {
		return nil, nil, err
	}
	if out.ContextAttn, fits, err = r.regressAttn(t.ContextAttn, "prefill attention", true, fits); err != nil {
		return nil, nil, err
	}
	if out.MoE, fits, err = r.regressMoE(fits); err != nil {
		return nil, nil, err
	}
	if out.Comm, fits, err = r.regressComm(fits); err != nil {
		return nil, nil, err
	}
	return &out, fits, nil
}

// seriesGroups groups row indices by key, in first-seen order.
type seriesGroups struct {
	keys []string
	rows map[string][]int
}

func (s *seriesGroups) add(key string, i int) {
	if s.rows == nil {
		s.rows = map[string][]int{}
	}
	if _, ok := s.rows[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.rows[key] = append(s.rows[key], i)
}

// familyFit fits every series of one family with features x(i, floor)
// (row i; floor the series' fastest measured latency, ms) and returns each row's fitted latency (NaN where its series was too
// short to fit: the measured value stays), the per-series fits, and the
// family summary (residuals over all fitted rows).
func familyFit(family string, names []string, s seriesGroups, lat []float64, x func(i int, floor float64) []float64, label func(i int) string) ([]float64, map[string]*LogLinear, *LogLinear) {
	pred := make([]float64, len(lat))
	fits := map[string]*LogLinear{}
	sum := &LogLinear{Family: family, Features: names}
	var errs []float64
	for i := range pred {
		pred[i] = math.NaN()
	}
	for _, k := range s.keys {
		idx := s.rows[k]
		if len(idx) < max(minSeriesRowsUsed, len(names)+2) {
			continue
		}
		ys := make([]float64, len(idx))
		for j, i := range idx {
			ys[j] = lat[i]
		}
		floor := familyFloor(ys)
		xs := make([][]float64, len(idx))
		for j, i := range idx {
			xs[j] = x(i, floor)
		}
		f, err := fitLogLinear(family+" "+k, names, xs, ys, func(j int) string { return label(idx[j]) })
		if err != nil {
			continue
		}
		f.floor = floor
		fits[k] = f
		sum.Rows += f.Rows
		sum.FitRows += f.FitRows
		for j, i := range idx {
			pred[i] = f.Ms(xs[j])
			e := (pred[i] - ys[j]) / ys[j]
			errs = append(errs, e)
			sum.Residuals.add(e, label, i)
		}
	}
	sum.Residuals.finish(errs)
	return pred, fits, sum
}

// seriesEnd is the latency of a series' row furthest along its axis (the
// measured end an extension continues from), after smoothing.
func seriesEnd(idx []int, at func(i int) (axis int64, ms float64)) float64 {
	best, ms := int64(math.MinInt64), 0.0
	for _, i := range idx {
		if a, v := at(i); a > best {
			best, ms = a, v
		}
	}
	return ms
}

// rises reports whether an extension row's fitted latency v is finite and
// at least *prev (the series' row before it) and then moves *prev to v.
// More work along the axis is never faster: a fit whose curve turns down
// past the measured end (a negative squared-log term) stops extending its
// series there, and the interpolating predictor's rule past the grid
// applies instead (attack finding: the H200 fp8 heads 1/1 prefill series
// fell from 0.44 ms at 16,384 tokens to 4e-8 ms at 32,768).
func rises(v float64, prev *float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < *prev {
		return false
	}
	*prev = v
	return true
}

// keep returns the fitted latency, or the measured one where no fit.
func keep(pred, measured float64) float64 {
	if math.IsNaN(pred) || pred <= 0 {
		return measured
	}
	return pred
}

// smoothRows sets each row idx of rows to its fitted latency pred[i] (or
// keeps the measured one: keep), scaling its eager latency alike; times
// points at a row's kernel and eager latencies.
func smoothRows[T any](rows []T, idx []int, pred []float64, times func(*T) (kernel, eager *float64)) {
	for _, i := range idx {
		k, e := times(&rows[i])
		v := keep(pred[i], *k)
		*e = scaleEager(*e, *k, v)
		*k = v
	}
}

func gemmTimes(g *profiles.GemmRow) (*float64, *float64) { return &g.LatencyMs, &g.EagerMs }
func attnTimes(a *profiles.AttnRow) (*float64, *float64) { return &a.LatencyMs, &a.EagerMs }
func moeTimes(m *profiles.MoERow) (*float64, *float64)   { return &m.LatencyMs, &m.EagerMs }
func commTimes(c *profiles.CommRow) (*float64, *float64) { return &c.LatencyMs, &c.EagerMs }

func scaleEager(eager, from, to float64) float64 {
	if eager <= 0 || from <= 0 {
		return eager
	}
	return eager * to / from
}

func (r *Regressions) regressGemm(fits []*LogLinear) ([]profiles.GemmRow, []*LogLinear, error) {
	rows := slices.Clone(r.t.Gemm)
	var dtypes []string
	for _, g := range rows {
		dtypes = appendNew(dtypes, g.Dtype)
	}
	for _, d := range dtypes {
		var s seriesGroups
		lat := make([]float64, len(rows))
		maxM := map[string]int64{}
		for i, g := range rows {
			lat[i] = g.LatencyMs
			if g.Dtype == d {
				k := fmt.Sprintf("n=%d k=%d", g.N, g.K)
				s.add(k, i)
				maxM[k] = max(maxM[k], g.M)
			}
		}
		x := func(m, n, k, floor float64) []float64 {
			_, _, roof := r.gemmRoof(d, m, n, k)
			lm := math.Log(m)
			return []float64{math.Log(roof), lm, lm * lm, overhead(floor, roof)}
		}
		pred, byKey, sum := familyFit("gemm "+d, gemmSeriesFeatures, s, lat, func(i int, floor float64) []float64 {
			return x(float64(rows[i].M), float64(rows[i].N), float64(rows[i].K), floor)
		}, func(i int) string { return fmt.Sprintf("m=%d n=%d k=%d", rows[i].M, rows[i].N, rows[i].K) })
		for _, k := range s.keys {
			smoothRows(rows, s.rows[k], pred, gemmTimes)
			f := byKey[k]
			if f == nil {
				continue
			}
			g := rows[s.rows[k][0]]
			prev := seriesEnd(s.rows[k], func(i int) (int64, float64) { return rows[i].M, rows[i].LatencyMs })
			for _, m := range gemmExtendM {
				if m > maxM[k] {
					v := f.Ms(x(float64(m), float64(g.N), float64(g.K), f.floor))
					if !rises(v, &prev) {
						break
					}
					rows = append(rows, profiles.GemmRow{Dtype: d, M: m, N: g.N, K: g.K, LatencyMs: v})
				}
			}
		}
		fits = append(fits, sum)
	}
	return rows, fits, nil
}

// regressAttn smooths decode (step = context) or prefill (isl) rows per
// (head_dim, kv dtype, attn dtype, window, heads) series over batch and
// length; prefill series are extended to longer prompts at batch 1.
func (r *Regressions) regressAttn(src []profiles.AttnRow, family string, prefill bool, fits []*LogLinear) ([]profiles.AttnRow, []*LogLinear, error) {
	rows := slices.Clone(src)
	if len(rows) == 0 {
		return rows, fits, nil
	}
	var s seriesGroups
	lat := make([]float64, len(rows))
	maxISL := map[string]int64{}
	for i, a := range rows {
		lat[i] = a.LatencyMs
		k := fmt.Sprintf("d=%d kv=%s attn=%s window=%d heads=%d/%d batch=%d", a.HeadDim, a.KVCacheDtype, a.AttnDtype, a.WindowSize, a.NumHeads, a.NumKVHeads, a.BatchSize)
		s.add(k, i)
		if a.BatchSize == 1 {
			maxISL[k] = max(maxISL[k], a.ISL)
		}
	}
	x := func(a profiles.AttnRow, floor float64) []float64 {
		b, h, kv, d := float64(a.BatchSize), float64(a.NumHeads), float64(a.NumKVHeads), float64(a.HeadDim)
		var flops, bytes, length float64
		if prefill {
			length = float64(a.ISL)
			flops = 4 * b * h * d * CausalPairs(length, 0)
			bytes = 2 * b * length * (2*h + 2*kv) * d
		} else {
			length = float64(a.Step + r.t.DecodeContextOffset)
			flops = 4 * b * length * h * d
			bytes = 2*b*length*kv*d*elemBytes(a.KVCacheDtype) + 4*b*h*d
		}
		roof := roofline(flops, bytes, r.hw.BF16FLOPS, r.hw.MemBandwidth)
		ll := math.Log(max(length, 1))
		return []float64{math.Log(roof), ll, ll * ll, overhead(floor, roof)}
	}
	pred, byKey, sum := familyFit(family, attnSeriesFeatures, s, lat, func(i int, floor float64) []float64 { return x(rows[i], floor) }, func(i int) string {
		a := rows[i]
		return fmt.Sprintf("batch=%d isl=%d step=%d heads=%d/%d", a.BatchSize, a.ISL, a.Step, a.NumHeads, a.NumKVHeads)
	})
	for _, k := range s.keys {
		smoothRows(rows, s.rows[k], pred, attnTimes)
		f := byKey[k]
		if f == nil || !prefill || maxISL[k] == 0 {
			continue
		}
		prev := seriesEnd(s.rows[k], func(i int) (int64, float64) { return rows[i].ISL, rows[i].LatencyMs })
		for _, isl := range prefillExtendISL {
			if isl > maxISL[k] {
				a := rows[s.rows[k][0]]
				a.BatchSize, a.ISL, a.Step, a.EagerMs = 1, isl, 0, 0
				if a.LatencyMs = f.Ms(x(a, f.floor)); !rises(a.LatencyMs, &prev) {
					break
				}
				rows = append(rows, a)
			}
		}
	}
	return rows, append(fits, sum), nil
}

func (r *Regressions) regressMoE(fits []*LogLinear) ([]profiles.MoERow, []*LogLinear, error) {
	rows := slices.Clone(r.t.MoE)
	if len(rows) == 0 {
		return rows, fits, nil
	}
	var s seriesGroups
	lat := make([]float64, len(rows))
	maxT := map[string]int64{}
	for i, m := range rows {
		lat[i] = m.LatencyMs
		if m.MoETP < 1 || m.MoEEP < 1 {
			continue
		}
		k := fmt.Sprintf("%s %s (%d,%d,%d,%d) tp=%d ep=%d", m.Dtype, m.Distribution, m.Hidden, m.Inter, m.TopK, m.NumExperts, m.MoETP, m.MoEEP)
		s.add(k, i)
		maxT[k] = max(maxT[k], m.NumTokens)
	}
	x := func(m profiles.MoERow, floor float64) []float64 {
		roof := r.moeRoof(m.Dtype, moeSplit{m.Hidden, m.Inter, m.TopK, m.NumExperts, m.MoETP, m.MoEEP}, float64(m.NumTokens))
		lt := math.Log(float64(m.NumTokens))
		return []float64{math.Log(roof), lt, lt * lt, overhead(floor, roof)}
	}
	pred, byKey, sum := familyFit("moe", moeSeriesFeatures, s, lat, func(i int, floor float64) []float64 { return x(rows[i], floor) }, func(i int) string {
		m := rows[i]
		return fmt.Sprintf("%s tokens=%d shape=(%d,%d,%d,%d) tp=%d ep=%d", m.Dtype, m.NumTokens, m.Hidden, m.Inter, m.TopK, m.NumExperts, m.MoETP, m.MoEEP)
	})
	for _, k := range s.keys {
		smoothRows(rows, s.rows[k], pred, moeTimes)
		f := byKey[k]
		if f == nil {
			continue
		}
		prev := seriesEnd(s.rows[k], func(i int) (int64, float64) { return rows[i].NumTokens, rows[i].LatencyMs })
		for _, tok := range moeExtendTokens {
			if tok > maxT[k] {
				m := rows[s.rows[k][0]]
				m.NumTokens, m.EagerMs = tok, 0
				if m.LatencyMs = f.Ms(x(m, f.floor)); !rises(m.LatencyMs, &prev) {
					break
				}
				rows = append(rows, m)
			}
		}
	}
	return rows, append(fits, sum), nil
}

func (r *Regressions) regressComm(fits []*LogLinear) ([]profiles.CommRow, []*LogLinear, error) {
	rows := slices.Clone(r.t.Comm)
	if len(rows) == 0 {
		return rows, fits, nil
	}
	var s seriesGroups
	lat := make([]float64, len(rows))
	for i, c := range rows {
		lat[i] = c.LatencyMs
		if c.NumGPUs > 1 {
			s.add(fmt.Sprintf("%s/%s %s gpus=%d", c.Op, c.Backend, c.Dtype, c.NumGPUs), i)
		}
	}
	x := func(c profiles.CommRow, floor float64) []float64 {
		wire := r.commWire(c.Op, float64(c.NumGPUs), float64(c.MessageSize))
		return []float64{math.Log(wire), math.Log(float64(c.MessageSize)), overhead(floor, wire)}
	}
	pred, _, sum := familyFit("comm", commSeriesFeatures, s, lat, func(i int, floor float64) []float64 { return x(rows[i], floor) }, func(i int) string {
		c := rows[i]
		return fmt.Sprintf("%s/%s gpus=%d elems=%d", c.Op, c.Backend, c.NumGPUs, c.MessageSize)
	})
	for _, k := range s.keys {
		smoothRows(rows, s.rows[k], pred, commTimes)
	}
	return rows, append(fits, sum), nil
}

// String is a one-line residual summary of a fit.
func (f *LogLinear) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows", f.Family, f.Rows)
	if f.FitRows < f.Rows {
		fmt.Fprintf(&b, " (fitted on %d)", f.FitRows)
	}
	fmt.Fprintf(&b, ", |error| median %.1f %%, p90 %.1f %%, max %.0f %% (%s)", 100*f.Residuals.Median, 100*f.Residuals.P90, 100*f.Residuals.Max, f.Residuals.WorstRow)
	if f.HeldOut.N > 0 {
		fmt.Fprintf(&b, "; rows not fitted: median %.1f %%, p90 %.1f %%", 100*f.HeldOut.Median, 100*f.HeldOut.P90)
	}
	return b.String()
}
