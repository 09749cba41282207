package router

import (
	"fmt"
	"sort"
	"strings"
)

// DefaultWeights are llm-d's default scheduling profile (its
// inference-scheduling guide's EndpointPickerConfig): prefix-cache-scorer
// 3, queue-scorer 2, kv-cache-utilization-scorer 2.
var DefaultWeights = map[string]float64{"prefix-cache": 3, "queue": 2, "kv-usage": 2}

// weighted scores every replica with each configured scorer and picks the
// highest weighted sum, Σ weight × score, as llm-d's scheduler runs a
// profile's scorers and its max-score picker; ties go to fewer requests in
// flight from this router, then the lower index (llm-d's picker breaks
// ties at random). It reads what its scorers read. O(replicas × scorers)
// per request, plus each scorer's own cost (prefix-cache: O(prompt
// blocks)): a weighted router scores every replica, as llm-d does.
type weighted struct {
	names   []string
	weights []float64
	scorers []Scorer
	total   []float64
	scratch []float64
}

func init() { Register("weighted", newWeighted) }

func newWeighted(c Config) (Policy, error) {
	w := c.Weights
	if len(w) == 0 {
		w = DefaultWeights
	}
	p := &weighted{}
	for name := range w {
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	for _, name := range p.names {
		build := scorers[name]
		if build == nil {
			return nil, fmt.Errorf("unknown scorer %q (allowed: %s)", name, strings.Join(ScorerNames(), ", "))
		}
		if v := w[name]; !(v >= 0 && v <= 1e6) {
			return nil, fmt.Errorf("scorer %s: weight must be in [0, 1e6], got %g", name, v)
		}
		p.weights = append(p.weights, w[name])
		p.scorers = append(p.scorers, build(c))
	}
	return p, nil
}

// Pick implements Policy.
func (p *weighted) Pick(r *Request, reps []Replica) int {
	if len(p.total) != len(reps) {
		p.total, p.scratch = make([]float64, len(reps)), make([]float64, len(reps))
	}
	for i := range p.total {
		p.total[i] = 0
	}
	for k, s := range p.scorers {
		if p.weights[k] == 0 {
			continue
		}
		s.Score(r, reps, p.scratch)
		for i, v := range p.scratch {
			p.total[i] += p.weights[k] * v
		}
	}
	best := 0
	for i := 1; i < len(reps); i++ {
		if p.total[i] > p.total[best] || (p.total[i] == p.total[best] && fewerInFlight(reps, i, best)) {
			best = i
		}
	}
	return best
}

// Routed implements RoutedHook: passed on to the scorers that keep
// history.
func (p *weighted) Routed(r *Request, rep int, reps []Replica) {
	for _, s := range p.scorers {
		if h, ok := s.(RoutedHook); ok {
			h.Routed(r, rep, reps)
		}
	}
}

// Finished implements FinishedHook: passed on to the scorers.
func (p *weighted) Finished(r *Request, rep int, reps []Replica) {
	for _, s := range p.scorers {
		if h, ok := s.(FinishedHook); ok {
			h.Finished(r, rep, reps)
		}
	}
}

// Scraped implements ScrapedHook: passed on to the scorers.
func (p *weighted) Scraped(reps []Replica) {
	for _, s := range p.scorers {
		if h, ok := s.(ScrapedHook); ok {
			h.Scraped(reps)
		}
	}
}

// NeedsSessions implements SessionRouter: a session scorer with a weight.
func (p *weighted) NeedsSessions() bool {
	for k, s := range p.scorers {
		if sr, ok := s.(SessionRouter); ok && sr.NeedsSessions() && p.weights[k] > 0 {
			return true
		}
	}
	return false
}

// ReadsMetrics implements MetricsReader: a scorer with a weight reads
// them.
func (p *weighted) ReadsMetrics() bool {
	for k, s := range p.scorers {
		if p.weights[k] > 0 && ReadsMetrics(s) {
			return true
		}
	}
	return false
}

// NeedsBlocks implements BlockRouter: a prefix scorer with a weight.
func (p *weighted) NeedsBlocks() bool {
	for k, s := range p.scorers {
		if b, ok := s.(BlockRouter); ok && b.NeedsBlocks() && p.weights[k] > 0 {
			return true
		}
	}
	return false
}
