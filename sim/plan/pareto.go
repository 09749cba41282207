package plan

import (
	"math"
	"sort"
)

// CurvePoint is one load of a deployment on the throughput–interactivity
// chart: output tok/s per GPU against output tok/s per user (1000 / mean
// TPOT in ms, the rate at which one user sees tokens).
type CurvePoint struct {
	Deployment string  // label
	X          float64 // the load: request rate (req/s) or max concurrency
	PerGPU     float64 // output tok/s per GPU
	PerUser    float64 // output tok/s per user
}

// CurveFractions are the loads, as fractions of a deployment's capacity,
// probed to draw its curve below capacity (the search's own probes crowd
// near capacity).
var CurveFractions = []float64{0.1, 0.25, 0.5, 0.75}

// Curve returns a deployment's points at loads up to its capacity: every
// probe that held, plus one probe (first seed) at each CurveFractions of
// the capacity. Empty when nothing held.
func (s *Search) Curve(label string, c *Capacity) []CurvePoint {
	if c.At == nil {
		return nil
	}
	var out []CurvePoint
	add := func(x float64, gpus int, outTok, tpot float64) {
		if gpus > 0 && tpot > 0 {
			out = append(out, CurvePoint{Deployment: label, X: x, PerGPU: outTok / float64(gpus), PerUser: 1000 / tpot})
		}
	}
	for _, f := range CurveFractions {
		x := f * c.X
		if s.ClosedLoop {
			x = math.Floor(x)
			if x < 1 {
				continue
			}
		}
		o := s.Probe(x, s.Seeds[0], s.Requests)
		if o.Refused != "" {
			continue
		}
		add(x, GPUs(o.Setup), o.Summary.OutputThroughput, o.Summary.Latencies["mean_tpot_ms"])
	}
	for _, p := range c.Sorted() {
		if p.Held && p.X <= c.X {
			add(p.X, p.GPUs, p.OutputThroughput, p.MeanTPOTMs)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

// Front returns the Pareto front of points: those no other point beats on
// both output tok/s per GPU and per user (ties kept once), by tok/s per
// user, highest first.
func Front(points []CurvePoint) []CurvePoint {
	sorted := append([]CurvePoint{}, points...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].PerUser != sorted[j].PerUser {
			return sorted[i].PerUser > sorted[j].PerUser
		}
		return sorted[i].PerGPU > sorted[j].PerGPU
	})
	var out []CurvePoint
	best := math.Inf(-1)
	for _, p := range sorted {
		if p.PerGPU > best {
			out = append(out, p)
			best = p.PerGPU
		}
	}
	return out
}
