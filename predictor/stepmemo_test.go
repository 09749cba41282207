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
			if k, ok := memo.stepKeyOf(&b, async); ok && memo.stepMemo != nil && memo.stepMemo[k.slot()].key() == k {
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

// StepRangeNext is StepRange: a predictor pricing runs of decode steps
// as the k-step advance does (each step at the first context sum past
// its latest price's range, so the next attention key) through
// StepRangeNext, its hint kept while the batch changes only in its
// context sum and cleared when it changes else, gives the prices and
// ranges of one pricing through StepRange, ends with the same memo,
// coverage counts and notes, and takes the hinted slot for most steps.
// The runs cross Llama-4's attention chunk (8,192 tokens) and jump back
// or past the next key, so that a hint check without either end of the
// range fails it; stepRangeNextCollides makes the slot after the hint's
// hold another batch's price.
func TestStepRangeNextIsStepRange(t *testing.T) {
	for _, cfg := range memoConfigs(t) {
		memo, next := mustNew(t, cfg), mustNew(t, cfg)
		rng := rand.New(rand.NewPCG(5, 11))
		var hint StepHint
		fast, calls := 0, 0
		for run := 0; run < 3000; run++ {
			n := []int{1, 7, 40, 41, 160}[rng.IntN(5)]
			pad, running := n+rng.IntN(2)*8, n+rng.IntN(2)
			ctx := int64(n) * int64(400+rng.IntN(5)*2000+rng.IntN(40))
			hint = StepHint{}
			async := rng.IntN(8) > 0
			for step := 0; step < 30; step++ {
				b := Batch{NumTokens: n, PaddedTokens: pad, Graph: pad < 512, NumDecodes: n,
					DecodeCtxSum: ctx, NumSampled: n, NumRequests: n, NumRunning: running}
				if hint.ok {
					if k, ok := next.stepKeyOf(&b, async); ok && next.stepMemo[(hint.i+1)&(1<<stepMemoBits-1)].key() == k {
						fast++
					}
				}
				st, lo, hi := memo.StepRange(&b, async)
				st2, lo2, hi2 := next.StepRangeNext(&b, async, &hint)
				require.Equal(t, [3]any{st, lo, hi}, [3]any{st2, lo2, hi2}, "run %d step %d %+v", run, step, b)
				calls++
				switch r := rng.IntN(10); {
				case hi > lo && r < 7:
					ctx = hi // the next attention key
				case r == 7:
					ctx -= int64(n) * int64(1+rng.IntN(8)) // back
				case r == 8:
					ctx += int64(n) * int64(5+rng.IntN(8)) // past the next key
				default:
					ctx += int64(n)
				}
				ctx = max(ctx, int64(n))
			}
		}
		require.Equal(t, *memo.stepMemo, *next.stepMemo, cfg.Model.ID)
		require.Equal(t, memo.Coverage(), next.Coverage())
		require.Equal(t, memo.AllNotes(), next.AllNotes())
		require.Greater(t, fast, calls/3, cfg.Model.ID)
		stepRangeNextCollides(t, cfg)
	}
}

// stepRangeNextCollides: a batch priced at an attention key x, its hint
// kept, then at x+1 where the slot after its hint holds a batch with the
// same decodes whose hash lands on its own (another running count, or
// other GEMM tokens), priced at x+1 too: StepRangeNext must not take
// that price (a hint check without either key word fails it).
func stepRangeNextCollides(t *testing.T, cfg Config) {
	const n = 8
	base := Batch{NumTokens: n, PaddedTokens: n, Graph: true, NumDecodes: n, NumSampled: n, NumRequests: n, NumRunning: n}
	kp := mustNew(t, cfg)
	hash := func(b Batch) uint64 {
		k, _ := kp.stepKeyOf(&b, true)
		return (k.slot() - uint64(k.attn)) & (1<<stepMemoBits - 1)
	}
	for _, change := range []func(b *Batch, i int){
		func(b *Batch, i int) { b.NumRunning = n + i },                              // key word b
		func(b *Batch, i int) { b.PaddedTokens, b.NumSampled = n+i%500, 1+i/500%n }, // key word a
	} {
		p, plain := mustNew(t, cfg), mustNew(t, cfg)
		b, o := base, base
		b.DecodeCtxSum, o.DecodeCtxSum = n*400, n*404 // attention keys 100, 101
		for i := 1; ; i++ {
			require.Less(t, i, 1<<14, "no colliding batch")
			change(&o, i)
			if hash(o) != hash(b) {
				continue
			}
			k, _ := kp.stepKeyOf(&o, true)
			if p.StepRange(&o, true); p.stepMemo[k.slot()].key() == k {
				break // (kept: every part of its price memoized)
			}
		}
		kb, _ := kp.stepKeyOf(&b, true)
		ko, _ := kp.stepKeyOf(&o, true)
		require.True(t, (kb.a == ko.a) != (kb.b == ko.b), "%+v and %+v differ in one key word", b, o)
		plain.StepRange(&o, true)
		var hint StepHint
		p.StepRangeNext(&b, true, &hint)
		plain.StepRange(&b, true)
		require.True(t, hint.ok)
		b.DecodeCtxSum = n * 404
		st, lo, hi := p.StepRangeNext(&b, true, &hint)
		st2, lo2, hi2 := plain.StepRange(&b, true)
		require.Equal(t, [3]any{st2, lo2, hi2}, [3]any{st, lo, hi}, "%+v after %+v", b, o)
		require.Equal(t, *plain.stepMemo, *p.stepMemo, "%+v after %+v", b, o)
	}
}
