package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cfg(budget, seqs, blocks int, caching bool) Config {
	return Config{MaxNumSeqs: seqs, MaxNumBatchedTokens: budget, MaxModelLen: 4096, BlockSize: 16, NumBlocks: blocks, EnablePrefixCaching: caching}
}

// stepTokens returns each scheduled request's (ID, new tokens) of one step.
func stepTokens(st *Step) [][2]int {
	var out [][2]int
	for _, it := range st.Items {
		out = append(out, [2]int{it.Req.ID, it.NumNew})
	}
	return out
}

// Worked by hand: budget 64. Step 1 admits A (40-token prompt, whole) and
// chunks B (50 tokens) to the 24 left; A samples its first token. Step 2:
// A decodes 1, B finishes its prompt with 26 and samples. Step 3: both
// decode and reach max_tokens (A 3, B 2).
func TestTwoRequestsStepByStep(t *testing.T) {
	s := NewScheduler(cfg(64, 4, 100, false))
	a := &Request{ID: 0, PromptTokens: 40, MaxTokens: 3}
	b := &Request{ID: 1, PromptTokens: 50, MaxTokens: 2}
	s.Add(a)
	s.Add(b)
	want := []struct {
		items    [][2]int
		sampled  int
		finished []int
	}{
		{[][2]int{{0, 40}, {1, 24}}, 1, nil},
		{[][2]int{{0, 1}, {1, 26}}, 2, nil},
		{[][2]int{{0, 1}, {1, 1}}, 2, []int{0, 1}},
	}
	var st Step
	for i, w := range want {
		s.Schedule(&st)
		require.Equal(t, w.items, stepTokens(&st), "step %d", i+1)
		assert.Equal(t, w.sampled, st.NumSampled, "step %d sampled", i+1)
		var ids []int
		for _, r := range s.Update(&st, nil) {
			ids = append(ids, r.ID)
		}
		assert.Equal(t, w.finished, ids, "step %d finished", i+1)
	}
	s.Schedule(&st)
	assert.Empty(t, st.Items)
	assert.Equal(t, 0, s.Pool.NumUsed(), "all blocks freed")
	// First tokens: A after step 1 (its whole prompt fit), B after step 2.
	assert.Equal(t, 3, a.NumOutput)
	assert.Equal(t, 2, b.NumOutput)
}

// Async scheduling schedules step k+1 before step k's tokens exist. The
// placeholders keep the token counts identical to the synchronous run, and
// no extra step is scheduled for a request whose last token is in flight.
func TestAsyncPlaceholdersMatchSync(t *testing.T) {
	s := NewScheduler(cfg(64, 4, 100, false))
	a := &Request{ID: 0, PromptTokens: 40, MaxTokens: 3}
	b := &Request{ID: 1, PromptTokens: 50, MaxTokens: 2}
	s.Add(a)
	s.Add(b)
	var s1, s2, s3, s4 Step
	s.Schedule(&s1)
	s.Schedule(&s2) // before Update(s1)
	assert.Equal(t, [][2]int{{0, 1}, {1, 26}}, stepTokens(&s2))
	s.Update(&s1, nil)
	s.Schedule(&s3)
	assert.Equal(t, [][2]int{{0, 1}, {1, 1}}, stepTokens(&s3))
	s.Update(&s2, nil)
	s.Schedule(&s4)
	assert.Empty(t, s4.Items, "last tokens already scheduled: no extra step")
	done := s.Update(&s3, nil)
	assert.Len(t, done, 2)
	assert.Equal(t, 3, a.NumOutput)
	assert.Equal(t, 0, s.Pool.NumUsed())
}

// Worked by hand: 6 blocks of 16 tokens, the null block and 5 usable
// (num_gpu_blocks 6). Step 1 gives A and B 2 blocks each
// (32-token prompts), 1 left. Step 2: A's 33rd token needs a 3rd block (the
// last free one); B's needs one too, none is free, so the last running
// request, B itself, is preempted: its 2 blocks are freed and it goes to
// the front of the waiting queue with 0 computed tokens. B stays waiting
// (it needs 3 blocks for 33 tokens) until A finishes, then recomputes
// prompt + its 1 sampled token (33 tokens) in one chunk.
func TestPreemptionByRecompute(t *testing.T) {
	s := NewScheduler(cfg(100, 4, 6, false))
	a := &Request{ID: 0, PromptTokens: 32, MaxTokens: 20}
	b := &Request{ID: 1, PromptTokens: 32, MaxTokens: 5}
	s.Add(a)
	s.Add(b)
	var st Step
	s.Schedule(&st)
	require.Equal(t, [][2]int{{0, 32}, {1, 32}}, stepTokens(&st))
	assert.Equal(t, 1, s.Pool.NumFree())
	s.Update(&st, nil)

	s.Schedule(&st)
	assert.Equal(t, [][2]int{{0, 1}}, stepTokens(&st))
	assert.Equal(t, 1, st.NumPreempted)
	assert.Equal(t, Preempted, b.Status)
	assert.Equal(t, 0, b.NumComputed)
	assert.Equal(t, 1, b.Preemptions)
	assert.Equal(t, 2, s.Pool.NumFree(), "B's two blocks freed")
	s.Update(&st, nil)

	// A runs alone until it finishes (19 more tokens); B cannot fit.
	for a.Status != Finished {
		s.Schedule(&st)
		assert.Equal(t, 0, st.Items[0].Req.ID)
		require.Len(t, st.Items, 1)
		s.Update(&st, nil)
	}
	assert.Equal(t, 20, a.NumOutput)
	s.Schedule(&st)
	assert.Equal(t, [][2]int{{1, 33}}, stepTokens(&st), "B recomputes prompt + 1 output token")
	assert.Equal(t, 1, st.NumSampled)
}

// Worked by hand: prompts of 40 tokens have 2 full blocks (0–31). A second
// request with the same content hits both and computes 8 tokens. A 48-token
// prompt has 3 full blocks but at least one token is always computed:
// max hit = ⌊(48−1)/16⌋ = 2 blocks, 16 tokens computed. A request sharing
// only a 20-token group prefix hits its 1 full block.
func TestPrefixCacheHits(t *testing.T) {
	cases := []struct {
		name        string
		first, next Request
		wantCached  int
		wantNew     int
	}{
		{"same prompt", Request{PromptTokens: 40, ContentKey: 7}, Request{PromptTokens: 40, ContentKey: 7}, 32, 8},
		{"block-aligned prompt keeps one block", Request{PromptTokens: 48, ContentKey: 7}, Request{PromptTokens: 48, ContentKey: 7}, 32, 16},
		{"shared group prefix", Request{PromptTokens: 40, PrefixKey: 3, PrefixTokens: 20, ContentKey: 7},
			Request{PromptTokens: 40, PrefixKey: 3, PrefixTokens: 20, ContentKey: 8}, 16, 24},
		{"different content", Request{PromptTokens: 40, ContentKey: 7}, Request{PromptTokens: 40, ContentKey: 9}, 0, 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewScheduler(cfg(256, 4, 50, true))
			first, next := c.first, c.next
			first.ID, first.MaxTokens = 0, 1
			next.ID, next.MaxTokens = 1, 1
			var st Step
			s.Add(&first)
			s.Schedule(&st)
			s.Update(&st, nil)
			require.Equal(t, Finished, first.Status)
			s.Add(&next)
			s.Schedule(&st)
			assert.Equal(t, c.wantCached, next.CachedTokens)
			assert.Equal(t, [][2]int{{1, c.wantNew}}, stepTokens(&st))
		})
	}
}

func TestPrefixCachingOffNeverHits(t *testing.T) {
	s := NewScheduler(cfg(256, 4, 50, false))
	var st Step
	a := &Request{ID: 0, PromptTokens: 40, MaxTokens: 1, ContentKey: 7}
	b := &Request{ID: 1, PromptTokens: 40, MaxTokens: 1, ContentKey: 7}
	s.Add(a)
	s.Schedule(&st)
	s.Update(&st, nil)
	s.Add(b)
	s.Schedule(&st)
	assert.Equal(t, 0, b.CachedTokens)
}

// Eviction order: freed blocks are evicted least recently freed first, and
// a request's tail blocks before its head, so a later request still hits
// the head of an evicted-from prompt.
func TestEvictionTailFirst(t *testing.T) {
	s := NewScheduler(cfg(256, 4, 5, true)) // 4 usable + the null block 0
	var st Step
	a := &Request{ID: 0, PromptTokens: 48, MaxTokens: 1, ContentKey: 7} // blocks 1, 2, 3
	s.Add(a)
	s.Schedule(&st)
	s.Update(&st, nil)
	require.Equal(t, 4, s.Pool.NumFree())
	// Free queue now: 4 (never used), then A's blocks tail first: 3, 2, 1.
	// B needs 3 blocks (40 tokens) and takes 4, 3, 2, leaving A's head
	// block 1 cached. Head-first freeing would have left nothing of A.
	b := &Request{ID: 1, PromptTokens: 40, MaxTokens: 1, ContentKey: 9}
	s.Add(b)
	s.Schedule(&st)
	s.Update(&st, nil)
	c := &Request{ID: 2, PromptTokens: 48, MaxTokens: 1, ContentKey: 7}
	s.Add(c)
	s.Schedule(&st)
	assert.Equal(t, 16, c.CachedTokens, "A's head block survived")
}

// Chunked prefill: a 40-token prompt under a 16-token budget runs as 16,
// 16, 8 and samples only in the last chunk; long_prefill_token_threshold 10
// caps chunks at 10 under a large budget.
func TestChunkedPrefill(t *testing.T) {
	for _, c := range []struct {
		name      string
		budget    int
		threshold int
		chunks    []int
	}{
		{"token budget", 16, 0, []int{16, 16, 8}},
		{"long prefill threshold", 256, 10, []int{10, 10, 10, 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := cfg(c.budget, 4, 50, false)
			conf.LongPrefillTokenThreshold = c.threshold
			s := NewScheduler(conf)
			r := &Request{ID: 0, PromptTokens: 40, MaxTokens: 2}
			s.Add(r)
			var st Step
			for i, n := range c.chunks {
				s.Schedule(&st)
				require.Equal(t, [][2]int{{0, n}}, stepTokens(&st), "chunk %d", i)
				assert.Equal(t, i == len(c.chunks)-1, st.Items[0].Samples, "samples only on the last chunk")
				assert.False(t, st.Items[0].Decode)
				s.Update(&st, nil)
			}
			s.Schedule(&st)
			assert.True(t, st.Items[0].Decode)
		})
	}
}

func TestMaxNumSeqsCapsAdmission(t *testing.T) {
	s := NewScheduler(cfg(1000, 2, 100, false))
	for i := 0; i < 3; i++ {
		s.Add(&Request{ID: i, PromptTokens: 10, MaxTokens: 5})
	}
	var st Step
	s.Schedule(&st)
	assert.Len(t, st.Items, 2)
	assert.Equal(t, 1, s.NumWaiting())
}

func TestAbortFreesBlocks(t *testing.T) {
	s := NewScheduler(cfg(1000, 4, 100, false))
	a := &Request{ID: 0, PromptTokens: 40, MaxTokens: 5}
	b := &Request{ID: 1, PromptTokens: 40, MaxTokens: 5}
	s.Add(a)
	var st Step
	s.Schedule(&st)
	s.Add(b)
	assert.True(t, s.Abort(a))
	assert.True(t, s.Abort(b))
	assert.False(t, s.Abort(a), "already gone")
	assert.Equal(t, 0, s.Pool.NumUsed())
	assert.False(t, s.HasWork())
}

func TestCaptureSizesAndPadding(t *testing.T) {
	sizes := CaptureSizes(128, 2048, nil)
	assert.Equal(t, []int{1, 2, 4, 8, 16}, sizes[:5])
	assert.Equal(t, 256, sizes[len(sizes)-1], "max capture size = min(2×128, 512)")
	assert.Len(t, sizes, 3+32)
	big := CaptureSizes(1024, 8192, nil)
	assert.Equal(t, 512, big[len(big)-1])
	assert.Contains(t, big, 272)
	assert.NotContains(t, big, 264)
	assert.Equal(t, []int{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}, CaptureSizes(128, 64, nil), "capped at max_num_batched_tokens")
	assert.Equal(t, []int{4, 8}, CaptureSizes(128, 2048, []int{8, 4, 8}))

	p := NewPadTable(sizes)
	for _, c := range []struct{ n, want int }{{1, 1}, {3, 4}, {5, 8}, {9, 16}, {255, 256}, {256, 256}} {
		got, graph := p.Pad(c.n)
		assert.True(t, graph)
		assert.Equal(t, c.want, got, "pad(%d)", c.n)
	}
	got, graph := p.Pad(257)
	assert.False(t, graph, "beyond the largest capture size runs eagerly")
	assert.Equal(t, 257, got)
	_, graph = NewPadTable(nil).Pad(1)
	assert.False(t, graph, "enforce_eager: no graphs")
}

// A preempted request's full blocks stay in the prefix cache, so its
// recompute hits them (vLLM frees but keeps the hashes). Worked by hand:
// 6 blocks; A (32-token prompt, 30 outputs) and B (32 tokens, unique
// prompt, 20 outputs) take 2 blocks each, then a third each at their 33rd
// token. At the 49th token no block is free: A asks first, so B (last
// running) is preempted with 49 known tokens (3 full blocks), all kept
// cached. Freed tail first, B's third block is the first A takes (its
// hash evicted); A finishes with 62 tokens in 4 blocks. B then hits its 2
// surviving blocks (32 tokens) and recomputes 17 of its 49.
func TestPreemptedRequestHitsItsOwnBlocks(t *testing.T) {
	s := NewScheduler(cfg(100, 4, 6, true))
	a := &Request{ID: 0, PromptTokens: 32, MaxTokens: 30, ContentKey: 1, UniquePrompt: true}
	b := &Request{ID: 1, PromptTokens: 32, MaxTokens: 20, ContentKey: 2, UniquePrompt: true}
	s.Add(a)
	s.Add(b)
	var st Step
	for a.Status != Finished {
		s.Schedule(&st)
		s.Update(&st, nil)
	}
	require.Equal(t, 1, b.Preemptions)
	s.Schedule(&st)
	assert.Equal(t, [][2]int{{1, 17}}, stepTokens(&st), "recompute only what the cache lost")
}

// vLLM's null block: a pool of num_gpu_blocks N hands out N − 1 blocks,
// and usage is 1 − free ÷ (N − 1) (block_pool.py get_usage), so a full
// pool reads 1 and usage × (N − 1) is the blocks requests hold.
func TestNullBlockAndUsage(t *testing.T) {
	p := NewBlockPool(5, 16, true)
	assert.Equal(t, 4, p.NumFree())
	assert.Equal(t, 0, p.NumUsed())
	assert.Equal(t, 0.0, p.Usage())
	got := p.Allocate(3, nil)
	assert.NotContains(t, got, int32(0), "the null block is never handed out")
	assert.Equal(t, 3, p.NumUsed())
	assert.Equal(t, 0.75, p.Usage())
	got = p.Allocate(1, got)
	assert.Equal(t, 1.0, p.Usage())
	assert.NotContains(t, got, int32(0))
	p.Free(got)
	assert.Equal(t, 0.0, p.Usage())
	assert.Equal(t, 0.0, NewBlockPool(1, 16, false).Usage())
}

// Prefix-cache stats count every lookup of a waiting request, admitted or
// not, in tokens (kv_cache_manager.py get_computed_blocks): queries its
// num_tokens, hits its cached tokens.
func TestPrefixCacheStats(t *testing.T) {
	s := NewScheduler(cfg(256, 4, 20, true))
	var st Step
	s.Add(&Request{ID: 0, PromptTokens: 40, MaxTokens: 1, ContentKey: 7})
	s.Schedule(&st)
	assert.Equal(t, 40, st.PrefixQueries)
	assert.Equal(t, 0, st.PrefixHits)
	s.Update(&st, nil)
	s.Add(&Request{ID: 1, PromptTokens: 40, MaxTokens: 1, ContentKey: 7})
	s.Schedule(&st)
	assert.Equal(t, 40, st.PrefixQueries)
	assert.Equal(t, 32, st.PrefixHits, "two full blocks of the same prompt")
	off := NewScheduler(cfg(256, 4, 20, false))
	off.Add(&Request{ID: 2, PromptTokens: 40, MaxTokens: 1})
	off.Schedule(&st)
	assert.Zero(t, st.PrefixQueries, "no lookups without prefix caching")
}
