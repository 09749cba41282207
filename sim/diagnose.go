package sim

import "fmt"

// Diagnose returns notes on what shaped a finished run that a reader of
// the summary could otherwise misread:
//   - the API server was saturated: more than 10 % of the output tokens
//     reached the client merged into a previous SSE chunk, so clients see
//     chunks less often (mean ITL) than the engine makes tokens (mean
//     TPOT); said in the user's terms, with vLLM's --api-server-count;
//   - the load outgrew the deployment: for a finite request rate, the
//     queue or TTFT is still growing at the last send (DetectGrowth, whose
//     verdict Diagnose also stores in res.Growth), so latencies depend on
//     how many requests are sent;
//   - every request failed, and why: refused by the API server (prompt +
//     output tokens over max_model_len) or given up at the client timeout
//     (bench serve only warns that all requests failed);
//   - requests sent that neither finished nor timed out: the run ended
//     with them waiting for KV blocks their engine cannot give (vLLM's
//     null block leaves num_gpu_blocks − 1 usable; vLLM would wait
//     forever).
func Diagnose(res *Result, finiteRate bool) []string {
	var notes []string
	var tokens, chunks int64
	var completed, rejected, timedOut, stuck int
	var tpotSum float64
	var tpotN int
	for i := range res.Requests {
		r := &res.Requests[i]
		if !r.Failed && r.FinishNs >= 0 && r.OutputTokens > 1 {
			tpotSum += r.TPOTNs()
			tpotN++
		}
		tokens += int64(r.OutputTokens)
		if r.FirstTokenNs >= 0 {
			chunks++
		}
		switch {
		case r.Rejected:
			rejected++
		case r.Failed:
			timedOut++
		case r.FinishNs >= 0:
			completed++
		case r.SendNs >= 0:
			stuck++
		}
	}
	if completed == 0 && len(res.Requests) > 0 {
		over := "over max_model_len"
		if rejected > 0 && res.MaxModelLen > 0 {
			over = fmt.Sprintf("over max_model_len %d, the longest %d", res.MaxModelLen, res.LongestRejected)
		}
		notes = append(notes, fmt.Sprintf("every request failed: %d refused by the API server (prompt + output tokens %s, HTTP 400), %d given up at the client timeout",
			rejected, over, timedOut))
	}
	if stuck > 0 {
		what, it := fmt.Sprintf("%d requests sent never finished nor timed out: the run ended with them", stuck), "them"
		if stuck == 1 {
			what, it = "1 request sent never finished nor timed out: the run ended with it", "it"
		}
		notes = append(notes, what+" waiting in an engine whose KV cache cannot hold "+it+
			" (a request needs ⌈(prompt + output tokens) ÷ block_size⌉ blocks and vLLM keeps one of num_gpu_blocks as its null block); vLLM would keep "+it+" waiting forever")
	}
	if res.ITL != nil {
		chunks += res.ITL.Count()
	}
	if merged := tokens - chunks; tokens > 0 && float64(merged) > 0.1*float64(tokens) {
		what := fmt.Sprintf("API server saturated: %.0f %% of output tokens reached clients merged into a previous SSE chunk", 100*float64(merged)/float64(tokens))
		if res.ITL != nil && res.ITL.Count() > 0 && tpotN > 0 {
			what += fmt.Sprintf(", so a streaming client sees a chunk every %.0f ms (mean ITL) although each request gains a token every %.0f ms (mean TPOT)",
				res.ITL.Mean()/1e6, tpotSum/float64(tpotN)/1e6)
		}
		notes = append(notes, what+": the API server process, not the GPU, limits what users see; "+
			"--api-server-count adds processes (vLLM's default: the DP size)")
	}
	if !finiteRate {
		return notes
	}
	res.Growth = DetectGrowth(res.Requests)
	if res.Growth.Growing {
		notes = append(notes, "overloaded: "+res.Growth.Reason+
			"; the deployment does not keep up with this rate, so the figures depend on how many requests are sent")
	}
	return notes
}

// StreamLimit is the most SSE chunks per second the run's API servers can
// stream: each process sends one chunk per Host.APITokenNs (the fitted
// api_token_ns of predictor/calibrated, ~0.132 ms: ~7,574 chunks/s), and
// the primary deployment's processes (--api-server-count per instance,
// times its instances: the decode pool's, or the replicas) stream every
// token. 0 without a host model for it.
func (st *Setup) StreamLimit() (processes int, chunksPerS float64) {
	processes = max(1, st.APIServers) * max(1, st.Instances)
	if st.Host.APITokenNs <= 0 {
		return processes, 0
	}
	return processes, float64(processes) * 1e9 / st.Host.APITokenNs
}

// PeakNote says when bench serve's peak output token throughput
// (max_output_tokens_per_s, res.MaxOutputTokensPerS) is within 5 % of the
// API servers' StreamLimit: bench serve counts chunks, not tokens, so the
// peak then measures the front end's ceiling, not the engine's speed.
// "" otherwise.
func PeakNote(st *Setup, res *Result) string {
	n, limit := st.StreamLimit()
	if limit <= 0 || res.MaxOutputTokensPerS < 0.95*limit {
		return ""
	}
	procs := "the API server's ceiling: 1 API server process streams"
	if n > 1 {
		procs = fmt.Sprintf("the API servers' ceiling: %d API server processes each stream", n)
	}
	return fmt.Sprintf("peak output token throughput (%.0f tok/s) is %s one SSE chunk per %.3f ms (~%.0f chunks/s) and bench serve's peak counts chunks, not tokens, "+
		"so it shows the front end, not the engine; --api-server-count raises the ceiling (vLLM's default: the DP size)",
		res.MaxOutputTokensPerS, procs, st.Host.APITokenNs/1e6, 1e9/st.Host.APITokenNs)
}
