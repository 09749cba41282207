package router

// kv-usage routes to the replica reporting the least KV-cache usage
// (vllm:kv_cache_usage_perc at the last scrape), ties by fewer requests in
// flight from this router, then the lower index. Between scrapes the
// usage does not move: with a long refresh interval the in-flight
// tie-break is all that spreads a burst, which is what a stale metric
// does to a real router. O(log replicas) per request.
//
// Its scorer is llm-d's kv-cache-utilization-scorer: 1 − usage.
func init() {
	Register("kv-usage", func(Config) (Policy, error) { return newLeastBy(kvUsage), nil })
	RegisterScorer("kv-usage", func(Config) Scorer {
		return scoreFunc(func(_ *Request, reps []Replica, s []float64) {
			for i := range reps {
				s[i] = 1 - reps[i].KVUsage
			}
		})
	})
}

func kvUsage(r *Replica) float64 { return r.KVUsage }
