package predictor

import (
	"fmt"

	"frontier/profiles"
)

// MoE predicts the fused-MoE layer (vLLM fused_moe: grouped expert GEMMs,
// router excluded) from the moe_perf table for one model shape, as a
// latency curve over routed tokens, log-log interpolated (series.at rules).
//
// Matching: rows with the model's hidden size, expert intermediate size,
// top-k, expert count, the deployment's MoE TP and EP sizes and the routing
// distribution. When the exact TP/EP split is absent, the nearest measured
// split that divides it (largest tp'×ep') is used with its latency scaled
// by tp'·ep'/(moe_tp·moe_ep) (each rank holds that share of the expert
// weights; stated rule, noted). The curve's latency per token is made
// non-increasing in tokens (monotoneCost), as GEMM's per row in m.
type MoE struct {
	curve series
	scale float64
	Note  string
	Cov   Coverage
}

// NewMoE selects the curve for the shape; dist is "balanced" or a
// power_law_<alpha> distribution present in the table.
func NewMoE(rows []profiles.MoERow, dtype string, hidden, inter, topk, experts, tp, ep int, dist string) (*MoE, error) {
	collect := func(tp, ep int) ([]float64, []float64) {
		var xs, ys []float64
		for _, r := range rows {
			if r.Dtype == dtype && r.Hidden == int64(hidden) && r.Inter == int64(inter) && r.TopK == int64(topk) &&
				r.NumExperts == int64(experts) && r.MoETP == int64(tp) && r.MoEEP == int64(ep) && r.Distribution == dist && r.LatencyMs > 0 {
				xs, ys = append(xs, float64(r.NumTokens)), append(ys, r.LatencyMs)
			}
		}
		return xs, ys
	}
	m := &MoE{scale: 1}
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
			if r.Dtype == dtype && r.Hidden == int64(hidden) && r.Inter == int64(inter) && r.TopK == int64(topk) &&
				r.NumExperts == int64(experts) && r.Distribution == dist && t > 0 && e > 0 &&
				tp%t == 0 && ep%e == 0 && (t*e > bt*be || (t*e == bt*be && e > be)) {
				bt, be = t, e
			}
		}
		if bt == 0 {
			return nil, fmt.Errorf("moe table has no %s rows for hidden %d, inter %d, top-%d of %d experts (%s)", dtype, hidden, inter, topk, experts, dist)
		}
		xs, ys = collect(bt, be)
		m.scale = float64(bt*be) / float64(tp*ep)
		m.Note = fmt.Sprintf("moe: no rows for tp=%d ep=%d; tp=%d ep=%d latency × %d/%d", tp, ep, bt, be, bt*be, tp*ep)
	}
	m.curve = newSeries(xs, ys)
	monotoneCost(m.curve.x.v, m.curve.y, func(t float64) float64 { return t })
	return m, nil
}

// Ms is the MoE layer latency, milliseconds, for tokens tokens.
func (m *MoE) Ms(tokens int) float64 {
	if tokens <= 0 {
		return 0
	}
	y, out := m.curve.at(float64(tokens))
	m.Cov.note(out, func() string { return fmt.Sprintf("moe tokens=%d", tokens) })
	return y * m.scale
}
