package router

// least-requests routes to the replica with the fewest requests in flight
// from this router (ties: the lower index): the rule Envoy's
// LEAST_REQUEST balancer approximates by sampling two replicas, and the
// load SGLang's router tracks per worker. It reads only its own
// history, which is always current (no scrape). O(log replicas) per
// request.
//
// Its scorer (for the weighted policy) is the in-flight count normalized
// as llm-d's queue-scorer normalizes the waiting queue: (max − x) /
// (max − min), 1 for all when equal.
func init() {
	Register("least-requests", func(Config) (Policy, error) { return &leastBy{key: inFlight, own: true}, nil })
	RegisterScorer("least-requests", func(Config) Scorer { return inFlightScorer{} })
}

// inFlightScorer is least-requests' scorer.
type inFlightScorer struct{}

// Score implements Scorer.
func (inFlightScorer) Score(_ *Request, reps []Replica, s []float64) { normalizeLow(reps, inFlight, s) }

// ReadsMetrics implements MetricsReader: its own history.
func (inFlightScorer) ReadsMetrics() bool { return false }

func inFlight(r *Replica) float64 { return float64(r.InFlight) }

// scoreFunc adapts a function to Scorer.
type scoreFunc func(r *Request, reps []Replica, scores []float64)

// Score implements Scorer.
func (f scoreFunc) Score(r *Request, reps []Replica, scores []float64) { f(r, reps, scores) }
