package router

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The 3-replica example, worked by hand. The router's history: prompt
// [a1 a2 a3 a4] went to replica 0, [a1 a2 b3] to replica 1, [c1] to
// replica 2. Its own in-flight counts are 5, 3, 2; the last scrape
// reported waiting 0, 3, 1 and KV usage 0.6, 0.2, 0.4. The request R has
// session 7 and prompt blocks [a1 a2 a3 x4]: replica 0 holds 3 of them,
// replica 1 holds 2, replica 2 none.
const (
	a1 uint64 = 0xa1 + iota<<8
	a2
	a3
	a4
	b3
	c1
	x4
	y3
	z1
)

func example() []Replica {
	return []Replica{
		{InFlight: 5, Waiting: 0, Running: 5, KVUsage: 0.6, KVBlocks: 100},
		{InFlight: 3, Waiting: 3, Running: 1, KVUsage: 0.2, KVBlocks: 100},
		{InFlight: 2, Waiting: 1, Running: 4, KVUsage: 0.4, KVBlocks: 100},
	}
}

// withHistory builds policy name and plays the example's history into it.
func withHistory(t *testing.T, name string, cfg Config) (Policy, []Replica) {
	t.Helper()
	cfg.Replicas = 3
	p, err := New(name, cfg)
	require.NoError(t, err)
	reps := example()
	if h, ok := p.(RoutedHook); ok {
		for rep, blocks := range [][]uint64{{a1, a2, a3, a4}, {a1, a2, b3}, {c1}} {
			h.Routed(&Request{ID: rep, Blocks: blocks}, rep, reps)
		}
	}
	if h, ok := p.(ScrapedHook); ok {
		h.Scraped(reps)
	}
	return p, reps
}

func TestEachRouterOnTheExample(t *testing.T) {
	r := &Request{ID: 10, Session: 7, Blocks: []uint64{a1, a2, a3, x4}}
	cases := []struct {
		name   string
		cfg    Config
		req    *Request
		want   int
		reason string
	}{
		{"least-requests", Config{}, r, 2, "in flight 5, 3, 2"},
		{"queue", Config{}, r, 0, "waiting 0, 3, 1"},
		{"kv-usage", Config{}, r, 1, "KV usage 0.6, 0.2, 0.4"},
		{"prefix-cache", Config{}, r, 0, "replica 0 holds 3 leading blocks, replica 1 two"},
		{"prefix-cache", Config{}, &Request{Blocks: []uint64{a1, a2, y3}}, 1, "replicas 0 and 1 hold 2 blocks each: the tie goes to fewer in flight (3 < 5)"},
		{"prefix-cache", Config{}, &Request{Blocks: []uint64{z1}}, 2, "no replica holds z1: fewest in flight"},
		// llm-d's default profile: prefix 3, queue 2, kv 2.
		// prefix scores 3/4, 2/4, 0; queue (3 − w)/3: 1, 0, 2/3;
		// kv 1 − u: 0.4, 0.8, 0.6. Sums: 2.25 + 2 + 0.8 = 5.05;
		// 1.5 + 0 + 1.6 = 3.1; 0 + 4/3 + 1.2 = 2.53.
		{"weighted", Config{}, r, 0, "5.05 > 3.1 > 2.53"},
		// prefix 1, kv 3: 0.75 + 1.2 = 1.95; 0.5 + 2.4 = 2.9; 0 + 1.8.
		{"weighted", Config{Weights: map[string]float64{"prefix-cache": 1, "kv-usage": 3}}, r, 1, "1.95 < 2.9 > 1.8"},
		// least-requests scorer (5 − x)/3: 0, 2/3, 1; kv 0.4, 0.8, 0.6:
		// 0.4, 1.467, 1.6.
		{"weighted", Config{Weights: map[string]float64{"least-requests": 1, "kv-usage": 1}}, r, 2, "0.4 < 1.47 < 1.6"},
	}
	for _, c := range cases {
		t.Run(c.name+" "+c.reason, func(t *testing.T) {
			p, reps := withHistory(t, c.name, c.cfg)
			assert.Equal(t, c.want, p.Pick(c.req, reps), c.reason)
		})
	}
}

// round-robin reads nothing but its counter: 0, 1, 2, 0, … whatever the
// loads.
func TestRoundRobin(t *testing.T) {
	p, reps := withHistory(t, "round-robin", Config{})
	var got []int
	for i := 0; i < 5; i++ {
		got = append(got, p.Pick(&Request{ID: i}, reps))
	}
	assert.Equal(t, []int{0, 1, 2, 0, 1}, got)
}

// session: every request of a session goes to one replica, whatever the
// loads; sessions spread over the replicas (1,000 sessions over 3: each
// replica gets 20–47 % of them with 100 ring points each); a request
// without a session goes to the fewest in flight.
func TestSessionAffinity(t *testing.T) {
	p, reps := withHistory(t, "session", Config{})
	assert.True(t, NeedsSessions(p))
	first := p.Pick(&Request{Session: 7}, reps)
	reps[first].InFlight += 100
	assert.Equal(t, first, p.Pick(&Request{Session: 7, ID: 3}, reps), "same session, same replica")
	count := make([]int, 3)
	for s := 1; s <= 1000; s++ {
		count[p.Pick(&Request{Session: s}, reps)]++
	}
	for i, n := range count {
		assert.True(t, n > 200 && n < 470, "replica %d has %d of 1000 sessions", i, n)
	}
	reps = example()
	assert.Equal(t, 2, p.Pick(&Request{}, reps), "no session: fewest in flight")
}

// llm-d's session-affinity scorer: 1 for the replica that served the
// session's previous request, 0 elsewhere and for a first request.
func TestSessionScorer(t *testing.T) {
	s := scorers["session"](Config{})
	reps := example()
	scores := make([]float64, 3)
	s.Score(&Request{Session: 7}, reps, scores)
	assert.Equal(t, []float64{0, 0, 0}, scores)
	s.(RoutedHook).Routed(&Request{Session: 7}, 2, reps)
	s.Score(&Request{Session: 7}, reps, scores)
	assert.Equal(t, []float64{0, 0, 1}, scores)
	s.Score(&Request{Session: 8}, reps, scores)
	assert.Equal(t, []float64{0, 0, 0}, scores)
}

func TestPrefixScorer(t *testing.T) {
	p, reps := withHistory(t, "weighted", Config{Weights: map[string]float64{"prefix-cache": 1}})
	s := p.(*weighted).scorers[0]
	scores := make([]float64, 3)
	s.Score(&Request{Blocks: []uint64{a1, a2, a3, x4}}, reps, scores)
	assert.Equal(t, []float64{0.75, 0.5, 0}, scores)
	s.Score(&Request{}, reps, scores)
	assert.Equal(t, []float64{0, 0, 0}, scores, "no full block: 0")
}

// The router's memory of a replica is an LRU of its KV blocks, head
// blocks kept longest: with room for 4 blocks, after [a1 a2 a3 a4] then
// [c1] replica 0 has forgotten a4 (the least recent), and a1–a3 still
// match.
func TestPrefixIndexForgetsTailFirst(t *testing.T) {
	x := newPrefixIndex([]int{4, 4})
	x.touch(0, []uint64{a1, a2, a3, a4})
	x.touch(0, []uint64{c1})
	n, cand := x.longest([]uint64{a1, a2, a3, a4}, nil)
	assert.Equal(t, 3, n)
	assert.Equal(t, []uint64{1}, cand)
	x.touch(1, []uint64{a1})
	counts := make([]int, 2)
	x.counts([]uint64{a1, a2, a3, a4}, counts, nil)
	assert.Equal(t, []int{3, 1}, counts)
	assert.Equal(t, int32(-1), x.entries.get(a4), "an entry no replica holds is freed")
	assert.Equal(t, 1, x.nodes.n, "a1's second holder; the others are inline")
	assert.Equal(t, 5, len(x.node)-len(x.freeN))
}

// The heap policies pick what a scan would: the least key, then fewer in
// flight, then the lower index, through random routes, finishes and
// scrapes.
func TestLeastByMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range []string{"least-requests", "queue", "kv-usage"} {
		p, err := New(name, Config{Replicas: 7})
		require.NoError(t, err)
		key := map[string]func(*Replica) float64{"least-requests": inFlight, "queue": waiting, "kv-usage": kvUsage}[name]
		reps := make([]Replica, 7)
		for step := 0; step < 2000; step++ {
			want := 0
			for i := range reps {
				ki, kw := key(&reps[i]), key(&reps[want])
				if ki < kw || (ki == kw && fewerInFlight(reps, i, want)) {
					want = i
				}
			}
			got := p.Pick(&Request{}, reps)
			require.Equal(t, want, got, "%s step %d", name, step)
			switch rng.IntN(3) {
			case 0:
				reps[got].InFlight++
				p.(RoutedHook).Routed(&Request{}, got, reps)
			case 1:
				if i := rng.IntN(7); reps[i].InFlight > 0 {
					reps[i].InFlight--
					p.(FinishedHook).Finished(&Request{}, i, reps)
				}
			case 2:
				for i := range reps {
					reps[i].Waiting, reps[i].KVUsage = rng.IntN(4), float64(rng.IntN(4))/4
				}
				p.(ScrapedHook).Scraped(reps)
			}
		}
	}
}

func TestRegistry(t *testing.T) {
	assert.Equal(t, []string{"kv-usage", "least-requests", "prefix-cache", "queue", "round-robin", "session", "weighted"}, Names())
	_, err := New("random", Config{})
	assert.EqualError(t, err, `unknown router policy "random" (allowed: kv-usage, least-requests, prefix-cache, queue, round-robin, session, weighted)`)
	_, err = New("weighted", Config{Weights: map[string]float64{"cache": 1}})
	assert.EqualError(t, err, `unknown scorer "cache" (allowed: kv-usage, least-requests, prefix-cache, queue, session)`)
	_, err = New("weighted", Config{Weights: map[string]float64{"queue": -1}})
	assert.ErrorContains(t, err, "scorer queue: weight must be in [0, 1e6], got -1")
	p, _ := New("weighted", Config{Weights: map[string]float64{"session": 1}})
	assert.True(t, NeedsSessions(p))
	p, _ = New("weighted", Config{})
	assert.False(t, NeedsSessions(p))
	assert.Panics(t, func() { Register("session", nil) })
}

// Which policies read the replicas' reported metrics: the ones that do
// not (their own history, the session id, the prompt) are never
// refreshed, so they cost what docs/POLICIES.md says per request even
// with --router-metrics-interval-ms 0 (on main every router scraped every
// replica's engines, O(replicas × DP) per request when live, or per
// event with a short interval: 512 replicas at a 1 ns interval, round-robin,
// 15.1 s instead of 2.3 s).
func TestReadsMetrics(t *testing.T) {
	for name, want := range map[string]bool{"round-robin": false, "least-requests": false, "session": false, "prefix-cache": false,
		"queue": true, "kv-usage": true, "weighted": true} {
		p, err := New(name, Config{Replicas: 3})
		require.NoError(t, err)
		assert.Equal(t, want, ReadsMetrics(p), name)
	}
	for w, want := range map[string]bool{"session": false, "prefix-cache": false, "least-requests": false, "queue": true, "kv-usage": true} {
		p, err := New("weighted", Config{Replicas: 3, Weights: map[string]float64{w: 1}})
		require.NoError(t, err)
		assert.Equal(t, want, ReadsMetrics(p), "weighted %s", w)
	}
}

// A weighted router whose metric scorers weigh 0 reads no metrics.
func TestWeightedZeroMetricWeights(t *testing.T) {
	p, err := New("weighted", Config{Replicas: 3, Weights: map[string]float64{"prefix-cache": 1, "queue": 0, "kv-usage": 0}})
	require.NoError(t, err)
	assert.False(t, ReadsMetrics(p))
}
