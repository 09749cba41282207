package sim

import (
	"fmt"
	"slices"
)

// Diagnose returns notes on what shaped a finished run that a reader of
// the summary could otherwise misread:
//   - the API server was saturated: more than 10 % of the output tokens
//     reached the client merged into a previous SSE chunk (ITL then runs
//     above TPOT; vLLM's --api-server-count adds processes);
//   - the load outgrew the deployment: for a finite request rate, the
//     median TTFT of the last quarter of requests (by send time) is over
//     twice the first quarter's and at least 0.5 s longer, so latencies
//     depend on how many requests are sent.
func Diagnose(res *Result, finiteRate bool) []string {
	var notes []string
	var tokens, chunks int64
	for i := range res.Requests {
		r := &res.Requests[i]
		tokens += int64(r.OutputTokens)
		if r.FirstTokenNs >= 0 {
			chunks++
		}
	}
	if res.ITL != nil {
		chunks += res.ITL.Count()
	}
	if merged := tokens - chunks; tokens > 0 && float64(merged) > 0.1*float64(tokens) {
		notes = append(notes, fmt.Sprintf("API server saturated: %.0f %% of output tokens left in merged SSE chunks, so ITL runs above TPOT; "+
			"--api-server-count adds API server processes (vLLM's default: the DP size)", 100*float64(merged)/float64(tokens)))
	}
	if !finiteRate {
		return notes
	}
	type sent struct{ send, ttft int64 }
	var ok []sent
	for i := range res.Requests {
		r := &res.Requests[i]
		if !r.Failed && r.FinishNs >= 0 && r.FirstTokenNs >= 0 && r.SendNs >= 0 {
			ok = append(ok, sent{r.SendNs, r.TTFTNs()})
		}
	}
	if len(ok) < 40 {
		return notes
	}
	slices.SortFunc(ok, func(a, b sent) int { return int(a.send - b.send) })
	q := len(ok) / 4
	median := func(xs []sent) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			v[i] = float64(x.ttft)
		}
		slices.Sort(v)
		return Percentile(v, 50)
	}
	first, last := median(ok[:q]), median(ok[len(ok)-q:])
	if last > 2*first && last-first >= 0.5e9 {
		notes = append(notes, fmt.Sprintf("overloaded: median TTFT grew from %.0f ms (first quarter of requests) to %.0f ms (last quarter); "+
			"queues grew all run, so the figures depend on how many requests are sent", first/1e6, last/1e6))
	}
	return notes
}
