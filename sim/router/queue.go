package router

// queue routes to the replica reporting the fewest waiting requests
// (vllm:num_requests_waiting at the last scrape), ties by fewer requests
// in flight from this router, then the lower index: llm-d's queue-scorer
// on its own. Between scrapes the waiting counts do not move, so the
// in-flight tie-break spreads a burst. O(log replicas) per request.
//
// Its scorer is llm-d's queue-scorer: (max − waiting) / (max − min), 1
// for all when equal.
func init() {
	Register("queue", func(Config) (Policy, error) { return newLeastBy(waiting), nil })
	RegisterScorer("queue", func(Config) Scorer {
		return scoreFunc(func(_ *Request, reps []Replica, s []float64) { normalizeLow(reps, waiting, s) })
	})
}

func waiting(r *Replica) float64 { return float64(r.Waiting) }
