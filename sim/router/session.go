package router

import (
	"sort"

	"frontier/sim/engine"
)

// session routes every request of a session to one replica by consistent
// hashing of the session id (production-stack's session router: a hash
// ring of the endpoints, keyed by the session header), so a conversation's
// turns find their earlier turns in that replica's prefix cache. It reads
// only the request's session id. The ring has RingPoints points per
// replica; a lookup is a binary search, O(log replicas). The positions
// are this simulator's (splitmix64), not production-stack's (uhashring),
// so which replica a given session lands on differs from a real
// deployment; how evenly sessions spread does not.
//
// A request without a session id (in a workload that has sessions) goes
// to the replica with the fewest requests in flight, O(replicas).
//
// Its scorer is llm-d's session-affinity scorer: 1 for the replica that
// served the session's previous request (the router's own history; llm-d
// reads it from a header the response set), 0 for the others and for a
// session's first request. The weighted policy's other scorers place a
// session's first turn.
type session struct{ ring []ringPoint }

type ringPoint struct {
	h   uint64
	rep int
}

// RingPoints is the points per replica on the session hash ring.
const RingPoints = 100

func init() {
	Register("session", func(c Config) (Policy, error) { return newSession(c.Replicas), nil })
	RegisterScorer("session", func(Config) Scorer { return &sessionAffinity{last: map[int]int{}} })
}

func newSession(n int) *session {
	p := &session{ring: make([]ringPoint, 0, n*RingPoints)}
	for rep := 0; rep < n; rep++ {
		for v := 0; v < RingPoints; v++ {
			p.ring = append(p.ring, ringPoint{mix64(uint64(rep)<<20 | uint64(v) | 0x5e55<<40), rep})
		}
	}
	sort.Slice(p.ring, func(i, j int) bool { return p.ring[i].h < p.ring[j].h })
	return p
}

// Pick implements Policy.
func (p *session) Pick(r *Request, reps []Replica) int {
	if r.Session == 0 {
		best := 0
		for i := range reps {
			if fewerInFlight(reps, i, best) {
				best = i
			}
		}
		return best
	}
	h := mix64(uint64(r.Session))
	i := sort.Search(len(p.ring), func(i int) bool { return p.ring[i].h >= h })
	if i == len(p.ring) {
		i = 0
	}
	return p.ring[i].rep
}

// NeedsSessions implements SessionRouter.
func (p *session) NeedsSessions() bool { return true }

// ReadsMetrics implements MetricsReader: the session id (and, without
// one, its own in-flight counts).
func (p *session) ReadsMetrics() bool { return false }

// sessionAffinity remembers where each session's last request went.
type sessionAffinity struct{ last map[int]int }

// Score implements Scorer.
func (s *sessionAffinity) Score(r *Request, reps []Replica, scores []float64) {
	rep, ok := s.last[r.Session]
	for i := range scores {
		scores[i] = 0
		if ok && r.Session != 0 && i == rep {
			scores[i] = 1
		}
	}
}

// Routed implements RoutedHook.
func (s *sessionAffinity) Routed(r *Request, rep int, _ []Replica) {
	if r.Session != 0 {
		s.last[r.Session] = rep
	}
}

// NeedsSessions implements SessionRouter.
func (s *sessionAffinity) NeedsSessions() bool { return true }

// ReadsMetrics implements MetricsReader: its own history.
func (s *sessionAffinity) ReadsMetrics() bool { return false }

// mix64 is the engine's splitmix64 finalizer.
func mix64(x uint64) uint64 { return engine.Mix64(x) }
