package predictor

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"frontier/profiles"
)

// grid2 is a latency surface y(batch, x) on log axes: one series in x per
// measured batch size (grids may be ragged: large batches often lack long
// contexts). Lookup interpolates log-log in x within each bracketing batch,
// then geometrically in batch; beyond the largest batch, linearly in batch.
//
// A grid is built from its points on its first lookup, and its points
// read from the table then: a table holds dozens of head shapes and a
// model prices from one or two, so building every grid up front was most
// of a short run's start-up, and holding every shape's points took half
// a megabyte. Predictors of one Template share grids, so the build is
// safe for concurrent use. The built grid is reached through data() only.
type grid2 struct{ lazy *gridData }

type gridData struct {
	once   sync.Once
	points func() []point // as measured, in table order
	post   func(*series)  // applied to each batch's series once built (nil: none)
	batch  axis
	rows   []series
}

// point is one measured (batch, x, latency).
type point struct{ batch, x, y float64 }

// data is the grid, built on first use.
func (g grid2) data() *gridData {
	g.lazy.once.Do(g.lazy.build)
	return g.lazy
}

func (g *gridData) build() {
	// By batch, each batch's points in table order.
	points := g.points()
	// A stable sort's order is the comparison's alone: slices' generic
	// one is sort.SliceStable's (0.9 M instructions through reflection's
	// swapper for a one-request run's two grids) without the reflection.
	slices.SortStableFunc(points, func(a, b point) int {
		switch {
		case a.batch < b.batch:
			return -1
		case b.batch < a.batch:
			return 1
		}
		return 0
	})
	var bs []float64
	for i := 0; i < len(points); {
		b, k := points[i].batch, i
		for k < len(points) && points[k].batch == b {
			k++
		}
		xs, ys := make([]float64, 0, k-i), make([]float64, 0, k-i)
		for _, p := range points[i:k] {
			xs, ys = append(xs, p.x), append(ys, p.y)
		}
		bs = append(bs, b)
		g.rows = append(g.rows, newSeries(xs, ys))
		if g.post != nil {
			g.post(&g.rows[len(g.rows)-1])
		}
		i = k
	}
	g.batch = axis{v: bs, log: logs(bs)}
	g.points = nil
}

func (g *gridData) at(batch, x float64) (float64, bool) {
	i, j, w, out := g.batch.bracket(batch)
	yi, oi := g.rows[i].at(x)
	if w == 0 {
		if out && batch > g.batch.v[i] {
			yi *= batch / g.batch.v[i]
		}
		return yi, out || oi
	}
	yj, oj := g.rows[j].at(x)
	return logLerp(yi, yj, w), oi || oj
}

// reach is how far (batch, x) lies outside the grid (gridData.at said
// it does): the farther of the batch axis and x on the rows it reads. A
// row's x range depends on its batch, so the reach names the row whose
// range it passes and, when the shape's batch is not that row's, how the
// shape reads it: "context 620 = 4.84× the table's 128, its longest at
// batch 1024; batch 639 is interpolated between the rows at 512 and
// 1024", or "; batch 2048 is scaled from the row at 1024" above the
// largest.
func (g *gridData) reach(batch, x float64, xName string) Reach {
	i, j, _, _ := g.batch.bracket(batch)
	row := func(k int) Reach {
		r := beyond(xName, g.rows[k].x, x)
		if r.Axis == "" {
			return r
		}
		end := "longest"
		if r.X < r.Edge {
			end = "shortest"
		}
		rb := g.batch.v[k]
		r.At = fmt.Sprintf(", its %s at batch %.6g", end, rb)
		switch {
		case rb == batch:
		case i != j:
			r.At += fmt.Sprintf("; batch %.6g is interpolated between the rows at %.6g and %.6g", batch, g.batch.v[i], g.batch.v[j])
		case batch > rb:
			r.At += fmt.Sprintf("; batch %.6g is scaled from the row at %.6g", batch, rb)
		default:
			r.At += fmt.Sprintf("; batch %.6g is read from the row at %.6g", batch, rb)
		}
		return r
	}
	return farther(beyond("batch", g.batch, batch), row(i), row(j))
}

type headKey struct{ h, kv int64 }

// Attention predicts prefill and decode attention kernels from the
// context_attention and generation_attention tables for one head_dim and
// kv-cache dtype.
//
// Head shapes: rows with the exact (query heads, kv heads) of one rank are
// used when present. Otherwise (for example Llama-2-7b's 32/32 multi-head
// decode, absent beyond 8/8) the bytes-read rule substitutes the measured
// shape with the same heads-per-kv-head ratio and the largest kv heads
// ≤ ours, folding the missing kv heads into the context length: a decode
// reading kv heads × context tokens of KV costs what the measured shape
// costs on the same bytes. Without a shape of our ratio (a 21/3-head
// model), the shape of the nearest ratio is folded the same way
// (nearestRatio). Prefill substitutes by scaling linearly in query heads
// (FLOPs). Substitutions are recorded in Notes, decode and prefill alike.
type Attention struct {
	// PeakFLOPS is the chip's dense bf16 peak, FLOP/s (0 = no floor):
	// PrefillMs never prices attention faster than its FLOPs at this rate.
	PeakFLOPS float64
	headDim   int
	prefill   map[headKey]grid2
	decode    map[headKey]grid2
	Notes     []string
	Cov       Coverage
	// latent: MLA core rows (one latent KV head): prefill is looked up by
	// its own head shape, never through the multi-head row.
	latent bool
	// shape caches DecodeMs's choice of table shape for the last heads
	// asked (a predictor always asks the same): choose walks the table's
	// shapes, and the substitution note only needs noting once.
	shape struct {
		h, kv int
		k     headKey
		fold  float64
		set   bool
	}
}

// NewAttention builds attention predictors for head_dim and the kv cache
// dtype (bfloat16 or fp8), from bf16 attention rows.
func NewAttention(t *profiles.Tables, headDim int, kvDtype string) (*Attention, error) {
	a := &Attention{headDim: headDim, prefill: map[headKey]grid2{}, decode: map[headKey]grid2{}}
	// Each head shape's rows; its grid is built on first use (grid2),
	// from its points read then: a first pass finds the shapes and
	// counts their rows, so that a shape's points are one slice at its
	// size (growing them by append cleared and copied ~1.3 MB for a
	// Llama-8B start-up, a tenth of its page faults).
	build := func(context bool, x0 int64, post func(*series), dst map[headKey]grid2) error {
		// A LazyTablesFor set's part is read by shape where it can be
		// (Tables.AttnShapes): the same rows, grouped, without a pass
		// decoding every row for the counts and another for each grid.
		shapes, ok, err := t.AttnShapes(context, int64(headDim), kvDtype)
		if err != nil {
			return err
		}
		if ok {
			for _, s := range shapes {
				k, n := headKey{s.Heads, s.KVHeads}, s.Rows
				dst[k] = grid2{&gridData{post: post, points: func() []point {
					points := make([]point, 0, n)
					// AttnShapes read the part without an error.
					_, _ = t.AttnShapePoints(context, int64(headDim), kvDtype, k.h, k.kv, func(batch, x int64, ms float64) {
						points = append(points, point{float64(batch), float64(x + x0), ms})
					})
					return points
				}}}
			}
			return nil
		}
		each := attnPointsOf(t, context, headDim, kvDtype)
		var keys []headKey // shapes, in order of first use
		var counts []int
		index := map[headKey]int{} // keys' indices
		last := -1
		err = each(func(h, kv, _, _ int64, _ float64) {
			// The table cycles through its shapes in one order: the shape
			// after the last one is the likeliest.
			switch k := (headKey{h, kv}); {
			case last >= 0 && keys[last] == k:
			case last+1 < len(keys) && keys[last+1] == k:
				last++
			case len(keys) > 0 && keys[0] == k:
				last = 0
			default:
				j, ok := index[k]
				if !ok {
					j = len(keys)
					index[k], keys, counts = j, append(keys, k), append(counts, 0)
				}
				last = j
			}
			counts[last]++
		})
		for j, k := range keys {
			n := counts[j]
			dst[k] = grid2{&gridData{post: post, points: func() []point {
				points := make([]point, 0, n)
				// The first pass read these rows without an error.
				_ = each(func(h, kv, batch, x int64, ms float64) {
					if h == k.h && kv == k.kv {
						points = append(points, point{float64(batch), float64(x + x0), ms})
					}
				})
				return points
			}}}
		}
		return err
	}
	// Longer prompts are not less efficient per query-key pair (see
	// monotoneCost): so a one-shot prefill is never priced above the same
	// work in chunks for noise in the table.
	err := build(true, 0, func(row *series) {
		monotoneCost(row.x.v, row.y, func(l float64) float64 { return CausalPairs(l, 0) })
	}, a.prefill)
	if err != nil {
		return nil, err
	}
	// Decode context = step + offset (aiconfigurator's step is the KV
	// length minus one; our collector's is the KV length).
	if err := build(false, t.DecodeContextOffset, nil, a.decode); err != nil {
		return nil, err
	}
	if len(a.prefill) == 0 || len(a.decode) == 0 {
		return nil, fmt.Errorf("attention tables have no rows for head_dim %d with kv_cache_dtype %s", headDim, kvDtype)
	}
	return a, nil
}

// attnPoints visits, in table order, the attention rows NewAttention
// reads: head shape, batch, x (ISL for prefill, Step for decode) and
// latency, milliseconds.
type attnPoints func(fn func(heads, kvHeads, batch, x int64, ms float64)) error

// attnPointsOf visits the rows of t's context (prefill) or generation
// attention table with headDim, kvDtype, bf16 attention, no sliding
// window and a positive latency: from the rows form of a
// profiles.LazyTablesFor set (Tables.AttnPoints), else from the rows.
func attnPointsOf(t *profiles.Tables, context bool, headDim int, kvDtype string) attnPoints {
	return func(fn func(heads, kvHeads, batch, x int64, ms float64)) error {
		if ok, err := t.AttnPoints(context, int64(headDim), kvDtype, fn); ok || err != nil {
			return err
		}
		rows, x := t.GenerationAttn, func(r *profiles.AttnRow) int64 { return r.Step }
		if context {
			rows, x = t.ContextAttn, func(r *profiles.AttnRow) int64 { return r.ISL }
		}
		kvDtype := sameString(rows, func(r *profiles.AttnRow) string { return r.KVCacheDtype }, kvDtype)
		bf16 := sameString(rows, func(r *profiles.AttnRow) string { return r.AttnDtype }, "bfloat16")
		for i := range rows {
			r := &rows[i]
			if r.HeadDim != int64(headDim) || r.KVCacheDtype != kvDtype || r.AttnDtype != bf16 || r.WindowSize != 0 || r.LatencyMs <= 0 {
				continue
			}
			fn(r.NumHeads, r.NumKVHeads, r.BatchSize, x(r), r.LatencyMs)
		}
		return nil
	}
}

// choose finds the table shape for (h, kv) heads: exact, else the same
// heads-per-kv ratio with the largest kv ≤ ours (fold factor kv/kv'), else
// the nearest kv with the same ratio; scale is the factor on query heads.
func choose(m map[headKey]grid2, h, kv int64) (k headKey, fold float64, ok bool) {
	if _, ok := m[headKey{h, kv}]; ok {
		return headKey{h, kv}, 1, true
	}
	best := headKey{}
	for c := range m {
		if c.h*kv != h*c.kv {
			continue
		}
		if best.kv == 0 || (c.kv <= kv && (best.kv > kv || c.kv > best.kv)) || (best.kv > kv && c.kv < best.kv) {
			best = c
		}
	}
	if best.kv == 0 {
		return best, 0, false
	}
	return best, float64(kv) / float64(best.kv), true
}

// decodeRule is DecodeMs's rule outside the generation_attention grid
// (gridData.at, series.at), as the run's notes state it.
const decodeRule = "each batch row is measured to its own longest context; " +
	"a context above its row's longest scales that row's latency linearly in context (the KV bytes read), " +
	"a batch above the largest row scales it linearly in batch; below the grid the edge latency is kept"

// prefillRule is PrefillMs's rule outside the context_attention grid, as
// the run's notes state it.
const prefillRule = "the batch-1 row is first made monotone in causal work (" + pooled + "); a chunk of c tokens after p cached " +
	"is read as the prefix-free prompt of equal work, c·(p + (c+1)/2) query-key pairs per head (its equivalent prompt length); " +
	"a prompt longer than the row's longest, Lmax, scales Lmax's latency by that work over Lmax·(Lmax+1)/2 " +
	"(tables without a batch-1 row: the smallest batch's row, linear in length); one shorter than the shortest keeps the shortest's latency"

// DecodeMs is the decode attention latency, milliseconds, for batch
// requests with a mean context of ctx tokens, h query and kv key/value
// heads on this rank.
func (a *Attention) DecodeMs(batch int, ctx float64, h, kv int) float64 {
	if batch <= 0 {
		return 0
	}
	k, fold := a.decodeShape(h, kv)
	g := a.decode[k].data()
	y, out := g.at(float64(batch), ctx*fold)
	r := Reach{}
	if out {
		axis := "context"
		if fold != 1 {
			axis = "folded context" // ctx × fold: see decodeShape
		}
		r = g.reach(float64(batch), ctx*fold, axis)
	}
	a.Cov.note("decode attention", decodeRule, r, func() string { return fmt.Sprintf("batch=%d ctx=%.0f heads=%d/%d", batch, ctx, h, kv) })
	return y
}

// decodeShape is the decode table shape for h/kv heads and the context
// fold factor (see DecodeMs), noting a substitution; cached for the last
// heads asked.
func (a *Attention) decodeShape(h, kv int) (headKey, float64) {
	c := &a.shape
	if c.set && c.h == h && c.kv == kv {
		return c.k, c.fold
	}
	k, fold, ok := choose(a.decode, int64(h), int64(kv))
	if !ok {
		k, fold = nearestRatio(a.decode, int64(h), int64(kv))
		a.noteOnce(fmt.Sprintf("decode attention %d/%d heads: no table rows with %g query heads per kv head; priced as %d/%d (the nearest ratio, %d) with context × %.3g (bytes-read rule)",
			h, kv, float64(h)/float64(kv), k.h, k.kv, k.h/k.kv, fold))
	} else if fold != 1 {
		a.noteOnce(fmt.Sprintf("decode attention %d/%d heads: no table rows; priced as %d/%d with context × %.3g (bytes-read rule)", h, kv, k.h, k.kv, fold))
	}
	c.h, c.kv, c.k, c.fold, c.set = h, kv, k, fold, true
	return k, fold
}

// PrefillMs is the prefill attention latency, milliseconds, of one chunk
// of q new tokens after prefix cached tokens, h query and kv key/value
// heads on this rank.
//
// Rule: causal attention of a chunk of c tokens after p cached ones
// computes CausalPairs(c, p) = c·(p + (c+1)/2) query-key pairs per head
// (each new token attends to the prefix and to itself and the new tokens
// before it). The tables measure prefix-free prompts, whose work is
// CausalPairs(L, 0) = L(L+1)/2, so a chunk is priced as the prefix-free
// prompt of the same work, L = EquivalentPromptLen(c, p), interpolated
// log-log over the batch-1 row. Beyond the row's longest prompt Lmax the
// latency scales with the work: y(Lmax) · CausalPairs(c, p) /
// CausalPairs(Lmax, 0), counted as extrapolated (attention at these
// lengths is compute-bound, its FLOPs are 4 · head_dim · heads · pairs).
func (a *Attention) PrefillMs(q, prefix, h, kv int) float64 {
	if q <= 0 {
		return 0
	}
	isl := EquivalentPromptLen(q, prefix)
	// Prefill attention is compute-bound: its cost follows the query
	// heads, and GQA only shrinks the KV read. The multi-head row with the
	// same query heads is used when present: the imported H200 GQA prefill
	// rows imply up to 9.9 PFLOP/s (32/1 heads, isl 4096), ten times the
	// chip's dense bf16 peak, so they cannot be taken as measured.
	var k headKey
	ok := false
	if !a.latent {
		k, _, ok = choose(a.prefill, int64(h), int64(h))
	}
	if !ok {
		k, _, ok = choose(a.prefill, int64(h), int64(kv))
	}
	scale := 1.0
	if !ok {
		k, _ = nearestRatio(a.prefill, int64(h), int64(kv))
	}
	if k.h != int64(h) {
		scale = float64(h) / float64(k.h)
		a.noteOnce(fmt.Sprintf("prefill attention %d/%d heads: no table rows; priced from %d/%d × %.3g (FLOPs rule)", h, kv, k.h, k.kv, scale))
	}
	g := a.prefill[k].data()
	var y float64
	var r Reach
	axis := "prompt length"
	if prefix > 0 {
		axis = "equivalent prompt length" // EquivalentPromptLen: the prefix-free prompt of the chunk's causal work
	}
	if longest := g.rows[0].x.v[len(g.rows[0].x.v)-1]; isl > longest && g.batch.v[0] <= 1 {
		y, _ = g.at(1, longest)
		y *= CausalPairs(float64(q), float64(prefix)) / CausalPairs(longest, 0)
		r = Reach{Axis: axis, X: isl, Edge: longest}
	} else {
		var out bool
		if y, out = g.at(1, isl); out {
			r = g.reach(1, isl, axis)
		}
	}
	a.Cov.note("prefill attention", prefillRule, r, func() string { return fmt.Sprintf("q=%d prefix=%d heads=%d/%d", q, prefix, h, kv) })
	return max(y*scale, a.FloorMs(q, prefix, h))
}

// FloorMs is the shortest a chunk's prefill attention can take: its FLOPs,
// 4 · head_dim · h · CausalPairs(q, prefix) (QKᵀ and PV, a multiply-add
// each per pair, per head), at PeakFLOPS; milliseconds. The imported H200
// GQA rows imply up to 9.9 PFLOP/s (32/1 heads, isl 4,096) against the
// chip's 989 TFLOP/s, which no kernel reaches.
func (a *Attention) FloorMs(q, prefix, h int) float64 {
	if a.PeakFLOPS <= 0 {
		return 0
	}
	return 4 * float64(a.headDim) * float64(h) * CausalPairs(float64(q), float64(prefix)) / a.PeakFLOPS * 1e3
}

// CausalPairs is the query-key pairs per head of causal attention for a
// chunk of c new tokens after p cached ones: c·(p + (c+1)/2). Token i of
// the chunk (1-based) attends to the p cached tokens and to i new ones;
// c·(p + c) would count the masked half too.
func CausalPairs(c, p float64) float64 { return c * (p + (c+1)/2) }

// EquivalentPromptLen is the prefix-free prompt length L whose causal work
// L(L+1)/2 equals CausalPairs(c, p): L = (√(1 + 8·CausalPairs(c, p)) − 1)/2,
// which is c exactly when p = 0.
func EquivalentPromptLen(c, p int) float64 {
	if p <= 0 {
		return float64(c)
	}
	return (math.Sqrt(1+8*CausalPairs(float64(c), float64(p))) - 1) / 2
}

// nearestRatio is the table shape for h/kv heads when no shape has our
// heads-per-kv-head ratio: the shape whose ratio is nearest ours (by ratio
// of ratios, so 8 is nearer 7 than 6 is; a tie goes to the larger ratio),
// and among that ratio's shapes the one choose takes (the largest kv ≤
// ours, else the smallest), with the fold factor kv/kv'. Every step of
// the choice is a total order on the table's shapes, so the result does
// not depend on map iteration order (it did: a 21/3-head model priced
// decode as 64/2 or 64/4 from run to run).
func nearestRatio(m map[headKey]grid2, h, kv int64) (headKey, float64) {
	ours := float64(h) / float64(kv)
	dist := func(c headKey) float64 {
		r := float64(c.h) / float64(c.kv) / ours
		if r < 1 {
			r = 1 / r
		}
		return r
	}
	var best headKey
	for c := range m {
		if best.kv == 0 {
			best = c
			continue
		}
		dc, db := dist(c), dist(best)
		if dc < db || (dc == db && c.h*best.kv > best.h*c.kv) {
			best = c
		}
	}
	k, fold, _ := choose(m, best.h/best.kv*kv, kv)
	if best.h%best.kv != 0 {
		k, fold = best, float64(kv)/float64(best.kv)
	}
	return k, fold
}

func (a *Attention) noteOnce(s string) {
	for _, n := range a.Notes {
		if n == s {
			return
		}
	}
	a.Notes = append(a.Notes, s)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
