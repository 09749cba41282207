package sim

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Percentile returns the p-th percentile (p in [0, 100]) of sorted
// (ascending) by linear interpolation between order statistics, numpy's
// default rule, which both `vllm bench serve` and inference-perf use. NaN
// for an empty slice or p outside [0, 100].
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	rank := p / 100 * float64(n-1)
	lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
	return sorted[lo] + (rank-float64(lo))*(sorted[hi]-sorted[lo])
}

// BenchSummary is what `vllm bench serve` reports, with its JSON keys:
// counts, throughputs (per s) and latency statistics in milliseconds.
type BenchSummary struct {
	Completed            int     `json:"completed"`
	Failed               int     `json:"failed"`
	Rejected             int     `json:"-"`        // of Failed: refused for exceeding max_model_len
	Duration             float64 `json:"duration"` // s, first send to last response
	TotalInputTokens     int     `json:"total_input_tokens"`
	TotalOutputTokens    int     `json:"total_output_tokens"`
	RequestThroughput    float64 `json:"request_throughput"`
	OutputThroughput     float64 `json:"output_throughput"`
	TotalTokenThroughput float64 `json:"total_token_throughput"`
	// RequestGoodput is completed requests meeting the --goodput SLO per
	// second (GoodputSet false: no SLO given; bench serve writes null).
	RequestGoodput float64 `json:"-"`
	GoodputSet     bool    `json:"-"`
	// MaxOutputTokensPerS is bench serve's max_output_tokens_per_s, "Peak
	// output token throughput (tok/s)": Summarize cannot see chunk times,
	// so the caller copies Result.MaxOutputTokensPerS here.
	MaxOutputTokensPerS float64 `json:"max_output_tokens_per_s"`
	// MaxConcurrentRequests is the peak of completed requests in flight
	// (bench serve's max_concurrent_requests, PeakConcurrency).
	MaxConcurrentRequests int `json:"max_concurrent_requests"`
	// Latencies maps bench serve's keys (mean_ttft_ms, median_ttft_ms,
	// std_ttft_ms, p99_ttft_ms, … for ttft, tpot, itl, e2el) to ms.
	Latencies map[string]float64 `json:"-"`
	// Percentiles lists the --metric-percentiles reported (0–100).
	Percentiles []float64 `json:"-"`
}

// Metrics are the latency families bench serve reports, in its order.
var Metrics = []string{"ttft", "tpot", "itl", "e2el"}

// Summarize computes bench serve's metrics over requests (completed ones
// for latencies), with the ITL histogram for inter-token gaps; slo, when
// set, gives the goodput (--goodput).
func Summarize(reqs []RequestRecord, itl *Histogram, percentiles []float64, slo SLO) BenchSummary {
	s := BenchSummary{Latencies: map[string]float64{}, Percentiles: percentiles, GoodputSet: slo.Set()}
	// Sized up front: a million-request run's slices are 8 MB each, and
	// growing them by appending left as much garbage again. One buffer
	// serves the peak concurrency's sends and finishes, then the three
	// metrics' samples, each gathered from reqs when its turn comes:
	// 16 bytes a completed request where five slices took 40, all fresh
	// pages (the collector is off for a run: 90 of the codegen process's
	// page faults, now 36).
	n := 0
	for i := range reqs {
		if !reqs[i].Failed && reqs[i].FinishNs >= 0 {
			n++
		}
	}
	buf := make([]int64, 2*n)
	s.MaxConcurrentRequests = peakConcurrency(reqs, buf)
	samples := make([]float64, 0, n)
	start, end := int64(math.MaxInt64), int64(0)
	for i := range reqs {
		r := &reqs[i]
		if r.SendNs >= 0 {
			start = min(start, r.SendNs)
		}
		end = max(end, r.FinishNs)
		if r.Failed || r.FinishNs < 0 {
			s.Failed++
			if r.Rejected {
				s.Rejected++
			}
			continue
		}
		s.Completed++
		s.TotalInputTokens += int(r.PromptTokens)
		s.TotalOutputTokens += int(r.OutputTokens)
	}
	if s.Completed > 0 && end > start {
		s.Duration = float64(end-start) / 1e9
		s.RequestThroughput = float64(s.Completed) / s.Duration
		s.OutputThroughput = float64(s.TotalOutputTokens) / s.Duration
		s.TotalTokenThroughput = float64(s.TotalInputTokens+s.TotalOutputTokens) / s.Duration
		if s.GoodputSet {
			s.RequestGoodput = float64(slo.Good(reqs)) / s.Duration
		}
	}
	for _, name := range [...]string{"ttft", "tpot", "e2el"} {
		xs := gather(samples, reqs, name)
		slices.Sort(xs)
		mean, std := meanStd(xs)
		s.Latencies["mean_"+name+"_ms"] = mean
		s.Latencies["std_"+name+"_ms"] = std
		s.Latencies["median_"+name+"_ms"] = percentileOr0(xs, 50)
		for _, p := range percentiles {
			s.Latencies["p"+PercentileLabel(p)+"_"+name+"_ms"] = percentileOr0(xs, p)
		}
	}
	if itl != nil {
		s.Latencies["mean_itl_ms"] = itl.Mean() / 1e6
		s.Latencies["std_itl_ms"] = itl.Std() / 1e6
		s.Latencies["median_itl_ms"] = itl.Percentile(50) / 1e6
		for _, p := range percentiles {
			s.Latencies["p"+PercentileLabel(p)+"_itl_ms"] = itl.Percentile(p) / 1e6
		}
	}
	return s
}

// gather appends to xs[:0] metric name's sample, ms, of each completed
// request of reqs in order: "ttft", "e2el", or "tpot" (requests of more
// than one output token).
func gather(xs []float64, reqs []RequestRecord, name string) []float64 {
	xs = xs[:0]
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.Failed || r.FinishNs < 0:
		case name == "ttft":
			xs = append(xs, float64(r.TTFTNs())/1e6)
		case name == "e2el":
			xs = append(xs, float64(r.E2ENs())/1e6)
		case r.OutputTokens > 1:
			xs = append(xs, r.TPOTNs()/1e6)
		}
	}
	return xs
}

// PercentileLabel formats a percentile as bench serve does in its keys
// (99 → "99", 99.9 → "99.9").
func PercentileLabel(p float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(p, 'f', -1, 64), ".0")
}

func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// percentileOr0 is Percentile, or 0 with no samples (bench serve reports 0
// for a metric nothing measured).
func percentileOr0(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return Percentile(sorted, p)
}
