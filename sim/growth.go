package sim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Growth is the verdict of DetectGrowth.
type Growth struct {
	Growing bool   // the queue or TTFT is still growing at the end of the run
	Reason  string // one line for a note, empty when not growing
	// Judged is false when the records cannot show a trend: fewer than
	// GrowthMinRequests sent, every request sent at one instant (request
	// rate inf), or fewer than GrowthMinPerQuarter TTFTs in one of the
	// last three quarters. Growing is then false.
	Judged bool
	// TTFTMs is the median TTFT, ms, of the requests sent in each quarter
	// of the send window (first to last send). A failed request that never
	// got a token counts the time it waited (finish − send), a lower bound.
	TTFTMs [4]float64
	// InFlight is the time-averaged number of requests in flight (sent,
	// not yet finished or failed) over each quarter of the send window.
	InFlight [4]float64
	// InFlightRamp is true when the requests sent in the first quarter took
	// longer (median E2E) than a quarter of the send window: the server was
	// still filling from empty, so InFlight is not judged, only TTFTMs.
	InFlightRamp bool
	// FirstE2EMs is that median E2E, ms (+Inf when none of the first
	// quarter's requests finished), and SendWindowMs the send window,
	// first to last send, ms: what InFlightRamp compares.
	FirstE2EMs, SendWindowMs float64
}

// Thresholds of DetectGrowth. A series (median TTFT, or requests in flight)
// is growing when its values over the second, third and last quarters of
// the send window strictly increase and the last is at least GrowthRatio ×
// the reference and GrowthMinTTFTMs (TTFT) or GrowthMinInFlight (in flight)
// above it. The reference is the higher of the first two quarters: the
// second, two quarters before the end, so the growth measured is twice a
// quarter's and stands above the noise; and the first, so that a dip in
// the second quarter followed by a return to the first quarter's level is
// not read as growth (a growing run starts lowest). For requests in
// flight the first quarter counts only once the server has filled (from
// the first quarter's median E2E on), since it starts from empty. In
// steady runs of 300–2,000 requests (Llama-3.1-8B on H200 at 2–50 req/s,
// and at 20–24 req/s with 1,024/256 tokens, capacity ≈ 23.4 req/s) quarter
// medians of TTFT stayed within 10 % of each other away from capacity,
// and in-flight averages within 30 % near it (not monotone), while the
// 26 req/s run went 219 → 354 → 479 ms (TTFT) and 299 → 505 → 624 (in
// flight) over its last three quarters. Llama-3.1-70B TP4 on H200 at
// 8 req/s (1,000 requests of 1,024/256, below capacity) went
// 179 → 136 → 175 → 175 ms and 69 → 51 → 65 → 71: a dip, not growth.
const (
	GrowthRatio         = 1.25
	GrowthMinTTFTMs     = 20.0
	GrowthMinInFlight   = 4.0
	GrowthMinRequests   = 40
	GrowthMinPerQuarter = 10
)

// DetectGrowth looks at send, first-token and finish times of the records
// (completed and failed) and reports whether the queue (requests in flight)
// or TTFT is still growing in the last quarter of the run. Thresholds stated.
//
// The run here is the send window, first to last send: after the last send
// the queue can only drain. Requests refused before reaching an engine
// (Rejected) and records never sent are ignored. The rules and thresholds
// are the constants above; the in-flight rule is skipped while the server
// is still filling (InFlightRamp). Cost O(n log n) for the TTFT medians.
func DetectGrowth(reqs []RequestRecord) Growth {
	var g Growth
	first, last, end := int64(-1), int64(-1), int64(0)
	n := 0
	for i := range reqs {
		r := &reqs[i]
		if r.SendNs < 0 || r.Rejected {
			continue
		}
		n++
		if first < 0 || r.SendNs < first {
			first = r.SendNs
		}
		last = max(last, r.SendNs)
		end = max(end, r.FinishNs)
	}
	span := last - first
	if n < GrowthMinRequests || span <= 0 {
		return g
	}
	// (t − first) × 4 and span × k pass int64 once the window passes
	// 2^61 ns (rates below ~1e-8 req/s): both are worked in 128 bits.
	quarter := func(t int64) int { return min(3, int(mulDiv(t-first, 4, span))) }
	bound := func(k int) int64 { return first + mulDiv(span, int64(k), 4) }
	var ttft [4][]float64
	var e2eFirst []float64
	var area [4]float64
	for i := range reqs {
		r := &reqs[i]
		if r.SendNs < 0 || r.Rejected {
			continue
		}
		q := quarter(r.SendNs)
		switch {
		case r.FirstTokenNs >= 0:
			ttft[q] = append(ttft[q], float64(r.FirstTokenNs-r.SendNs))
		case r.FinishNs >= 0: // failed before its first token: it waited this long at least
			ttft[q] = append(ttft[q], float64(r.FinishNs-r.SendNs))
		}
		done := r.FinishNs
		if done < 0 {
			done = end
		}
		if q == 0 && r.FinishNs >= 0 {
			e2eFirst = append(e2eFirst, float64(r.FinishNs-r.SendNs))
		}
		for k := q; k < 4; k++ {
			if lo, hi := max(r.SendNs, bound(k)), min(done, bound(k+1)); hi > lo {
				area[k] += float64(hi - lo)
			}
		}
	}
	for k := 1; k < 4; k++ {
		if len(ttft[k]) < GrowthMinPerQuarter {
			return g
		}
	}
	g.Judged = true
	for k := range 4 {
		slices.Sort(ttft[k])
		g.TTFTMs[k] = percentileOr0(ttft[k], 50) / 1e6
		g.InFlight[k] = area[k] / float64(bound(k+1)-bound(k))
	}
	slices.Sort(e2eFirst)
	g.FirstE2EMs, g.SendWindowMs = math.Inf(1), float64(span)/1e6
	if len(e2eFirst) > 0 {
		g.FirstE2EMs = Percentile(e2eFirst, 50) / 1e6
	}
	g.InFlightRamp = g.FirstE2EMs > g.SendWindowMs/4
	rising := func(v [4]float64, first, minRise float64) bool {
		ref := max(first, v[1])
		return v[1] < v[2] && v[2] < v[3] && v[3] >= GrowthRatio*ref && v[3]-ref >= minRise
	}
	ttftUp := rising(g.TTFTMs, g.TTFTMs[0], GrowthMinTTFTMs)
	queueUp := false
	if !g.InFlightRamp {
		settled := first + int64(Percentile(e2eFirst, 50))
		queueUp = rising(g.InFlight, inFlightBetween(reqs, settled, bound(1), end), GrowthMinInFlight)
	}
	if !ttftUp && !queueUp {
		return g
	}
	g.Growing = true
	var what string
	switch {
	case ttftUp && queueUp:
		what = "TTFT and the queue were"
	case ttftUp:
		what = "TTFT was"
	default:
		what = "the queue was"
	}
	g.Reason = fmt.Sprintf("%s still growing at the last send: median TTFT by quarter of the sends %.0f → %.0f → %.0f → %.0f ms, requests in flight %.0f → %.0f → %.0f → %.0f",
		what, g.TTFTMs[0], g.TTFTMs[1], g.TTFTMs[2], g.TTFTMs[3], g.InFlight[0], g.InFlight[1], g.InFlight[2], g.InFlight[3])
	return g
}

// inFlightBetween is the time-averaged number of requests in flight (sent,
// not yet finished; a request without a finish counts to end) over
// [from, to), ns; 0 for an empty interval. Rejected and unsent records
// are ignored, as in DetectGrowth.
func inFlightBetween(reqs []RequestRecord, from, to, end int64) float64 {
	if to <= from {
		return 0
	}
	var area float64
	for i := range reqs {
		r := &reqs[i]
		if r.SendNs < 0 || r.Rejected {
			continue
		}
		done := r.FinishNs
		if done < 0 {
			done = end
		}
		if lo, hi := max(r.SendNs, from), min(done, to); hi > lo {
			area += float64(hi - lo)
		}
	}
	return area / float64(to-from)
}

// mulDiv is a × b / c, rounded down, for 0 ≤ a, 0 ≤ b ≤ 4, 0 < c with
// a × b / c < 2^63: the product is kept in 128 bits.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}
