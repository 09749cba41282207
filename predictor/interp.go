package predictor

import (
	"math"
	"sort"
)

// axis is one sorted grid axis with log-space coordinates.
type axis struct {
	v   []float64
	log []float64
}

// axisBuilder collects an axis's distinct values one at a time, so a
// table's rows give their columns' axes without a slice per column.
// Table columns repeat a few distinct values thousands of times (the
// 35,742 bf16 GEMM rows of H200 hold 74 m values): a direct-mapped set of
// recent values drops nearly every repeat in one probe, before the map
// and the sort see the distinct ones.
type axisBuilder struct {
	recent *[recentSlots]float64
	seen   map[float64]bool
	u      []float64
}

func newAxisBuilder() *axisBuilder {
	return &axisBuilder{recent: newRecent(), seen: map[float64]bool{}}
}

func (b *axisBuilder) add(v float64) {
	h := recentSlot(v)
	if b.recent[h] == v {
		return
	}
	b.recent[h] = v
	if !b.seen[v] { // every NaN stays, as before
		b.seen[v] = true
		b.u = append(b.u, v)
	}
}

// axis is the values added, distinct and sorted.
func (b *axisBuilder) axis() axis {
	sort.Float64s(b.u)
	return axisOf(b.u)
}

// axisOf is the axis of values, distinct and sorted.
func axisOf(values []float64) axis {
	a := axis{v: values, log: make([]float64, len(values))}
	for i, v := range values {
		a.log[i] = math.Log(v)
	}
	return a
}

// bracket returns indices i, j and weight w so that x ≈ v[i]·(1−w) + v[j]·w
// in log space, clamped to the axis; out reports x outside [v0, vmax].
func (a axis) bracket(x float64) (i, j int, w float64, out bool) {
	n := len(a.v)
	if x <= a.v[0] {
		return 0, 0, 0, x < a.v[0]
	}
	if x >= a.v[n-1] {
		return n - 1, n - 1, 0, x > a.v[n-1]
	}
	j = sort.SearchFloat64s(a.v, x)
	if a.v[j] == x {
		return j, j, 0, false
	}
	i = j - 1
	return i, j, (math.Log(x) - a.log[i]) / (a.log[j] - a.log[i]), false
}

// indexOf returns index, remembering the values it was asked in a
// direct-mapped cache (rows come in grid order: a few values, repeated).
func (a axis) indexOf() func(x float64) int {
	keys := newRecent()
	var at [recentSlots]int
	return func(x float64) int {
		h := recentSlot(x)
		if keys[h] != x {
			keys[h], at[h] = x, a.index(x)
		}
		return at[h]
	}
}

// sameString returns want, as the first row's field that equals it when
// one does: a string equal to the rows' own shares its bytes, so that
// comparing it with a field of the rows that share those bytes (table
// rows decoded from one dictionary) is a pointer test, where equal strings
// of separate bytes are compared byte by byte.
func sameString[R any](rows []R, field func(*R) string, want string) string {
	for i := range rows {
		if s := field(&rows[i]); s == want {
			return s
		}
	}
	return want
}

// recentSlots sizes axisBuilder's and indexOf's direct-mapped caches.
const recentSlots = 256

// newRecent is an empty direct-mapped cache of values (NaN matches none).
func newRecent() *[recentSlots]float64 {
	var r [recentSlots]float64
	for i := range r {
		r[i] = math.NaN()
	}
	return &r
}

// recentSlot is v's slot in a direct-mapped cache: the top bits of its
// bits times the golden-ratio constant.
func recentSlot(v float64) int { return int(math.Float64bits(v) * 0x9e3779b97f4a7c15 >> 56) }

func (a axis) index(x float64) int {
	j := sort.SearchFloat64s(a.v, x)
	if j < len(a.v) && a.v[j] == x {
		return j
	}
	return -1
}

// logLerp interpolates latencies y0, y1 geometrically with weight w:
// exact at grid points, and exact between them for any power law
// (latency ∝ size^p), which covers both bandwidth- and compute-bound shapes.
func logLerp(y0, y1, w float64) float64 {
	if w == 0 || y0 == y1 {
		return y0
	}
	if w == 1 {
		return y1
	}
	return math.Exp(math.Log(y0)*(1-w) + math.Log(y1)*w)
}

// series is a 1-D latency curve y(x) on a log grid (x ascending).
type series struct {
	x axis
	y []float64
}

func newSeries(xs, ys []float64) series {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	sx, sy := make([]float64, 0, len(idx)), make([]float64, 0, len(idx))
	for _, i := range idx {
		if len(sx) > 0 && sx[len(sx)-1] == xs[i] {
			continue
		}
		sx = append(sx, xs[i])
		sy = append(sy, ys[i])
	}
	return series{x: axis{v: sx, log: logs(sx)}, y: sy}
}

func logs(v []float64) []float64 {
	l := make([]float64, len(v))
	for i, x := range v {
		l[i] = math.Log(x)
	}
	return l
}

// at returns y(x): log-log interpolation inside the grid; outside, the
// edge value scaled linearly in x above the grid (work grows with x) and
// held flat below it (a kernel is never faster than the smallest measured).
func (s series) at(x float64) (float64, bool) {
	i, j, w, out := s.x.bracket(x)
	if out {
		if x > s.x.v[len(s.x.v)-1] {
			return s.y[j] * x / s.x.v[j], true
		}
		return s.y[0], true
	}
	return logLerp(s.y[i], s.y[j], w), false
}

// monotoneCost rewrites the latencies ys, measured at ascending xs, so that
// the latency per unit of work, ys[i] / work(xs[i]), never rises with x. A
// bigger GEMM (work: rows m) or a longer prompt (work: causal query-key
// pairs) is not less efficient per unit of work than a smaller one once
// launch and occupancy costs are paid, so a table point that says otherwise
// is measurement noise: the tables jitter ±15 % from point to point at
// large m (h200-sxm gemm n=6144 k=4096: 0.0574 µs per row at m = 3,840,
// 0.0790 at m = 3,841).
//
// Rule: the least-squares non-increasing fit of log(cost per unit of work)
// over the points, equal weights (pool adjacent violators: a run of points
// that breaks the order is replaced by its geometric mean cost per unit).
// Points in order keep their measured value bit for bit. The latency itself
// may still fall with x where the table says so (h100-sxm: m = 16 takes
// longer than m = 32, a different kernel), which no lone prompt's chunking
// can exploit.
func monotoneCost(xs, ys []float64, work func(float64) float64) {
	type block struct {
		sum   float64 // Σ log(cost per unit)
		n     int
		first int
	}
	var blocks []block
	for i := range xs {
		b := block{sum: math.Log(ys[i] / work(xs[i])), n: 1, first: i}
		for len(blocks) > 0 {
			top := blocks[len(blocks)-1]
			if top.sum/float64(top.n) >= b.sum/float64(b.n) {
				break
			}
			b = block{sum: top.sum + b.sum, n: top.n + b.n, first: top.first}
			blocks = blocks[:len(blocks)-1]
		}
		blocks = append(blocks, b)
	}
	for _, b := range blocks {
		if b.n == 1 {
			continue // in order: keep the measured value bit for bit
		}
		c := math.Exp(b.sum / float64(b.n))
		for i := b.first; i < b.first+b.n; i++ {
			ys[i] = c * work(xs[i])
		}
	}
}
