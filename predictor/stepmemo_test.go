package predictor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The step memo changes nothing: a predictor pricing random decode-only
// and mixed batches through Step and StepRange (whose price holds at
// every context sum of its range) gives the prices, coverage counts and
// notes of one pricing every batch afresh (step), for a dense model, a
// MoE model under DP and EP, and Llama-4's chunked local attention.
func TestStepMemoChangesNothing(t *testing.T) {
	for _, cfg := range memoConfigs(t) {
		memo, plain := mustNew(t, cfg), mustNew(t, cfg)
		rng := rand.New(rand.NewPCG(4, 9))
		n, ctx, pad, running, hits, ranges := 1, 100, 1, 1, 0, 0
		for i := 0; i < 30000; i++ {
			if i%50 == 0 { // a new run of decode steps
				n, ctx = 1+rng.IntN(200), rng.IntN(12000)
				pad, running = n+rng.IntN(3)*8, n+rng.IntN(2)
			}
			ctx++ // every request's context grows by one token a step
			if rng.IntN(10) == 0 {
				running = n + rng.IntN(2) // a request waits in the running list, or not
			}
			b := Batch{NumTokens: n, PaddedTokens: pad, Graph: pad < 512, NumDecodes: n,
				DecodeCtxSum: int64(ctx) * int64(n), NumSampled: n, NumRequests: n, NumRunning: running}
			if rng.IntN(20) == 0 {
				b.Prefills = []Chunk{{NewTokens: 1 + rng.IntN(2000), PrefixTokens: rng.IntN(5000)}}
				b.NumTokens += b.Prefills[0].NewTokens
				b.PaddedTokens, b.Graph = b.NumTokens, false
			}
			async := rng.IntN(4) > 0
			if k, ok := memo.stepKeyOf(&b, async); ok && memo.stepMemo != nil && memo.stepMemo[k.slot()].key == k {
				hits++
			}
			if i%3 == 0 { // StepRange: the price holds at every sum of its range
				st, lo, hi := memo.StepRange(&b, async)
				require.Equal(t, plain.step(&b, async), st, "batch %d %+v", i, b)
				if hi > lo {
					require.True(t, lo <= b.DecodeCtxSum && b.DecodeCtxSum < hi, "batch %d %+v: range [%d, %d)", i, b, lo, hi)
					for _, sum := range []int64{lo, hi - 1, lo + rng.Int64N(hi-lo)} {
						c := b
						c.DecodeCtxSum = sum
						require.Equal(t, plain.step(&c, async), st, "batch %d %+v", i, c)
					}
					ranges++
				}
				continue
			}
			require.Equal(t, plain.step(&b, async), memo.Step(&b, async), "batch %d %+v", i, b)
		}
		require.Equal(t, plain.Coverage(), memo.Coverage())
		require.Equal(t, plain.AllNotes(), memo.AllNotes())
		require.Greater(t, hits, 10000, cfg.Model.ID)
		require.Greater(t, ranges, 3000, cfg.Model.ID)
	}
}

// memoConfigs are the step memos' test deployments: a dense model, a
// MoE model under DP and EP, and Llama-4's chunked local attention.
func memoConfigs(t *testing.T) []Config {
	moe := llamaConfig(t, "Qwen/Qwen3-30B-A3B", "h200-sxm", 1)
	moe.DP, moe.ExpertParallel = 4, true
	return []Config{
		llamaConfig(t, "meta-llama/Llama-3.1-8B-Instruct", "h200-sxm", 1),
		moe,
		quantConfig(t, "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "h100-sxm", 2),
	}
}

// keyRange's range is exactly the sums whose attention key is the key:
// the float rule decodeAttnMs uses agrees inside and differs just
// outside, for every decode count to 300 and contexts to 10^6.
func TestStepLastRangeIsTheKey(t *testing.T) {
	p := &Predictor{}
	key := func(sum, n int64) int32 { return int32(math.Round(float64(sum) / float64(n) / 4)) }
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 200000; i++ {
		n := 1 + rng.Int64N(300)
		a := key(n*rng.Int64N(1_000_000), n)
		lo, hi := p.keyRange(&stepKey{b: uint64(n), attn: a})
		for _, s := range []int64{lo, hi - 1, (lo + hi) / 2} {
			require.Equal(t, a, key(s, n), "n %d sum %d", n, s)
		}
		if lo > 0 {
			require.NotEqual(t, a, key(lo-1, n), "n %d sum %d", n, lo-1)
		}
		require.NotEqual(t, a, key(hi, n), "n %d sum %d", n, hi)
	}
}
