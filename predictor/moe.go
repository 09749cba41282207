package predictor

import (
	"fmt"
	"math"

	"frontier/profiles"
)

// MoE predicts the fused-MoE layer (vLLM fused_moe: grouped expert GEMMs,
// router excluded) from the moe_perf table for one model shape, as a
// latency curve over routed tokens, log-log interpolated (series.at rules).
//
// Matching: rows of the dtype with the model's hidden size, expert
// intermediate size, top-k, expert count, the deployment's MoE TP and EP
// sizes and the routing distribution. Stated substitutions, each noted:
//
//   - split: when the exact TP/EP split is absent, the nearest measured
//     split that divides it (largest tp'×ep') is used with its latency
//     scaled by tp'·ep'/(moe_tp·moe_ep) (each rank holds that share of the
//     expert weights);
//   - shape: when the table has no row of the model's expert shape, the
//     measured shape of the same dtype nearest in per-expert size and
//     top-k prices it at the same routed (token, expert) pairs P — tokens
//     × top-k / top-k' — scaled by the roofline work ratio W/W' with
//     W = max(A·s·b / BW, 2·P·s / FLOPS): s = 3·hidden·inter weights per
//     expert, A = E·(1 − (1 − 1/E)^P) the experts a uniform router
//     activates (their weights are read once), b bytes per weight; the
//     measured curve carries the kernel's efficiency, the ratio only the
//     shape change. Every lookup then counts as extrapolated;
//   - distribution: when the shape was not measured under the requested
//     routing (A100 and L40S vLLM 0.14.0 tables measure only
//     power_law_1.01 and power_law_1.2), balanced if measured, else the
//     first by name, power_law_1.01: the flatter of the two power laws
//     (p(k) ∝ k^−α concentrates more tokens on the top experts as α
//     grows).
//
// Where several kernels measured one point, the fastest is taken (the
// tables of vLLM 0.24 record one row per kernel vLLM can pick). The
// curve's latency per token is made non-increasing in tokens
// (monotoneCost), as GEMM's per row in m.
type MoE struct {
	curve      series
	scale      float64 // latency factor (split substitution)
	tokScale   float64 // routed-pairs factor on tokens (shape substitution)
	substShape bool
	dtype      string   // the table rows' format, for the coverage report
	want, ref  moeShape // model and measured expert shapes (shape substitution)
	ridge      float64  // FLOPs per byte where the GPU turns compute-bound
	Notes      []string
	Cov        Coverage
}

type moeShape struct{ hidden, inter, topk, experts int64 }

// NewMoE selects the curve for the shape; dist is "balanced" or a
// power_law_<alpha> distribution present in the table.
func NewMoE(rows []profiles.MoERow, dtype string, hidden, inter, topk, experts, tp, ep int, dist string) (*MoE, error) {
	want := moeShape{int64(hidden), int64(inter), int64(topk), int64(experts)}
	m := &MoE{scale: 1, tokScale: 1, dtype: dtype}
	shapes := map[moeShape]bool{}
	for _, r := range rows {
		if r.Dtype == dtype {
			shapes[moeShape{r.Hidden, r.Inter, r.TopK, r.NumExperts}] = true
		}
	}
	if len(shapes) == 0 {
		return nil, fmt.Errorf("moe table has no %s rows", dtype)
	}
	shape := want
	if !shapes[want] {
		shape = nearestShape(shapes, want)
		m.substShape, m.want, m.ref = true, want, shape
		m.tokScale = float64(want.topk) / float64(shape.topk)
		m.ridge = 295 // H100 bf16: 989 TFLOP/s over 3.35 TB/s, until SetRoofline
		m.Notes = append(m.Notes, fmt.Sprintf("moe %s: no rows for hidden %d, inter %d, top-%d of %d experts; priced from hidden %d, inter %d, top-%d of %d at equal routed pairs, scaled by the roofline work ratio",
			dtype, hidden, inter, topk, experts, shape.hidden, shape.inter, shape.topk, shape.experts))
	}
	match := func(r profiles.MoERow) bool {
		return r.Dtype == dtype && r.Hidden == shape.hidden && r.Inter == shape.inter && r.TopK == shape.topk && r.NumExperts == shape.experts && r.LatencyMs > 0
	}
	dists := map[string]bool{}
	for _, r := range rows {
		if match(r) {
			dists[r.Distribution] = true
		}
	}
	if !dists[dist] {
		alt := ""
		for _, d := range sortedKeys(dists) {
			if alt == "" || d == "balanced" {
				alt = d
			}
		}
		m.Notes = append(m.Notes, fmt.Sprintf("moe %s: no %s rows for this shape; priced from %s routing", dtype, dist, alt))
		dist = alt
	}
	collect := func(tp, ep int) ([]float64, []float64) {
		best := map[float64]float64{}
		for _, r := range rows {
			if match(r) && r.MoETP == int64(tp) && r.MoEEP == int64(ep) && r.Distribution == dist {
				x := float64(r.NumTokens)
				if y, ok := best[x]; !ok || r.LatencyMs < y {
					best[x] = r.LatencyMs
				}
			}
		}
		var xs, ys []float64
		for x, y := range best {
			xs, ys = append(xs, x), append(ys, y)
		}
		return xs, ys
	}
	xs, ys := collect(tp, ep)
	if len(xs) == 0 {
		// The nearest measured split below the requested one: the largest
		// tp'×ep' with tp' | tp and ep' | ep, scaled by tp'·ep'/(tp·ep).
		// The H200 Qwen3-30B-A3B rows show why not always TP1/EP1: the
		// measured TP4 curve is 1.3–1.8× TP1 ÷ 4 (sharded experts lose
		// efficiency), so the closest split carries most of that loss.
		bt, be := 0, 0
		for _, r := range rows {
			t, e := int(r.MoETP), int(r.MoEEP)
			if match(r) && r.Distribution == dist && t > 0 && e > 0 &&
				tp%t == 0 && ep%e == 0 && (t*e > bt*be || (t*e == bt*be && e > be)) {
				bt, be = t, e
			}
		}
		if bt == 0 {
			return nil, fmt.Errorf("moe table has no %s rows for hidden %d, inter %d, top-%d of %d experts (%s) at a split dividing tp=%d ep=%d",
				dtype, shape.hidden, shape.inter, shape.topk, shape.experts, dist, tp, ep)
		}
		xs, ys = collect(bt, be)
		m.scale *= float64(bt*be) / float64(tp*ep)
		m.Notes = append(m.Notes, fmt.Sprintf("moe: no rows for tp=%d ep=%d; tp=%d ep=%d latency × %d/%d", tp, ep, bt, be, bt*be, tp*ep))
	}
	m.curve = newSeries(xs, ys)
	monotoneCost(m.curve.x.v, m.curve.y, func(t float64) float64 { return t })
	return m, nil
}

// nearestShape is the measured expert shape closest to want: same hidden
// size preferred, then the smallest log distance in per-expert size
// (hidden·inter) plus top-k.
func nearestShape(shapes map[moeShape]bool, want moeShape) moeShape {
	var best moeShape
	bestD := math.Inf(1)
	for s := range shapes {
		d := math.Abs(math.Log(float64(s.hidden*s.inter)/float64(want.hidden*want.inter))) +
			math.Abs(math.Log(float64(s.topk)/float64(want.topk)))
		if s.hidden != want.hidden {
			d += 100
		}
		if d < bestD || (d == bestD && moeShapeLess(s, best)) {
			best, bestD = s, d
		}
	}
	return best
}

func moeShapeLess(a, b moeShape) bool {
	if a.hidden != b.hidden {
		return a.hidden < b.hidden
	}
	if a.inter != b.inter {
		return a.inter < b.inter
	}
	if a.topk != b.topk {
		return a.topk < b.topk
	}
	return a.experts < b.experts
}

// SetRoofline sets the GPU's ridge point (dense FLOP/s over HBM bytes/s,
// times the weight bytes per parameter) used by the shape substitution.
func (m *MoE) SetRoofline(flops, bw, bytesPerWeight float64) {
	if flops > 0 && bw > 0 && bytesPerWeight > 0 {
		m.ridge = flops / bw * bytesPerWeight
	}
}

// work is the roofline work of P routed pairs on shape s, in units of
// one byte-per-weight read: max(A·size, 2·P·size / ridge).
func (m *MoE) work(s moeShape, pairs float64) float64 {
	size := 3 * float64(s.hidden) * float64(s.inter)
	e := float64(s.experts)
	active := e * (1 - math.Pow(1-1/e, pairs))
	return math.Max(active*size, 2*pairs*size/m.ridge)
}

// moeRule is Ms's rule outside the moe table's token grid, as the run's
// notes state it.
const moeRule = "the series is first made monotone in tokens (" + pooled + "); a token count above the table's largest scales " +
	"its latency linearly in tokens, one below keeps the smallest's latency; an expert shape the table lacks is scaled from a " +
	"measured one by roofline work (its own note names both)"

// Ms is the MoE layer latency, milliseconds, for tokens tokens.
func (m *MoE) Ms(tokens int) float64 {
	if tokens <= 0 {
		return 0
	}
	x := float64(tokens) * m.tokScale
	y, _ := m.curve.at(x)
	axis := "tokens"
	if m.tokScale != 1 {
		axis = "scaled tokens" // tokens × tokScale: the substituted shape's
	}
	r := beyond(axis, m.curve.x, x)
	if !r.Out() && m.substShape {
		r.Why = "expert shape not in the table: scaled from a measured one (see the note)"
	}
	m.Cov.note("moe "+m.dtype, moeRule, r, func() string { return fmt.Sprintf("tokens=%d", tokens) })
	if m.substShape {
		pairs := float64(tokens) * float64(m.want.topk)
		y *= m.work(m.want, pairs) / m.work(m.ref, pairs)
	}
	return y * m.scale
}
