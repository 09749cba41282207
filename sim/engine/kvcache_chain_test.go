package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A scheduler whose prompts' next requests take their chainRuns in one
// pass (reviveRun) steps exactly as one taking every block one by one:
// random runs with few prompts repeated under shared prefixes, small
// pools (evictions reach runs, the ring grows over them), budgets that
// refuse admissions after their hits were taken (Untouch), aborts and
// held KV, compared after every schedule, update and abort: the steps,
// every block's state, the free queue's counts, head and tail, and its
// entries (a run of stale entries read as the −1s it stands for).
// Broken on purpose it fails: without the head's bound (an entry the
// head passed taken), without the entry check, with a run's length one
// more than it is. (Without the epoch check it passes: a grown ring
// naming, at a recorded position, the block the chain names there is
// not met here.)
func TestChainRunsArePerBlock(t *testing.T) {
	runs := 0
	for trial := 0; trial < 40; trial++ {
		want := driveChains(t, trial, true, nil)
		got := driveChains(t, trial, false, &runs)
		require.Equal(t, len(want), len(got), "trial %d", trial)
		for i := range want {
			require.Equal(t, want[i], got[i], "trial %d, snapshot %d", trial, i)
		}
	}
	t.Logf("runs of stale entries seen %d", runs)
	require.Greater(t, runs, 500)
}

// driveChains runs trial's random scheduler and returns its snapshots
// (chainSnapshot) after every operation; it counts the runs of stale
// entries seen in the ring.
func driveChains(t *testing.T, trial int, perBlock bool, runs *int) []string {
	rng := rand.New(rand.NewPCG(uint64(trial), 77))
	c := cfg(32+rng.IntN(400), 1+rng.IntN(12), 24+rng.IntN(120), true)
	c.BlockSize = []int{1, 2, 4, 16}[trial%4]
	c.MaxModelLen = (c.NumBlocks - 1) * c.BlockSize
	s := NewScheduler(c)
	s.Pool.perBlock = perBlock
	var all []*Request
	var snaps []string
	snap := func(what string) {
		snaps = append(snaps, what+" "+chainSnapshot(s.Pool))
		if runs != nil {
			p := s.Pool
			for seq := p.qhead; seq != p.qtail; seq++ {
				if e := p.ring[seq&uint32(len(p.ring)-1)]; e >= int32(p.numBlocks) {
					*runs++
					seq += uint32(e) - uint32(p.numBlocks)
				}
			}
		}
	}
	prompts := 1 + rng.IntN(5)
	for k := 0; k < 500; k++ {
		if rng.IntN(3) == 0 || len(all) < 3 {
			q := rng.IntN(prompts)
			r := &Request{ID: len(all), PromptTokens: 8 + (q*37)%(c.MaxModelLen/2), MaxTokens: 1 + rng.IntN(20),
				PrefixKey: uint64(1 + q%2), ContentKey: uint64(100 + q), HoldKV: rng.IntN(8) == 0}
			r.PromptTokens = min(r.PromptTokens, c.MaxModelLen/2)
			r.PrefixTokens = r.PromptTokens / (1 + q%3)
			r.MaxTokens = min(r.MaxTokens, c.MaxModelLen-r.PromptTokens)
			all = append(all, r)
			s.Add(r)
		}
		var st Step
		s.Schedule(&st)
		snap(fmt.Sprint("schedule ", stepTokens(&st)))
		s.Update(&st, nil)
		snap("update")
		releaseHeld(s, all, rng)
		if rng.IntN(6) == 0 {
			s.Abort(all[rng.IntN(len(all))])
			snap("abort")
		}
	}
	requirePoolHolds(t, s.Pool, all, "end")
	return snaps
}

// chainSnapshot is p's state: every block's, the counts, head and tail,
// and the free queue's entries (a run of stale entries as its −1s).
func chainSnapshot(p *BlockPool) string {
	var ring []int32
	for seq := p.qhead; seq != p.qtail; seq++ {
		e := p.ring[seq&uint32(len(p.ring)-1)]
		if e >= int32(p.numBlocks) {
			for i := int32(0); i <= e-int32(p.numBlocks); i++ {
				ring = append(ring, -1)
			}
			seq += uint32(e) - uint32(p.numBlocks)
			continue
		}
		ring = append(ring, e)
	}
	return fmt.Sprint(p.meta, p.hash, p.numFree, p.stale, p.freeHashed, p.fresh, p.lazy, p.Evictions, p.qhead, p.qtail, len(p.ring), ring)
}
