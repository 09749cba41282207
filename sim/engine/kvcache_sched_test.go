package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// requirePoolHolds checks the pool against the requests that hold blocks:
// each block's reference count is its holders, no block is both free and
// held, the free count is the blocks no one holds (null block aside), the
// ring's counts are exact, and every indexed hash names a block that holds
// it (an evicted block's hash is gone from the index).
func requirePoolHolds(t *testing.T, p *BlockPool, holders []*Request, where string) {
	t.Helper()
	n := p.NumBlocks()
	held := make([]int, n)
	for _, r := range holders {
		for _, b := range r.Blocks {
			require.NotZero(t, b, "%s: request %d holds the null block", where, r.ID)
			held[b]++
		}
	}
	lazy := make([]int, n) // a lazy entry's block keeps refCnt 1
	for seq := p.qhead; seq != p.qtail; seq++ {
		if e := p.ring[seq&uint32(len(p.ring)-1)]; e >= int32(n) {
			seq += uint32(e) - uint32(n) // a run of stale entries (reviveRun)
		} else if e < -1 {
			lazy[^e]++
		} else if p.qtail-seq <= p.lazy {
			lazy[e]++ // a plain lazy entry
		}
	}
	free := 0
	for b := 1; b < n; b++ {
		require.Equal(t, held[b]+lazy[b], int(metaOf(p, b).refCnt&refMask), "%s: block %d", where, b)
		require.True(t, metaOf(p, b).refCnt&dupRef == 0 || hashOf(p, b) != 0, "%s: block %d marked a duplicate without a hash", where, b)
		require.True(t, lazy[b] == 0 || held[b] == 0 && lazy[b] == 1 && hashOf(p, b) == 0, "%s: lazy block %d", where, b)
		if held[b] == 0 {
			free++
		}
	}
	require.Equal(t, free, p.NumFree(), where)
	live, hashed := 0, 0
	for seq := p.qhead; seq != p.qtail; seq++ {
		if b := p.ring[seq&uint32(len(p.ring)-1)]; b >= int32(n) {
			seq += uint32(b) - uint32(n)
		} else if b < -1 || p.qtail-seq <= p.lazy {
			live++ // a lazy entry (checked above)
		} else if b >= 0 {
			m := metaOf(p, b)
			require.True(t, m.refCnt&refMask == 0 && m.pos == seq, "%s: entry %d of block %d is live", where, seq, b)
			live++
			if hashOf(p, b) != 0 {
				hashed++
			}
		}
	}
	require.Equal(t, free, live+n-int(p.fresh), "%s: free blocks in the queue", where)
	require.Equal(t, hashed, p.freeHashed, where)
	requireStaleCount(t, p)
	for _, s := range p.cached.slots {
		if h := s.key(); h != 0 {
			require.Equal(t, h, hashOf(p, s.val), "%s: index names block %d for %x", where, s.val, h)
			require.Zero(t, metaOf(p, s.val).refCnt&dupRef, "%s: index names block %d, marked a duplicate", where, s.val)
		}
	}
}

// Random schedulers with tiny KV caches (preemption), shared prefixes,
// repeated prompts, conversations whose next turn repeats the last one's
// output, aborts and held KV (a prefill instance's), under each policy
// and with prefix caching on and off: the pool matches the requests'
// blocks after every schedule, update and abort.
func TestSchedulerPoolInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	preempted, cached, evictions := 0, 0, int64(0)
	for trial := 0; trial < 24; trial++ {
		c := cfg(64+rng.IntN(200), 1+rng.IntN(8), 6+rng.IntN(40), trial%3 != 2)
		c.MaxModelLen = (c.NumBlocks - 1) * c.BlockSize
		c.Policy = []Policy{FCFS, Priority, SJF}[trial%3]
		s := NewScheduler(c)
		var all []*Request
		id := 0
		add := func() {
			r := &Request{ID: id, PromptTokens: 1 + rng.IntN(c.MaxModelLen/2), MaxTokens: 1 + rng.IntN(40),
				PrefixKey: uint64(1 + rng.IntN(3)), ContentKey: uint64(100 + rng.IntN(4)), Priority: rng.IntN(3),
				UniquePrompt: rng.IntN(3) == 0, HoldKV: rng.IntN(6) == 0}
			r.PrefixTokens = rng.IntN(r.PromptTokens + 1)
			if r.UniquePrompt {
				r.ContentKey = uint64(1000 + id)
			}
			if len(all) > 0 && rng.IntN(3) == 0 {
				// The next turn of an earlier request: its prompt and
				// output, then a new message.
				prev := all[rng.IntN(len(all))]
				prev.OutputKey = uint64(5000 + prev.ID)
				rep := prev.PromptTokens + prev.MaxTokens
				prev.ReusedTokens = rep
				if rep+8 < c.MaxModelLen/2 {
					r.Segments = []Segment{{prev.PrefixKey, prev.PrefixTokens}, {prev.ContentKey, prev.PromptTokens},
						{prev.OutputKey, rep}, {uint64(9000 + id), rep + 8}}
					r.PromptTokens, r.PrefixTokens, r.UniquePrompt = rep+8, 0, false
				}
			}
			if r.PromptTokens+r.MaxTokens > c.MaxModelLen {
				r.MaxTokens = c.MaxModelLen - r.PromptTokens
			}
			id++
			all = append(all, r)
			s.Add(r)
		}
		for i := 0; i < 6; i++ {
			add()
		}
		async := trial%2 == 0 // schedule a step before the last one's update
		var steps [2]Step
		var prev *Step
		for k := 0; k < 600; k++ {
			st := &steps[k%2]
			if rng.IntN(4) == 0 {
				add()
			}
			s.Schedule(st)
			requirePoolHolds(t, s.Pool, all, "schedule")
			if !async {
				prev = st
			}
			if prev != nil {
				s.Update(prev, nil)
				requirePoolHolds(t, s.Pool, all, "update")
			}
			prev = st
			releaseHeld(s, all, rng)
			if rng.IntN(5) == 0 {
				s.Abort(all[rng.IntN(len(all))])
				requirePoolHolds(t, s.Pool, all, "abort")
			}
		}
		for _, r := range all {
			preempted += r.Preemptions
			cached += r.CachedTokens
		}
		evictions += s.Pool.Evictions
	}
	t.Logf("preemptions %d, cached tokens %d, evictions %d", preempted, cached, evictions)
}

// releaseHeld releases, each with probability 1/3, the KV that finished
// HoldKV requests keep (a prefill instance's transfer done).
func releaseHeld(s *Scheduler, all []*Request, rng *rand.Rand) {
	for _, r := range all {
		if r.Status == Finished && r.HoldKV && len(r.Blocks) > 0 && rng.IntN(3) == 0 {
			s.Release(r)
		}
	}
}
