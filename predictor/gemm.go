package predictor

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"frontier/profiles"
)

// Gemm predicts GEMM latency for one dtype from a gemm_perf table:
// C[m×n] = A[m×k]·B[k×n].
//
// Rule: inside the (m, n, k) grid, trilinear interpolation of log latency in
// log m, log n, log k (exact at grid points and for power laws between
// them). Outside the grid each coordinate is clamped to the edge and the
// latency scaled linearly in FLOPs (m·n·k) for coordinates above the grid;
// coordinates below the grid keep the edge latency. A grid point the table
// lacks takes the nearest measured (n, k) at the same m, scaled by FLOPs.
// Every extrapolated lookup (and one touching a missing point) is counted
// in Coverage.
//
// Along m, each (n, k) column is first made monotone (monotoneCost, work =
// m): latency per row never rises with m. So a
// bigger token budget never prices a prompt's chunks dearer per token: the
// imported h200-sxm table's per-token cost at m = 2,048 was 18–23 % below
// m = 4,096 for Llama-3.1-70B TP4 shapes, and --max-num-batched-tokens 4096
// gave a lone 4,000-token prompt an 11.5 % longer TTFT than 2048, while our
// own CUDA-graph timings of Llama-8B/7B shapes on H200 are flat within ±5 %
// from m = 1,024 to 8,192. Interpolation keeps the order (between grid
// points the latency is a power law of m with exponent ≤ 1; a weighted
// geometric mean of such columns is too), and above the grid the per-row
// cost stays flat.
type Gemm struct {
	dtype   string
	m, n, k axis
	grid    *gemmGrid
	Cov     Coverage
}

// gemmGrid holds the latencies by [im][in][ik], built one (n, k) column at
// a time on first use (a model prices a few of the table's hundreds of
// columns): raw is the table (NaN where not measured), lat the column
// with its holes filled and made monotone, ready whether it is. Shared
// by the Gemms a Template hands out, so safe for concurrent use.
type gemmGrid struct {
	raw   []float64
	lat   []float64 // latency per row non-increasing along m, where ready
	hole  []bool    // not measured: filled from the nearest (n, k)
	ready []atomic.Bool
	mu    sync.Mutex
}

// NewGemm builds the predictor for dtype from rows (other dtypes ignored).
func NewGemm(rows []profiles.GemmRow, dtype string) (*Gemm, error) {
	bm, bn, bk := newAxisBuilder(), newAxisBuilder(), newAxisBuilder()
	// The rows' dtypes share a few strings: comparing against the row's
	// own once it matched is a pointer test, not a byte compare per row.
	dtype = sameString(rows, func(r *profiles.GemmRow) string { return r.Dtype }, dtype)
	for i := range rows {
		if r := &rows[i]; r.Dtype == dtype {
			bm.add(float64(r.M))
			bn.add(float64(r.N))
			bk.add(float64(r.K))
		}
	}
	if len(bm.u) == 0 {
		return nil, fmt.Errorf("gemm table has no %s rows", dtype)
	}
	g := &Gemm{dtype: dtype, m: bm.axis(), n: bn.axis(), k: bk.axis()}
	raw := make([]float64, len(g.m.v)*len(g.n.v)*len(g.k.v))
	for i := range raw {
		raw[i] = math.NaN()
	}
	// Rows come in grid order, so consecutive rows mostly share m and n:
	// indexOf remembers the last value it looked up.
	im, in, ik := g.m.indexOf(), g.n.indexOf(), g.k.indexOf()
	for i := range rows {
		if r := &rows[i]; r.Dtype == dtype && r.LatencyMs > 0 {
			raw[g.idx(im(float64(r.M)), in(float64(r.N)), ik(float64(r.K)))] = r.LatencyMs
		}
	}
	g.grid = newGemmGrid(raw, len(g.n.v)*len(g.k.v))
	return g, nil
}

// gemmFrom is NewGemm(t.Gemm, dtype), built from the rows form of a
// profiles.LazyTablesFor set (Tables.GemmGrid: the same axes and grid,
// no GemmRow decoded) where t holds it; where GemmGrid cannot read that
// form (columns stored raw), from dtype's rows collected by t.EachGemm.
func gemmFrom(t *profiles.Tables, dtype string) (*Gemm, error) {
	gg, ok, err := t.GemmGrid(dtype)
	if err != nil {
		return nil, err
	}
	if !ok { // decoded rows, or a lazy set whose m/n/k columns are not dictionaries
		rows := t.Gemm
		if rows == nil {
			err := t.EachGemm(func(r *profiles.GemmRow) {
				if r.Dtype == dtype {
					rows = append(rows, *r)
				}
			})
			if err != nil {
				return nil, err
			}
		}
		return NewGemm(rows, dtype)
	}
	if len(gg.M) == 0 {
		return nil, fmt.Errorf("gemm table has no %s rows", dtype)
	}
	g := &Gemm{dtype: dtype, m: axisOf(gg.M), n: axisOf(gg.N), k: axisOf(gg.K)}
	g.grid = newGemmGrid(gg.LatencyMs, len(g.n.v)*len(g.k.v))
	return g, nil
}

// newGemmGrid is the grid of the table's latencies raw (NaN where not
// measured) over columns (n, k) columns.
func newGemmGrid(raw []float64, columns int) *gemmGrid {
	size := len(raw)
	return &gemmGrid{raw: raw, lat: make([]float64, size), hole: make([]bool, size), ready: make([]atomic.Bool, columns)}
}

// column makes the (in, ik) column ready: holes filled from the nearest
// measured (n, k) at the same m, then latency made monotone along m.
func (g *Gemm) column(in, ik int) {
	c := in*len(g.k.v) + ik
	if g.grid.ready[c].Load() {
		return
	}
	gr := g.grid
	gr.mu.Lock()
	defer gr.mu.Unlock()
	if gr.ready[c].Load() {
		return
	}
	col := make([]float64, len(g.m.v))
	for im := range col {
		i := g.idx(im, in, ik)
		col[im] = gr.raw[i]
		if math.IsNaN(col[im]) {
			col[im], gr.hole[i] = g.nearest(im, in, ik), true
		}
	}
	monotoneCost(g.m.v, col, func(m float64) float64 { return m })
	for im, v := range col {
		gr.lat[g.idx(im, in, ik)] = v
	}
	gr.ready[c].Store(true)
}

// idx is (m i, n j, k l)'s place in the grid: an (n, k) column's m
// values are adjacent, so making a column ready touches a page or two of
// lat and hole (with m outermost, its 74 values on H200 were 74 pages
// apart, each faulted in).
func (g *Gemm) idx(i, j, l int) int { return (j*len(g.k.v)+l)*len(g.m.v) + i }

// gemmRule is Ms's rule outside the gemm_perf grid, as the run's notes
// state it.
const gemmRule = "each (n, k) column's points the table lacks are first filled from the nearest measured (n, k) at the same m, " +
	"scaled by FLOPs, and the column made monotone in m (" + pooled + "); then a coordinate above the grid scales the edge " +
	"latency linearly (FLOPs, m·n·k), and one below keeps the edge latency"

// pooled says what monotoneCost does to a series before it is read, as
// the rule notes state it.
const pooled = "cost per unit of work never rising with size: a run of points breaking that order takes its geometric mean"

// Ms returns latency in milliseconds of an m×n×k GEMM.
func (g *Gemm) Ms(m, n, k int) float64 {
	if m <= 0 || n <= 0 || k <= 0 {
		return 0
	}
	fm, fn, fk := float64(m), float64(n), float64(k)
	im0, im1, wm, om := g.m.bracket(fm)
	in0, in1, wn, on := g.n.bracket(fn)
	ik0, ik1, wk, ok := g.k.bracket(fk)
	g.column(in0, ik0)
	g.column(in0, ik1)
	g.column(in1, ik0)
	g.column(in1, ik1)
	var acc float64
	missing := false
	for _, c := range [8][3]int{{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}} {
		im, in, ik := pick(im0, im1, c[0]), pick(in0, in1, c[1]), pick(ik0, ik1, c[2])
		w := weight(wm, c[0]) * weight(wn, c[1]) * weight(wk, c[2])
		if w == 0 {
			continue
		}
		i := g.idx(im, in, ik)
		missing = missing || g.grid.hole[i]
		acc += w * math.Log(g.grid.lat[i])
	}
	lat := math.Exp(acc)
	// Scale above-grid coordinates linearly in FLOPs.
	if om && fm > g.m.v[im1] {
		lat *= fm / g.m.v[im1]
	}
	if on && fn > g.n.v[in1] {
		lat *= fn / g.n.v[in1]
	}
	if ok && fk > g.k.v[ik1] {
		lat *= fk / g.k.v[ik1]
	}
	r := Reach{}
	if om || on || ok {
		r = farther(beyond("m", g.m, fm), beyond("n", g.n, fn), beyond("k", g.k, fk))
	} else if missing {
		r.Why = "an unmeasured point inside the grid, filled from the nearest measured one"
	}
	g.Cov.note("gemm "+g.dtype, gemmRule, r, func() string { return fmt.Sprintf("m=%d n=%d k=%d", m, n, k) })
	return lat
}

// nearest fills a grid hole from the closest measured point in (n, k) at
// the same m, scaled by the FLOPs ratio (the table: NaN where not
// measured).
func (g *Gemm) nearest(im, in, ik int) float64 {
	best, bestD := math.NaN(), math.Inf(1)
	for j := range g.n.v {
		for l := range g.k.v {
			v := g.grid.raw[g.idx(im, j, l)]
			if math.IsNaN(v) {
				continue
			}
			d := math.Abs(g.n.log[j]-g.n.log[in]) + math.Abs(g.k.log[l]-g.k.log[ik])
			if d < bestD {
				bestD, best = d, v*(g.n.v[in]*g.k.v[ik])/(g.n.v[j]*g.k.v[l])
			}
		}
	}
	if math.IsNaN(best) {
		return 1e-3
	}
	return best
}

func pick(a, b, c int) int {
	if c == 0 {
		return a
	}
	return b
}

func weight(w float64, c int) float64 {
	if c == 0 {
		return 1 - w
	}
	return w
}
