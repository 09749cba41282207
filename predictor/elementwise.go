package predictor

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"frontier/profiles"
)

// Memory-bound operators the imported tables lack (RMSNorm, rotary,
// SiLU-and-mul, embedding gather, sampler) are priced from the collector's
// ops table when it measured them (Elementwise), else by the bytes they
// move: bytes / (HBM bandwidth × MemEfficiency) + KernelFloorNs per kernel.
const (
	// MemEfficiency is the achievable fraction of peak HBM bandwidth for
	// streaming kernels (aiconfigurator h100_sxm.yaml
	// mem_bw_empirical_scaling_factor = 0.8).
	MemEfficiency = 0.8
	// KernelFloorNs is the shortest a small kernel runs on Hopper, ns
	// (aiconfigurator mem_empirical_constant_latency = 3 µs).
	KernelFloorNs = 3000.0
)

// memBoundMs prices a kernel moving bytes on a GPU with bw bytes/s.
func memBoundMs(bytes, bw float64) float64 {
	return (bytes/(bw*MemEfficiency)*1e9 + KernelFloorNs) / 1e6
}

// Elementwise prices the small memory-bound operators of a step, by name as
// the collector's ops table names them (profiles.ElementwiseOps):
//
//   - rmsnorm: vLLM's fused residual add + RMSNorm (width = hidden);
//   - rotary: NeoX rotary on q and k in place (width = (query + kv heads on
//     the rank) × head_dim);
//   - silu_and_mul: SiLU(gate) × up (width = the output width, intermediate
//     size per rank);
//   - embedding: the token embedding gather (width = hidden);
//   - sampler: temperature, softmax and random sampling over fp32 logits
//     (tokens = sequences, width = vocab).
//
// An operator with measured rows is priced from them (Ms says how); one
// without is priced by the bytes it moves (memBoundMs), as the predictor
// did before the collector existed. Not safe for concurrent use (Cov).
type Elementwise struct {
	bw  float64
	ops map[string]*opCurves
	// Cov counts lookups of measured operators; extrapolated are those
	// outside the measured tokens or at an unmeasured width.
	Cov Coverage
}

// opCurves is one operator's measured latency: a tokens curve per width.
type opCurves struct {
	widths []float64 // ascending
	curves []series  // curves[i] is latency(tokens) at widths[i]
}

// NewElementwise indexes measured op rows (any dtype's, but when an
// operator was measured in several dtypes only its bfloat16 rows, else those
// of the dtype first in name order) and keeps bw, the HBM bandwidth in
// bytes/s, for operators without rows. Rows with a non-positive latency,
// tokens or width are ignored.
func NewElementwise(rows []profiles.OpRow, bw float64) *Elementwise {
	dtypes := map[string]map[string]bool{}
	for _, r := range rows {
		if dtypes[r.Op] == nil {
			dtypes[r.Op] = map[string]bool{}
		}
		dtypes[r.Op][r.Dtype] = true
	}
	keep := map[string]string{}
	for op, ds := range dtypes {
		if ds["bfloat16"] {
			keep[op] = "bfloat16"
			continue
		}
		first := ""
		for d := range ds {
			if first == "" || d < first {
				first = d
			}
		}
		keep[op] = first
	}
	type point struct{ x, y []float64 }
	pts := map[string]map[int64]*point{}
	for _, r := range rows {
		if r.Dtype != keep[r.Op] || r.LatencyMs <= 0 || r.Tokens <= 0 || r.Width <= 0 {
			continue
		}
		if pts[r.Op] == nil {
			pts[r.Op] = map[int64]*point{}
		}
		p := pts[r.Op][r.Width]
		if p == nil {
			p = &point{}
			pts[r.Op][r.Width] = p
		}
		p.x, p.y = append(p.x, float64(r.Tokens)), append(p.y, r.LatencyMs)
	}
	e := &Elementwise{bw: bw, ops: map[string]*opCurves{}}
	for op, byWidth := range pts {
		c := &opCurves{}
		for w := range byWidth {
			c.widths = append(c.widths, float64(w))
		}
		sort.Float64s(c.widths)
		for _, w := range c.widths {
			p := byWidth[int64(w)]
			sr := newSeries(p.x, p.y)
			monotoneCost(sr.x.v, sr.y, func(t float64) float64 { return t })
			c.curves = append(c.curves, sr)
		}
		e.ops[op] = c
	}
	return e
}

// bytesNote is the note naming the operators of profiles.ElementwiseOps
// that e prices by the bytes they move (no measured rows: every GPU but
// h200-sxm's defaults), with the rule's constants, as h200-sxm's runs name
// those priced from measurements (profiles.withMeasuredOps); none when
// every one is measured.
func (e *Elementwise) bytesNote(hardware string) []string {
	var ops []string
	for _, op := range profiles.ElementwiseOps {
		if !e.Measured(op) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s priced by the bytes they move at %.0f %% of HBM bandwidth plus %.0f µs a kernel (no measured rows)",
		hardware, strings.Join(ops, ", "), MemEfficiency*100, KernelFloorNs/1e3)}
}

// Measured reports whether op is priced from measured rows (true) or from
// the bytes it moves (false).
func (e *Elementwise) Measured(op string) bool { return e.ops[op] != nil }

// elementwiseRule is Ms's rule outside a measured operator's rows, as the
// run's notes state it.
const elementwiseRule = "each measured width's series is first made monotone in tokens (" + pooled + "); a token count above the " +
	"table's largest scales its latency linearly in tokens, one below keeps the smallest's latency; a width not measured scales " +
	"the nearest measured width's latency linearly in width"

// Ms is op's kernel time, milliseconds, on tokens rows of width features
// (0 when either is ≤ 0: no kernel runs).
//
// Measured operators: at a measured width, log-log interpolation over tokens
// (series.at: exact at measured tokens, flat below the smallest, linear in
// tokens above the largest), over a curve whose latency per token never
// rises with tokens (monotoneCost; points in that order are as measured). At a width not measured, the nearest measured
// width w' (nearest in ratio: max(width/w', w'/width) least; a tie goes to the wider)
// is priced at the same tokens and scaled by width/w': these kernels move
// bytes in proportion to width, so their time does too.
//
// Operators without rows: memBoundMs of the bytes they move, activations
// bf16 (2 bytes):
//
//   - rmsnorm: 3 × tokens × width × 2 (fused add: read the input and the
//     residual, write the result; a plain RMSNorm would be 2 ×);
//   - rotary: 2 × tokens × width × 2 (q and k read and written in place);
//   - silu_and_mul: tokens × 3·width × 2 (read gate and up, 2·width; write
//     width);
//   - embedding: 2 × tokens × width × 2 (gather the rows, write them);
//   - sampler, sampler_greedy: 2 × tokens × width × 4 (fp32 logits, width =
//     vocab, read twice: softmax, then the draw);
//   - any other name: 2 × tokens × width × 2 (read once, write once).
func (e *Elementwise) Ms(op string, tokens, width int) float64 {
	if tokens <= 0 || width <= 0 {
		return 0
	}
	c := e.ops[op]
	if c == nil {
		return memBoundMs(fallbackBytes(op, float64(tokens), float64(width)), e.bw)
	}
	w := float64(width)
	i := c.nearest(w)
	y, out := c.curves[i].at(float64(tokens))
	r := Reach{}
	if out {
		r = beyond("tokens", c.curves[i].x, float64(tokens))
	}
	if c.widths[i] != w {
		y *= w / c.widths[i]
		inside := w > slices.Min(c.widths) && w < slices.Max(c.widths) // a width between measured ones
		r = farther(r, Reach{Axis: "width", X: w, Edge: c.widths[i], Near: inside})
	}
	e.Cov.note(op, elementwiseRule, r, func() string { return fmt.Sprintf("tokens=%d width=%d", tokens, width) })
	return y
}

// nearest returns the index of the measured width nearest w in ratio.
func (c *opCurves) nearest(w float64) int {
	best, bestR := 0, math.Inf(1)
	for i, x := range c.widths {
		r := w / x
		if r < 1 {
			r = x / w
		}
		if r <= bestR { // ascending widths: a tie goes to the wider
			best, bestR = i, r
		}
	}
	return best
}

// fallbackBytes is the HBM traffic Ms assumes for an operator without rows.
func fallbackBytes(op string, tokens, width float64) float64 {
	const bf16, fp32 = 2, 4
	switch op {
	case "rmsnorm":
		return 3 * tokens * width * bf16
	case "silu_and_mul":
		return tokens * 3 * width * bf16
	case "sampler", "sampler_greedy":
		return 2 * tokens * width * fp32
	default: // rotary, embedding and any other: read once, write once
		return 2 * tokens * width * bf16
	}
}
