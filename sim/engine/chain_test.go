package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// indexHits is computedBlocks' plain reference: r's full blocks looked
// up in the prefix cache's index one by one, up to the first miss,
// leaving at least one token to compute.
func indexHits(s *Scheduler, r *Request) []int32 {
	hit := []int32{}
	if !s.cfg.EnablePrefixCaching {
		return hit
	}
	bs := s.cfg.BlockSize
	for i := 0; i < (r.known()-1)/bs; i++ {
		b := s.Pool.cached.get(r.blockHash(i, bs))
		if b < 0 {
			break
		}
		hit = append(hit, b)
	}
	return hit
}

// Random schedulers whose requests repeat a few prompts (so their memo
// chains are used), in tiny KV caches (evictions, preemptions) with small
// token budgets (chunked prefills: two requests computing one prompt at
// once leave duplicate blocks): before every schedule the waiting head's
// cache hits from its prompt's chain (touchChain) are the index's, and
// undoing them (Untouch) leaves the pool as it was.
func TestChainHitsAreTheIndexHits(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 15))
	chained, dups, checked := 0, 0, 0
	for trial := 0; trial < 40; trial++ {
		c := cfg(16+rng.IntN(100), 1+rng.IntN(6), 12+rng.IntN(40), true)
		c.MaxModelLen = (c.NumBlocks - 1) * c.BlockSize
		c.Policy = []Policy{FCFS, Priority, SJF}[trial%3]
		s := NewScheduler(c)
		var all []*Request
		lens := []int{16*(1+rng.IntN(4)) + rng.IntN(2), 16 * (2 + rng.IntN(6)), 40 + rng.IntN(90)}
		add := func() {
			r := &Request{ID: len(all), PromptTokens: min(lens[rng.IntN(len(lens))], c.MaxModelLen/2),
				MaxTokens: 1 + rng.IntN(30), PrefixKey: uint64(1 + rng.IntN(2)), PrefixTokens: 16 * rng.IntN(2),
				ContentKey: uint64(100 + rng.IntN(3)), Priority: rng.IntN(3), HoldKV: rng.IntN(8) == 0}
			r.PrefixTokens = min(r.PrefixTokens, r.PromptTokens)
			all = append(all, r)
			s.Add(r)
		}
		for i := 0; i < 4; i++ {
			add()
		}
		async := trial%2 == 0
		var steps [2]Step
		var prev *Step
		for k := 0; k < 400; k++ {
			if rng.IntN(3) == 0 {
				add()
			}
			if s.numWaiting > 0 {
				if r := s.waiting.Peek(); r.NumComputed == 0 {
					got, touched := s.computedBlocks(r)
					got = append([]int32{}, got...)
					chained += touched
					s.Pool.Untouch(got[:touched])
					requirePoolHolds(t, s.Pool, all, "untouch")
					require.Equal(t, indexHits(s, r), got, "trial %d step %d request %d", trial, k, r.ID)
					checked++
				}
			}
			st := &steps[k%2]
			s.Schedule(st)
			if !async {
				prev = st
			}
			if prev != nil {
				s.Update(prev, nil)
			}
			prev = st
			releaseHeld(s, all, rng)
			if rng.IntN(9) == 0 {
				s.Abort(all[rng.IntN(len(all))])
			}
		}
		requirePoolHolds(t, s.Pool, all, "end")
		for b, m := range s.Pool.meta {
			if s.Pool.hash[b] != 0 && m.refCnt&dupRef != 0 {
				dups++
			}
		}
	}
	t.Logf("lookups %d, hits from chains %d, duplicate blocks at the ends %d", checked, chained, dups)
	require.Positive(t, chained)
	require.Positive(t, dups)
}
