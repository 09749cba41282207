package calibration

import (
	"fmt"
	"frontier/sim"
	"math"
	"slices"
)

// Tolerance is the largest relative error at which a gated metric passes
// (docs/GATE.md: |sim − truth| / truth ≤ 0.10). It is the same for every
// metric and every cell.
const Tolerance = 0.10

// toleranceSlack absorbs the binary rounding of decimal inputs, so that
// sim 1.1 against truth 1 (a 10 % error written in decimal, computed as
// 0.10000000000000009) passes while 10.0000001 % still fails.
const toleranceSlack = 1e-9

// Metric names of the gate rows, as printed and as in the JSON "metric" key.
const (
	MetricTTFTMedian = "ttft_median"
	MetricTTFTP90    = "ttft_p90"
	MetricTTFTMean   = "ttft_mean"
	MetricTTFTP99    = "ttft_p99"
	MetricE2EMean    = "e2e_mean"
	MetricE2EMedian  = "e2e_median"
	MetricE2EP90     = "e2e_p90"
	MetricE2EP99     = "e2e_p99"
	MetricTPOTMean   = "tpot_mean"
	// MetricSuccesses is the count of successful requests (overloaded cells).
	MetricSuccesses = "successes"
	// MetricSuccessRPS is successful requests per second over the window
	// from the first arrival to the last finish or failure (overloaded
	// cells).
	MetricSuccessRPS = "success_rps"
	// MetricFailures is the count of failed (timed-out) requests, reported
	// beside an overloaded cell's gated figures.
	MetricFailures = "failures"
)

// Row is one (cell, metric) line of the gate table. Latency values are in
// seconds, counts in requests, rates in requests/s.
type Row struct {
	// Cell names the cell, for example "<run>/stage_0".
	Cell string `json:"cell"`
	// Metric is one of the Metric* names.
	Metric string  `json:"metric"`
	Truth  float64 `json:"truth"`
	Sim    float64 `json:"sim"`
	// RelErr is RelErr(Sim, Truth), a fraction (0.1 is 10 %).
	RelErr float64 `json:"rel_err"`
	// Gated says whether the row decides its cell's verdict; the others are
	// reported only.
	Gated bool `json:"gated"`
	// Pass is RelErr ≤ Tolerance. It decides the cell only when Gated; on a
	// reported row it is informational.
	Pass bool `json:"pass"`
	// Seeds > 1 when the cell ran with several seeds (gate --seeds N);
	// SimMin and SimMax are then the simulated value's range over them.
	Seeds          int     `json:"seeds,omitempty"`
	SimMin, SimMax float64 `json:"-"`
}

// RelErr is the gate's relative error |sim − truth| / |truth|, a fraction.
// A zero truth gives 0 when sim is also 0 and +Inf otherwise (any miss of a
// true zero is infinitely wrong, and fails). NaN in either gives NaN, which
// fails.
func RelErr(sim, truth float64) float64 {
	if truth == 0 {
		switch {
		case math.IsNaN(sim):
			return math.NaN()
		case sim == 0:
			return 0
		default:
			return math.Inf(1)
		}
	}
	return math.Abs(sim-truth) / math.Abs(truth)
}

// withinTolerance reports whether a relative error passes (NaN fails).
func withinTolerance(relErr float64) bool {
	return relErr <= Tolerance+toleranceSlack
}

// Percentile returns the p-th percentile (p in [0, 100]) of sorted, which
// must be in ascending order, by linear interpolation between order
// statistics: rank = p/100 × (n − 1), value = x[⌊rank⌋] + frac(rank) ×
// (x[⌈rank⌉] − x[⌊rank⌋]). This is numpy.percentile's default, which
// inference-perf uses for the truth, so both sides share one rule. NaN for
// an empty slice or p outside [0, 100].
func Percentile(sorted []float64, p float64) float64 { return sim.Percentile(sorted, p) }

// LatencySummary is the statistics the gate compares for one latency, in
// the samples' unit (seconds for the gate).
type LatencySummary struct {
	Mean   float64
	Median float64
	P90    float64
	P99    float64
}

// Summarize computes a LatencySummary of samples (any order; not modified)
// with Percentile's rule. All fields are NaN for no samples.
func Summarize(samples []float64) LatencySummary {
	if len(samples) == 0 {
		nan := math.NaN()
		return LatencySummary{Mean: nan, Median: nan, P90: nan, P99: nan}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	return LatencySummary{
		Mean:   sum / float64(len(sorted)),
		Median: Percentile(sorted, 50),
		P90:    Percentile(sorted, 90),
		P99:    Percentile(sorted, 99),
	}
}

// SimStage is what the simulator reports for one stage of a run.
type SimStage struct {
	// TTFT and E2E summarize the stage's successful requests, s.
	TTFT LatencySummary
	E2E  LatencySummary
	// Successes and Failures count the stage's requests that finished and
	// that failed (client timeout).
	Successes int
	Failures  int
	// WindowS is the time from the stage's first arrival to its last
	// finish or failure, s.
	WindowS float64
	// TPOTMean is the mean time per output token, s, derived as the truth
	// is: (E2E.Mean − TTFT.Mean) / (output_len requested − 1).
	TPOTMean float64
}

// NewSimStage builds a SimStage from per-request samples of the stage's
// successful requests (s, any order; Successes is len(e2e)), its failure
// count, its window (s) and the requested output length (tokens).
func NewSimStage(ttft, e2e []float64, failures int, windowS float64, outputLenRequested int) SimStage {
	s := SimStage{
		TTFT:      Summarize(ttft),
		E2E:       Summarize(e2e),
		Successes: len(e2e),
		Failures:  failures,
		WindowS:   windowS,
	}
	s.TPOTMean = derivedTPOT(s.E2E.Mean, s.TTFT.Mean, outputLenRequested)
	return s
}

// SuccessRPS is Successes / WindowS, requests/s; NaN without a window.
func (s SimStage) SuccessRPS() float64 {
	if s.WindowS <= 0 {
		return math.NaN()
	}
	return float64(s.Successes) / s.WindowS
}

// CompareStage judges one cell: the truth of one measured stage against
// what the simulator reported for it. outputLenRequested (tokens) derives
// the truth's TPOT. A normal cell gates ttft_median, ttft_p90, e2e_mean,
// e2e_median, e2e_p90 and tpot_mean and reports ttft_mean, ttft_p99 and
// e2e_p99. An overloaded cell (truth.Overloaded) gates successes and
// success_rps, and reports failures and every latency row instead: its
// latencies are censored at the 300 s timeout and say little about serving.
//
// The truth's success_rps is inference-perf's requests_per_sec, which is
// already successes over the window from the first request sent to the last
// finished or failed (see StageTruth.WindowS), the same window SimStage
// uses.
func CompareStage(cell string, truth StageTruth, outputLenRequested int, sim SimStage) []Row {
	overloaded := truth.Overloaded()
	latencyGated := !overloaded
	var rows []Row
	add := func(metric string, t, s float64, gated bool) {
		re := RelErr(s, t)
		rows = append(rows, Row{Cell: cell, Metric: metric, Truth: t, Sim: s,
			RelErr: re, Gated: gated, Pass: withinTolerance(re)})
	}
	if overloaded {
		add(MetricSuccesses, float64(truth.Successes), float64(sim.Successes), true)
		add(MetricSuccessRPS, truth.RequestsPerSec, sim.SuccessRPS(), true)
		add(MetricFailures, float64(truth.Failures), float64(sim.Failures), false)
	}
	add(MetricTTFTMedian, truth.TTFT.Median, sim.TTFT.Median, latencyGated)
	add(MetricTTFTP90, truth.TTFT.P90, sim.TTFT.P90, latencyGated)
	add(MetricTTFTMean, truth.TTFT.Mean, sim.TTFT.Mean, false)
	add(MetricTTFTP99, truth.TTFT.P99, sim.TTFT.P99, false)
	add(MetricE2EMean, truth.E2E.Mean, sim.E2E.Mean, latencyGated)
	add(MetricE2EMedian, truth.E2E.Median, sim.E2E.Median, latencyGated)
	add(MetricE2EP90, truth.E2E.P90, sim.E2E.P90, latencyGated)
	add(MetricE2EP99, truth.E2E.P99, sim.E2E.P99, false)
	add(MetricTPOTMean, derivedTPOT(truth.E2E.Mean, truth.TTFT.Mean, outputLenRequested), sim.TPOTMean, latencyGated)
	return rows
}

// Verdicts counts cells, not rows: a cell passes when it has at least one
// gated row and every gated row passes. A cell with no gated row fails, as
// nothing shows it right. Rows of one cell need not be adjacent.
func Verdicts(rows []Row) (passed, failed int) {
	type verdict struct{ gated, ok bool }
	cells := map[string]*verdict{}
	for _, r := range rows {
		v, seen := cells[r.Cell]
		if !seen {
			v = &verdict{ok: true}
			cells[r.Cell] = v
		}
		if r.Gated {
			v.gated = true
			v.ok = v.ok && r.Pass
		}
	}
	for _, v := range cells {
		if v.gated && v.ok {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// CellName names the gate cell of one stage of a run: "<run>/stage_<index>".
func CellName(run string, stageIndex int) string {
	return fmt.Sprintf("%s/stage_%d", run, stageIndex)
}
