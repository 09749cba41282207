package sim

import "frontier/sim/workload"

// ClassSummary is bench serve's metrics over the requests of one class
// (workload.classes, or one priority of a trace): counts, tokens and the
// TTFT, TPOT and E2EL statistics in ms. ITL is not split by class (the
// run keeps one histogram of gaps), and the throughputs are over the
// class's own window, from its first send to its last response.
type ClassSummary struct {
	workload.Class
	BenchSummary
}

// SummarizeClasses summarizes each class of res (nil when the workload
// has none), with the run's percentiles and goodput SLO.
func SummarizeClasses(res *Result, percentiles []float64, slo SLO) []ClassSummary {
	if len(res.Classes) == 0 {
		return nil
	}
	groups := make([][]RequestRecord, len(res.Classes))
	for _, r := range res.Requests {
		if r.Class >= 0 && int(r.Class) < len(groups) {
			groups[r.Class] = append(groups[r.Class], r)
		}
	}
	out := make([]ClassSummary, len(res.Classes))
	for i, c := range res.Classes {
		out[i] = ClassSummary{Class: c, BenchSummary: Summarize(groups[i], nil, percentiles, slo)}
	}
	return out
}
