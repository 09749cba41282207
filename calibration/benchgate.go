package calibration

import (
	"slices"
	"strconv"
	"strings"

	"frontier/sim"
)

// Bench serve gate metrics beyond the latency rows ("<metric>_<stat>",
// e.g. ttft_median, e2el_p99.9).
const (
	// MetricCompleted is bench serve's completed: successful requests.
	MetricCompleted = "completed"
	// MetricRequestThroughput is bench serve's request_throughput:
	// completed requests per second of the benchmark's duration.
	MetricRequestThroughput = "request_throughput"
	// MetricOutputThroughput is bench serve's output_throughput: output
	// tokens of completed requests per second of the duration.
	MetricOutputThroughput = "output_throughput"
)

// benchLatencyMetrics are bench serve's latency families in its order.
var benchLatencyMetrics = []string{"ttft", "tpot", "itl", "e2el"}

// BenchPercentiles lists, ascending, every percentile (0–100) of a
// p<X>_<metric>_ms key in the result, for any metric: the simulator
// computes these so that each can be reported beside the truth.
func BenchPercentiles(truth *BenchServeResult) []float64 {
	var ps []float64
	for _, m := range []BenchLatencyMs{truth.TTFT, truth.TPOT, truth.ITL, truth.E2EL} {
		for label := range m.Percentiles {
			if p, err := strconv.ParseFloat(strings.TrimPrefix(label, "p"), 64); err == nil && !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	slices.Sort(ps)
	return ps
}

// CompareBenchServe judges a `vllm bench serve` result against the
// simulated summary as docs/GATE.md says, each row only when the file
// carries its key (a metric the file does not carry is not compared; an
// absent key is never read as 0):
//
//   - gated: completed, request_throughput (req/s), output_throughput
//     (tok/s), and the mean and median of TTFT, TPOT and E2EL;
//   - reported: ITL's mean and median (the client's per-chunk gaps depend
//     on how the API server merges tokens into SSE chunks, which bench
//     serve's ITL counts as one gap), and every p<X>_<metric>_ms key of
//     every metric, ITL included.
//
// Latency rows are in seconds (bench serve writes ms). s must have been
// computed with BenchPercentiles(truth) among its percentiles.
func CompareBenchServe(cell string, truth *BenchServeResult, s sim.BenchSummary) []Row {
	var rows []Row
	add := func(metric string, t, v float64, gated bool) {
		re := RelErr(v, t)
		rows = append(rows, Row{Cell: cell, Metric: metric, Truth: t, Sim: v, RelErr: re, Gated: gated, Pass: withinTolerance(re)})
	}
	add(MetricCompleted, float64(truth.Completed), float64(s.Completed), true)
	if truth.Has("request_throughput") {
		add(MetricRequestThroughput, truth.RequestThroughput, s.RequestThroughput, true)
	}
	if truth.Has("output_throughput") {
		add(MetricOutputThroughput, truth.OutputThroughput, s.OutputThroughput, true)
	}
	lat := map[string]BenchLatencyMs{"ttft": truth.TTFT, "tpot": truth.TPOT, "itl": truth.ITL, "e2el": truth.E2EL}
	for _, name := range benchLatencyMetrics {
		m := lat[name]
		if !m.Present {
			continue
		}
		gated := name != "itl"
		for _, st := range []struct {
			stat  string
			truth float64
		}{{"mean", m.Mean}, {"median", m.Median}} {
			key := st.stat + "_" + name + "_ms"
			if truth.Has(key) {
				add(name+"_"+st.stat, st.truth/1e3, s.Latencies[key]/1e3, gated)
			}
		}
		labels := make([]string, 0, len(m.Percentiles))
		for label := range m.Percentiles {
			labels = append(labels, label)
		}
		slices.SortFunc(labels, func(a, b string) int {
			pa, _ := strconv.ParseFloat(a[1:], 64)
			pb, _ := strconv.ParseFloat(b[1:], 64)
			switch {
			case pa < pb:
				return -1
			case pa > pb:
				return 1
			}
			return 0
		})
		for _, label := range labels {
			p, _ := strconv.ParseFloat(label[1:], 64)
			key := "p" + sim.PercentileLabel(p) + "_" + name + "_ms"
			add(name+"_"+label, m.Percentiles[label]/1e3, s.Latencies[key]/1e3, false)
		}
	}
	return rows
}
