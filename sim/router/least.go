package router

// leastBy routes to the replica with the least key, ties by fewer
// requests in flight, then the lower index. It keeps the replicas in a
// heap: O(log replicas) per request (a routed or finished request moves
// one replica), O(replicas) per scrape when the key is a reported metric.
type leastBy struct {
	key  func(*Replica) float64
	own  bool // key reads only the router's own history (InFlight)
	reps []Replica
	q    *replicaHeap
}

func newLeastBy(key func(*Replica) float64) *leastBy { return &leastBy{key: key} }

func (p *leastBy) less(a, b int) bool {
	ka, kb := p.key(&p.reps[a]), p.key(&p.reps[b])
	if ka != kb {
		return ka < kb
	}
	return fewerInFlight(p.reps, a, b)
}

func (p *leastBy) sync(reps []Replica) {
	p.reps = reps
	if p.q == nil || len(p.q.h) != len(reps) {
		p.q = newReplicaHeap(len(reps), p.less)
	}
}

// ReadsMetrics implements MetricsReader.
func (p *leastBy) ReadsMetrics() bool { return !p.own }

// Pick implements Policy.
func (p *leastBy) Pick(_ *Request, reps []Replica) int {
	p.sync(reps)
	return p.q.top()
}

// Routed implements RoutedHook.
func (p *leastBy) Routed(_ *Request, rep int, reps []Replica) {
	p.sync(reps)
	p.q.fix(rep)
}

// Finished implements FinishedHook.
func (p *leastBy) Finished(_ *Request, rep int, reps []Replica) {
	p.sync(reps)
	p.q.fix(rep)
}

// Scraped implements ScrapedHook.
func (p *leastBy) Scraped(reps []Replica) {
	p.sync(reps)
	p.q.all()
}

// normalizeLow scores each replica by how low x(replica) is among all:
// (max − x) / (max − min), every score 1 when all are equal, as llm-d's
// queue-scorer normalizes the waiting queue.
func normalizeLow(reps []Replica, x func(*Replica) float64, scores []float64) {
	lo, hi := x(&reps[0]), x(&reps[0])
	for i := range reps {
		v := x(&reps[i])
		lo, hi = min(lo, v), max(hi, v)
	}
	for i := range reps {
		if hi == lo {
			scores[i] = 1
		} else {
			scores[i] = (hi - x(&reps[i])) / (hi - lo)
		}
	}
}
