package calibration

import (
	"fmt"
	"io"
	"math"
	"slices"

	"frontier/sim"
)

// ReplayLives are the lives of a replay's requests (arrival order), times
// in s from the run's first send; a failed request gives up at its e2e_s.
// promptLen stands in for the 0 tokens of failed requests.
func ReplayLives(reqs []ReplayRequest, promptLen int) []Life {
	out := make([]Life, len(reqs))
	for i, q := range reqs {
		a := float64(q.ArrivalUs) / 1e6
		l := Life{ArrivalS: a, EndS: a + q.E2ES, Prompt: q.InputTokens, Failed: q.Failed}
		if q.Failed {
			l.Prompt = promptLen
		} else {
			l.FirstS = a + q.TTFTS
		}
		out[i] = l
	}
	return out
}

// SimLives are the lives of a simulation's requests, times in s.
func SimLives(res *sim.Result) []Life {
	var out []Life
	for i := range res.Requests {
		r := &res.Requests[i]
		if r.SendNs < 0 || r.FinishNs < 0 {
			continue
		}
		l := Life{ArrivalS: float64(r.SendNs) / 1e9, EndS: float64(r.FinishNs) / 1e9, Prompt: int(r.PromptTokens), Failed: r.Failed}
		if !r.Failed {
			l.FirstS = float64(r.FirstTokenNs) / 1e9
		}
		out = append(out, l)
	}
	return out
}

// ObservationBin is one (batch, context) bucket of observations: the
// truth's and the simulation's requests whose reconstructed batch and
// context fall in it, with their median time per output token, and the
// predictor's price of a pure decode step at the truth's mean batch and
// context (StepMs). Times in ms.
type ObservationBin struct {
	BatchLo, BatchHi     float64 // [lo, hi) running requests
	ContextLo, ContextHi float64 // [lo, hi) tokens
	RealN                int
	RealBatch, RealCtx   float64 // means over the real observations
	RealTPOTMs           float64 // median
	SimN                 int
	SimTPOTMs            float64 // median
	StepMs               float64 // pure decode step at (RealBatch, RealCtx)
}

// Observation buckets: running requests and mean context (tokens).
var (
	ObservationBatchEdges   = []float64{0, 32, 64, 96, 120, 1e9}
	ObservationContextEdges = []float64{0, 800, 1200, 1600, 2000, 1e9}
)

// BinObservations buckets real and simulated observations and prices a
// pure decode step at each bucket's real mean with step (ms for a batch
// of b requests at mean context c). Buckets with fewer than minN real
// observations are left out.
func BinObservations(real, simulated []Observation, step func(b int, c float64) float64, minN int) []ObservationBin {
	idx := func(edges []float64, v float64) int {
		for i := 1; i < len(edges); i++ {
			if v < edges[i] {
				return i - 1
			}
		}
		return len(edges) - 2
	}
	type acc struct {
		real, sim []Observation
	}
	nb, nc := len(ObservationBatchEdges)-1, len(ObservationContextEdges)-1
	bins := make([]acc, nb*nc)
	for _, o := range real {
		k := idx(ObservationBatchEdges, o.Batch)*nc + idx(ObservationContextEdges, o.Context)
		bins[k].real = append(bins[k].real, o)
	}
	for _, o := range simulated {
		k := idx(ObservationBatchEdges, o.Batch)*nc + idx(ObservationContextEdges, o.Context)
		bins[k].sim = append(bins[k].sim, o)
	}
	var out []ObservationBin
	for k, a := range bins {
		if len(a.real) < max(1, minN) {
			continue
		}
		i, j := k/nc, k%nc
		b := ObservationBin{BatchLo: ObservationBatchEdges[i], BatchHi: ObservationBatchEdges[i+1],
			ContextLo: ObservationContextEdges[j], ContextHi: ObservationContextEdges[j+1],
			RealN: len(a.real), SimN: len(a.sim)}
		var tp []float64
		for _, o := range a.real {
			b.RealBatch += o.Batch / float64(len(a.real))
			b.RealCtx += o.Context / float64(len(a.real))
			tp = append(tp, o.TPOTS*1e3)
		}
		b.RealTPOTMs = median(tp)
		tp = tp[:0]
		for _, o := range a.sim {
			tp = append(tp, o.TPOTS*1e3)
		}
		b.SimTPOTMs = median(tp)
		b.StepMs = step(int(math.Round(b.RealBatch)), b.RealCtx)
		out = append(out, b)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Percentile(s, 50)
}

// RenderObservations writes one Markdown table of a run's bins.
func RenderObservations(w io.Writer, run string, bins []ObservationBin) error {
	fmt.Fprintf(w, "### %s\n\n", run)
	fmt.Fprintln(w, "| running | context | real n | real batch × ctx | real ms/token | sim n | sim ms/token | decode step ms | real / step |")
	fmt.Fprintln(w, "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, b := range bins {
		fmt.Fprintf(w, "| %s | %s | %d | %.0f × %.0f | %.1f | %d | %s | %.1f | %.2f |\n",
			span(b.BatchLo, b.BatchHi), span(b.ContextLo, b.ContextHi), b.RealN, b.RealBatch, b.RealCtx, b.RealTPOTMs,
			b.SimN, orDash(b.SimTPOTMs), b.StepMs, b.RealTPOTMs/b.StepMs)
	}
	_, err := fmt.Fprintln(w)
	return err
}

func span(lo, hi float64) string {
	if hi >= 1e9 {
		return fmt.Sprintf("≥ %.0f", lo)
	}
	return fmt.Sprintf("%.0f–%.0f", lo, hi)
}

func orDash(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}
