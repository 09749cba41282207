package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCohortMatchesSchedulingEachRequest drives two schedulers through the
// same random arrivals, aborts and samples, one with the decode cohort
// and one without, with and without lag (async scheduling), small pools
// that preempt, prefix caching, the priority policy, chunked prefills
// and max_model_len cutting requests short, and requires the same steps
// (every count, and the items: the cohort's implicit items are the
// first running requests' plain decodes), the same finished requests in
// the same order, the same pool, and, whenever the cohort is dissolved
// (at random times and at the end), the same counts on every request.
func TestCohortMatchesSchedulingEachRequest(t *testing.T) {
	members := 0
	for seed := uint64(0); seed < 300; seed++ {
		members += cohortCase(t, seed)
	}
	t.Logf("%d implicit items", members)
	require.Greater(t, members, 1000000)
}

// cohortCase runs one random case and returns the implicit items it
// scheduled.
func cohortCase(t *testing.T, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 7))
	bs := []int{16, 16, 1, 2, 4, 32, 24}[rng.IntN(7)] // (24: a block size no power of two)
	c := Config{
		MaxNumSeqs: 2 + rng.IntN(40), MaxNumBatchedTokens: 8 + rng.IntN(600), MaxModelLen: 64 + rng.IntN(2000),
		BlockSize: bs, NumBlocks: 4 + rng.IntN(3000/bs+40), EnablePrefixCaching: rng.IntN(2) == 0,
	}
	if rng.IntN(4) == 0 {
		c.LongPrefillTokenThreshold = 1 + rng.IntN(200)
	}
	if rng.IntN(4) == 0 {
		c.Policy = Priority
	}
	lag := rng.IntN(2)
	name := fmt.Sprintf("seed %d %+v lag %d", seed, c, lag)
	eager, lazy := NewScheduler(c), NewScheduler(c)
	lazy.EnableCohort(lag, nil, nil)
	var reqsA, reqsB []*Request
	nreq := 10 + rng.IntN(150)
	for i := 0; i < nreq; i++ {
		r := Request{ID: i, PromptTokens: 1 + rng.IntN(700), MaxTokens: 1 + rng.IntN(400), ContentKey: uint64(rng.IntN(5)),
			PrefixKey: uint64(rng.IntN(3)), PrefixTokens: rng.IntN(100), UniquePrompt: rng.IntN(2) == 0, Priority: rng.IntN(3)}
		a, b := r, r
		reqsA, reqsB = append(reqsA, &a), append(reqsB, &b)
	}
	next, implicit := 0, 0
	var curA, curB, nextA, nextB *Step
	newStep := func() (*Step, *Step) { return &Step{}, &Step{} }
	sample := func(a, b *Step, cycle int) {
		da := eager.Update(a, nil)
		db := lazy.Update(b, nil)
		if !slices.Equal(ids(da), ids(db)) || eager.Pool.NumFree() != lazy.Pool.NumFree() || eager.Pool.Evictions != lazy.Pool.Evictions {
			require.Equal(t, ids(da), ids(db), "%s cycle %d: finished", name, cycle)
			require.Equal(t, eager.Pool.NumFree(), lazy.Pool.NumFree(), "%s cycle %d", name, cycle)
			require.Equal(t, eager.Pool.Evictions, lazy.Pool.Evictions, "%s cycle %d", name, cycle)
		}
		// Each member's CohortIndex is its place in the running list,
		// whichever way the list was compacted (compactRunning: the
		// cohort's base moved, or every coIdx written).
		for i, r := range lazy.Cohort() {
			if r.CohortIndex() != i {
				require.Equal(t, i, r.CohortIndex(), "%s cycle %d: member %d", name, cycle, r.ID)
			}
		}
	}
	schedule := func(cycle int) (*Step, *Step) {
		a, b := newStep()
		eager.Schedule(a)
		lazy.Schedule(b)
		implicit += b.Cohort
		requireSameStep(t, name, cycle, a, b, lazy)
		return a, b
	}
	for cycle := 0; cycle < 5000; cycle++ {
		for k := rng.IntN(3); k > 0 && next < nreq && rng.IntN(3) == 0; k-- {
			eager.Add(reqsA[next])
			lazy.Add(reqsB[next])
			next++
		}
		if rng.IntN(40) == 0 && next > 0 {
			i := rng.IntN(next)
			if eager.Abort(reqsA[i]) != lazy.Abort(reqsB[i]) {
				require.Fail(t, "abort differs", name)
			}
		}
		if rng.IntN(60) == 0 {
			lazy.Dissolve()
			requireSameRequests(t, fmt.Sprintf("%s cycle %d dissolved", name, cycle), reqsA[:next], reqsB[:next])
		}
		if lag == 0 {
			a, b := schedule(cycle)
			if a.NumItems() > 0 {
				sample(a, b, cycle)
			}
		} else {
			// As a core with async scheduling: the next step is scheduled
			// when the current one starts, then the current one is sampled.
			if curA == nil {
				curA, curB = schedule(cycle)
				if curA.NumItems() == 0 {
					curA, curB = nil, nil
					continue
				}
			}
			nextA, nextB = schedule(cycle)
			sample(curA, curB, cycle)
			curA, curB = nextA, nextB
			if curA.NumItems() == 0 {
				curA, curB = nil, nil
			}
		}
		if next == nreq && !eager.HasWork() && curA == nil {
			break
		}
	}
	lazy.Dissolve()
	requireSameRequests(t, name+" end", reqsA, reqsB)
	return implicit
}

func ids(rs []*Request) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// requireSameStep compares an eager step a with the same step b scheduled
// with the cohort.
func requireSameStep(t *testing.T, name string, cycle int, a, b *Step, lazy *Scheduler) {
	ca, cb := *a, *b
	ca.Items, cb.Items, ca.cycle, cb.cycle, ca.Cohort, cb.Cohort = nil, nil, 0, 0, 0, 0
	if sameCounts(&ca, &cb) && a.NumItems() == b.NumItems() && sameItems(a.Items[b.Cohort:], b.Items) && cycle%8 != 0 {
		return // every 8th step, and on a difference, the implicit items too
	}
	t.Helper()
	name = fmt.Sprintf("%s cycle %d", name, cycle)
	require.Equal(t, ca, cb, name)
	require.Equal(t, a.NumItems(), b.NumItems(), name)
	var members []*Request // the members scheduled: async leavers are still listed
	for _, r := range lazy.Cohort() {
		if r.coFirst <= b.cycle && b.cycle <= r.coLast {
			members = append(members, r)
		}
	}
	require.Len(t, members, b.Cohort, name)
	for i := 0; i < b.Cohort; i++ {
		it := a.Items[i]
		require.Equal(t, members[i].ID, it.Req.ID, "%s: implicit item %d", name, i)
		require.True(t, it.NumNew == 1 && it.Decode && it.Samples, "%s: implicit item %d %+v", name, i, it)
	}
	for i, it := range b.Items {
		w := a.Items[b.Cohort+i]
		require.Equal(t, [5]any{w.Req.ID, w.NumNew, w.Computed, w.Decode, w.Samples},
			[5]any{it.Req.ID, it.NumNew, it.Computed, it.Decode, it.Samples}, "%s: item %d", name, i)
	}
}

func sameCounts(a, b *Step) bool {
	return a.NumTokens == b.NumTokens && a.NumPrefill == b.NumPrefill && a.NumDecode == b.NumDecode &&
		a.NumPreempted == b.NumPreempted && a.DecodeCtxSum == b.DecodeCtxSum && a.NumSampled == b.NumSampled &&
		a.PrefillReqs == b.PrefillReqs && a.KVBlocksUsed == b.KVBlocksUsed && a.NumRunning == b.NumRunning &&
		a.NumWaiting == b.NumWaiting && a.PrefixQueries == b.PrefixQueries && a.PrefixHits == b.PrefixHits &&
		a.ScheduledNs == b.ScheduledNs
}

func sameItems(a, b []Scheduled) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Req.ID != y.Req.ID || x.NumNew != y.NumNew || x.Computed != y.Computed || x.Decode != y.Decode || x.Samples != y.Samples {
			return false
		}
	}
	return true
}

func requireSameRequests(t *testing.T, name string, a, b []*Request) {
	for i := range a {
		x, y := a[i], b[i]
		if x.Status == y.Status && x.NumComputed == y.NumComputed && x.NumOutput == y.NumOutput && x.Pending == y.Pending &&
			slices.Equal(x.Blocks, y.Blocks) && x.numHashed == y.numHashed && x.Preemptions == y.Preemptions && x.CachedTokens == y.CachedTokens {
			continue
		}
		t.Helper()
		require.Equal(t,
			[]any{x.Status, x.NumComputed, x.NumOutput, x.Pending, x.Blocks, x.numHashed, x.Preemptions, x.CachedTokens},
			[]any{y.Status, y.NumComputed, y.NumOutput, y.Pending, y.Blocks, y.numHashed, y.Preemptions, y.CachedTokens},
			"%s: request %d", name, x.ID)
	}
}

// TestCacheHeldBlocksHoldOneReference runs random scheduling cases
// (cohortCase: preemptions, prefix caching, chunked prefills, aborts,
// the priority policy) with cacheHeld checking that every block it
// indexes is held by exactly one request and marked no duplicate, the
// state it writes without reading.
func TestCacheHeldBlocksHoldOneReference(t *testing.T) {
	checkCacheHeld = true
	defer func() { checkCacheHeld = false }()
	for seed := uint64(0); seed < 60; seed++ {
		cohortCase(t, seed)
	}
}
