package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SLO is a --goodput service-level objective of vllm bench serve: a request
// is good when each set bound holds (ms; 0 = not set). Source:
// vllm/benchmarks/serve.py calculate_metrics.
type SLO struct {
	TTFTMs, TPOTMs, E2ELMs float64
}

// ParseGoodput reads bench serve's --goodput pairs "ttft:200", "tpot:50",
// "e2el:2000" (ms). Errors name the pair and what is allowed.
func ParseGoodput(pairs []string) (SLO, error) {
	var s SLO
	for _, p := range pairs {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		ms, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || !(ms > 0) || ms > 1e12 {
			return s, fmt.Errorf("--goodput: each pair is KEY:VALUE with KEY ttft, tpot or e2el and VALUE a number of ms > 0, got %q", p)
		}
		switch k {
		case "ttft":
			s.TTFTMs = ms
		case "tpot":
			s.TPOTMs = ms
		case "e2el":
			s.E2ELMs = ms
		default:
			return s, fmt.Errorf("--goodput: unknown metric %q in %q (allowed: ttft, tpot, e2el)", k, p)
		}
	}
	return s, nil
}

// Set reports whether any bound is set.
func (s SLO) Set() bool { return s.TTFTMs > 0 || s.TPOTMs > 0 || s.E2ELMs > 0 }

// Good counts the completed requests that meet every set bound, as bench
// serve does: TTFT and E2E of the request, TPOT = (E2E − TTFT) / (output
// tokens − 1), taken as 0 for a single output token.
func (s SLO) Good(reqs []RequestRecord) int {
	n := 0
	for i := range reqs {
		r := &reqs[i]
		if r.Failed || r.FinishNs < 0 {
			continue
		}
		tpot := 0.0
		if r.OutputTokens > 1 {
			tpot = r.TPOTNs() / 1e6
		}
		if (s.TTFTMs == 0 || float64(r.TTFTNs())/1e6 <= s.TTFTMs) &&
			(s.TPOTMs == 0 || tpot <= s.TPOTMs) &&
			(s.E2ELMs == 0 || float64(r.E2ENs())/1e6 <= s.E2ELMs) {
			n++
		}
	}
	return n
}

// PeakConcurrency is bench serve's max_concurrent_requests: the most
// completed requests in flight at once, each over [send, finish), a
// finish before a send at the same instant.
func PeakConcurrency(reqs []RequestRecord) int {
	return peakConcurrency(reqs, nil)
}

// peakConcurrency is PeakConcurrency, its sends and finishes in the two
// halves of buf when given (each half room for the completed requests:
// appending past one would only allocate).
func peakConcurrency(reqs []RequestRecord, buf []int64) int {
	// Sends and finishes sorted apart, then merged: half the memory of
	// sorting (time, ±1) events together, and the same count.
	var sends, finishes []int64
	if h := len(buf) / 2; h > 0 {
		sends, finishes = buf[:0:h], buf[h:h:2*h]
	}
	for i := range reqs {
		r := &reqs[i]
		if r.Failed || r.FinishNs < 0 || r.SendNs < 0 {
			continue
		}
		if sends == nil {
			sends, finishes = make([]int64, 0, len(reqs)-i), make([]int64, 0, len(reqs)-i)
		}
		sends, finishes = append(sends, r.SendNs), append(finishes, r.FinishNs)
	}
	slices.Sort(sends)
	slices.Sort(finishes)
	cur, peak, f := 0, 0, 0
	for _, t := range sends {
		for f < len(finishes) && finishes[f] <= t {
			cur--
			f++
		}
		cur++
		peak = max(peak, cur)
	}
	return peak
}
