package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run schedules until every request added has finished.
func runAll(t *testing.T, s *Scheduler, reqs ...*Request) {
	t.Helper()
	for _, r := range reqs {
		s.Add(r)
	}
	var st Step
	for i := 0; s.HasWork(); i++ {
		require.Less(t, i, 10000, "scheduler made no progress")
		s.Schedule(&st)
		s.Update(&st, nil)
	}
}

// A prompt stated as Segments hashes as the same prompt stated as a
// group prefix plus content: the two forms name the same tokens.
func TestSegmentsMatchPrefixForm(t *testing.T) {
	legacy := &Request{PromptTokens: 70, MaxTokens: 4, PrefixKey: 3, PrefixTokens: 20, ContentKey: 7}
	segs := &Request{PromptTokens: 70, MaxTokens: 4, Segments: []Segment{{3, 20}, {7, 70}}, ContentKey: 99}
	for i := 0; i < 4; i++ { // full prompt blocks, the one across the prefix boundary included
		assert.Equal(t, legacy.blockHash(i, 16), segs.blockHash(i, 16), "block %d", i)
	}
	other := &Request{PromptTokens: 70, MaxTokens: 4, Segments: []Segment{{3, 20}, {8, 70}}}
	assert.Equal(t, legacy.blockHash(0, 16), other.blockHash(0, 16), "inside the shared prefix")
	assert.NotEqual(t, legacy.blockHash(1, 16), other.blockHash(1, 16), "the block spanning prefix and content differs")
}

// Worked by hand (block size 16): turn 1 is a 40-token prompt (stream 1)
// generating 20 tokens (stream 5), followed by a turn whose prompt
// repeats all of it. Turn 1 computes KV for 40 + 20 − 1 = 59 tokens (its
// last sampled token is never fed back), so 3 full blocks (48 tokens) are
// cached, the third holding generated tokens 40..47. Turn 2 (prompt =
// turn 1's 40 + its 20 outputs + 25 new tokens = 85) hits those 3 blocks:
// 48 cached tokens, of which 8 were generated.
func TestNextTurnReusesGeneratedBlocks(t *testing.T) {
	for _, async := range []bool{false, true} {
		s := NewScheduler(cfg(256, 4, 50, true))
		t1 := &Request{ID: 0, PromptTokens: 40, MaxTokens: 20, Segments: []Segment{{1, 40}}, OutputKey: 5,
			UniquePrompt: true, ReusedTokens: 60}
		if async {
			// Placeholders make no difference here: block 2 fills at token 47,
			// long before the last step.
			runAsync(t, s, t1)
		} else {
			runAll(t, s, t1)
		}
		t2 := &Request{ID: 1, PromptTokens: 85, MaxTokens: 1, Segments: []Segment{{1, 40}, {5, 60}, {9, 85}}, UniquePrompt: true}
		runAll(t, s, t2)
		assert.Equal(t, 48, t2.CachedTokens, "async=%v", async)
	}
	// Without ReusedTokens, turn 1 (a unique prompt no one was said to
	// repeat) indexes none of its blocks, so the next turn hits nothing:
	// ReusedTokens is what makes a turn's blocks reusable.
	s := NewScheduler(cfg(256, 4, 50, true))
	t1 := &Request{ID: 0, PromptTokens: 40, MaxTokens: 20, Segments: []Segment{{1, 40}}, OutputKey: 5, UniquePrompt: true}
	runAll(t, s, t1)
	t2 := &Request{ID: 1, PromptTokens: 85, MaxTokens: 1, Segments: []Segment{{1, 40}, {5, 60}, {9, 85}}, UniquePrompt: true}
	runAll(t, s, t2)
	assert.Equal(t, 0, t2.CachedTokens)
}

// runAsync drives the scheduler as the async engine core does: step k+1 is
// scheduled (with placeholders) before step k's tokens are applied.
func runAsync(t *testing.T, s *Scheduler, reqs ...*Request) {
	t.Helper()
	for _, r := range reqs {
		s.Add(r)
	}
	var cur, next Step
	s.Schedule(&cur)
	for i := 0; len(cur.Items) > 0; i++ {
		require.Less(t, i, 10000)
		s.Schedule(&next)
		s.Update(&cur, nil)
		cur, next = next, cur
	}
}

// A reply whose last full block ends exactly at its last token: that
// token has no KV, so the block is not complete and the next turn cannot
// hit it. Turn 1: 40 prompt + 24 outputs = 64 tokens, KV for 63: blocks
// 0..2 (48 tokens) cached, block 3 not.
func TestLastSampledTokenHasNoKV(t *testing.T) {
	s := NewScheduler(cfg(256, 4, 50, true))
	t1 := &Request{ID: 0, PromptTokens: 40, MaxTokens: 24, Segments: []Segment{{1, 40}}, OutputKey: 5, UniquePrompt: true, ReusedTokens: 64}
	runAll(t, s, t1)
	t2 := &Request{ID: 1, PromptTokens: 80, MaxTokens: 1, Segments: []Segment{{1, 40}, {5, 64}, {9, 80}}, UniquePrompt: true}
	runAll(t, s, t2)
	assert.Equal(t, 48, t2.CachedTokens)
}

// A turn that inherits the previous turn's hashes gets the hashes it
// would have computed: identical tokens, identical chained hashes, across
// the prompt/output boundary too. Another block size recomputes.
func TestInheritHashes(t *testing.T) {
	s := NewScheduler(cfg(256, 4, 50, true))
	t1 := &Request{ID: 0, PromptTokens: 40, MaxTokens: 20, Segments: []Segment{{1, 40}}, OutputKey: 5, UniquePrompt: true, ReusedTokens: 60}
	runAll(t, s, t1)
	require.Len(t, t1.hashes, 3, "full blocks of the 59 tokens with KV")
	next := func() *Request {
		return &Request{ID: 1, PromptTokens: 85, MaxTokens: 1, Segments: []Segment{{1, 40}, {5, 60}, {9, 85}}, UniquePrompt: true}
	}
	fresh, inherited := next(), next()
	inherited.InheritHashes(t1, 60)
	require.Len(t, inherited.hashes, 3)
	for i := 4; i >= 0; i-- {
		assert.Equal(t, fresh.blockHash(i, 16), inherited.blockHash(i, 16), "block %d", i)
	}
	assert.Equal(t, uint64(0), t1.hashes[:4][3], "appending to the inherited hashes leaves turn 1's array alone")
	other := next()
	other.InheritHashes(t1, 60)
	assert.Equal(t, (&Request{PromptTokens: 85, Segments: other.Segments}).blockHash(1, 32), other.blockHash(1, 32), "block size 32 recomputes")
}

// TestNumShareableIsShareablesBound checks that block i is shareable
// exactly when i < numShareable, which cacheFull's bounded loop relies
// on: every combination of prefix, reused and prompt lengths around the
// block boundaries, unique prompt or not.
func TestNumShareableIsShareablesBound(t *testing.T) {
	const bs = 16
	lens := []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 592}
	for _, prefix := range lens {
		for _, reused := range lens {
			for _, prompt := range lens {
				for _, unique := range []bool{false, true} {
					r := &Request{PrefixTokens: prefix, ReusedTokens: reused, PromptTokens: prompt, UniquePrompt: unique}
					n := r.numShareable(bs)
					for i := 0; i < 50; i++ {
						if r.shareable(i, bs) != (i < n) {
							t.Fatalf("prefix %d reused %d prompt %d unique %v: block %d shareable %v, numShareable %d",
								prefix, reused, prompt, unique, i, r.shareable(i, bs), n)
						}
					}
				}
			}
		}
	}
	// A hand-worked case: a 592-token repeated prompt with a 100-token
	// shared prefix shares its 37 full blocks; unique, only the prefix's 6.
	r := &Request{PrefixTokens: 100, PromptTokens: 592}
	if got := r.numShareable(bs); got != 37 {
		t.Fatalf("repeated prompt: %d shareable blocks, want 37", got)
	}
	r.UniquePrompt = true
	if got := r.numShareable(bs); got != 6 {
		t.Fatalf("unique prompt: %d shareable blocks, want 6", got)
	}
}
