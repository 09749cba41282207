package router

// roundRobin sends the k-th request to replica k mod N. It reads nothing
// but its own counter (production-stack's roundrobin routing logic,
// Envoy's ROUND_ROBIN). O(1) per request.
type roundRobin struct{ next int }

func init() {
	Register("round-robin", func(Config) (Policy, error) { return &roundRobin{}, nil })
}

// ReadsMetrics implements MetricsReader: only its counter.
func (p *roundRobin) ReadsMetrics() bool { return false }

// Pick implements Policy.
func (p *roundRobin) Pick(_ *Request, reps []Replica) int {
	i := p.next % len(reps)
	p.next++
	return i
}
