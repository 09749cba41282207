package router

import "math/bits"

// MaxPrefixBlocks is how many leading prompt blocks a router hashes and
// matches (llm-d's prefix plugin: DefaultMaxPrefixBlocks = 256).
const MaxPrefixBlocks = 256

// MinBlockTokens is the smallest block a router hashes: llm-d's prefix
// producer hashes blocks of the server's block size but at least 64
// tokens (its AutoTune default, minBlockSizeTokens = 64), to bound the
// memory of its index.
const MinBlockTokens = 64

// BlockTokens is the router's block size for servers whose KV blocks
// hold engineBlock tokens: max(engineBlock, MinBlockTokens). vLLM's block
// sizes (1, 8, 16, 32) divide 64, so a router block is whole engine
// blocks.
func BlockTokens(engineBlock int) int { return max(engineBlock, MinBlockTokens) }

// prefix-cache routes to the replica holding the longest prefix of the
// request's prompt, ties by fewer requests in flight from this router,
// then the lower index (llm-d's prefix-cache-scorer picks the longest
// match; here the tie goes to the least loaded). "Holding" is what the
// router remembers: the prompt blocks it sent to each replica, in an LRU
// of that replica's KV block count (prefixIndex); it never sees the
// replicas' caches or evictions. Blocks are BlockTokens (64) tokens, as
// llm-d hashes them. With no match anywhere the request goes to the
// replica with the fewest requests in flight. O(prompt blocks) per
// request (at most MaxPrefixBlocks, times ⌈replicas/64⌉ words), plus
// O(log replicas) to place the chosen replica and O(candidates) for ties.
//
// Its scorer is llm-d's prefix-cache-scorer: matched blocks / prompt
// blocks, 0 for a prompt without a full block.
type prefixCache struct {
	x    *prefixIndex
	load *leastBy
	cand []uint64
}

func init() {
	Register("prefix-cache", func(Config) (Policy, error) { return &prefixCache{load: &leastBy{key: zero, own: true}}, nil })
	RegisterScorer("prefix-cache", func(Config) Scorer { return &prefixScorer{} })
}

func zero(*Replica) float64 { return 0 }

func (p *prefixCache) index(reps []Replica) *prefixIndex {
	if p.x == nil {
		p.x = newIndex(reps)
	}
	return p.x
}

func newIndex(reps []Replica) *prefixIndex {
	capacity := make([]int, len(reps))
	for i := range reps {
		capacity[i] = reps[i].KVBlocks
	}
	return newPrefixIndex(capacity)
}

// Pick implements Policy.
func (p *prefixCache) Pick(r *Request, reps []Replica) int {
	matched, cand := p.index(reps).longest(r.Blocks, p.cand)
	p.cand = cand
	if matched == 0 {
		return p.load.Pick(r, reps)
	}
	best := -1
	for w, m := range cand {
		for ; m != 0; m &= m - 1 {
			i := w*64 + bits.TrailingZeros64(m)
			if i < len(reps) && (best < 0 || fewerInFlight(reps, i, best)) {
				best = i
			}
		}
	}
	return best
}

// Routed implements RoutedHook: the replica now holds the prompt's blocks.
func (p *prefixCache) Routed(r *Request, rep int, reps []Replica) {
	p.index(reps).touch(rep, r.Blocks)
	p.load.Routed(r, rep, reps)
}

// Finished implements FinishedHook.
func (p *prefixCache) Finished(r *Request, rep int, reps []Replica) { p.load.Finished(r, rep, reps) }

// prefixScorer is llm-d's prefix-cache-scorer over its own index.
type prefixScorer struct {
	x      *prefixIndex
	counts []int
	cand   []uint64
}

// Score implements Scorer.
func (s *prefixScorer) Score(r *Request, reps []Replica, scores []float64) {
	if s.x == nil {
		s.x, s.counts = newIndex(reps), make([]int, len(reps))
	}
	s.cand = s.x.counts(r.Blocks, s.counts, s.cand)
	for i := range scores {
		scores[i] = 0
		if len(r.Blocks) > 0 {
			scores[i] = float64(s.counts[i]) / float64(len(r.Blocks))
		}
	}
}

// Routed implements RoutedHook.
func (s *prefixScorer) Routed(r *Request, rep int, reps []Replica) {
	if s.x == nil {
		s.x, s.counts = newIndex(reps), make([]int, len(reps))
	}
	s.x.touch(rep, r.Blocks)
}

// NeedsBlocks implements BlockRouter.
func (p *prefixCache) NeedsBlocks() bool { return true }

// ReadsMetrics implements MetricsReader: the prompt and its own history.
func (p *prefixCache) ReadsMetrics() bool { return false }

// ReadsMetrics implements MetricsReader.
func (s *prefixScorer) ReadsMetrics() bool { return false }

// NeedsBlocks implements BlockRouter.
func (s *prefixScorer) NeedsBlocks() bool { return true }
