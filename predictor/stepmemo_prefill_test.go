package predictor

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The prefill memo changes nothing: a predictor pricing random steps of
// one prefill chunk beside decodes (shapes drawn from small sets, so
// that they repeat, as a serving run's arrivals do), with steps of two
// chunks, without decodes and decode-only ones between, gives the
// prices, coverage counts and notes of one pricing every batch afresh
// (step), for a dense model, a MoE model under DP and EP, Llama-4's
// chunked local attention and an MLA model (not kept); StepRange holds
// no range for them. A memo keyed without the chunk's prefix, the
// running requests or the decodes' attention key fails it.
func TestPrefillMemoChangesNothing(t *testing.T) {
	for _, cfg := range append(memoConfigs(t), quantConfig(t, "deepseek-ai/DeepSeek-V2-Lite", "h100-sxm", 1)) {
		memo, plain := mustNew(t, cfg), mustNew(t, cfg)
		rng := rand.New(rand.NewPCG(7, 3))
		chunks := []Chunk{{16, 576}, {16, 3000}, {32, 576}, {592, 0}, {1, 8191}, {200, 9000}}
		hits := 0
		for i := 0; i < 20000; i++ {
			n := []int{0, 1, 3, 8, 40, 41}[rng.IntN(6)]
			b := Batch{NumDecodes: n, DecodeCtxSum: int64(n) * int64(600+rng.IntN(24)),
				NumSampled: n, NumRequests: n, NumRunning: n + rng.IntN(2)}
			k := 1 + rng.IntN(8)/7 // one chunk, or two (not kept)
			if rng.IntN(10) == 0 {
				k = 0 // a decode-only step between
			}
			for j := 0; j < k && n+k > 0; j++ {
				c := chunks[rng.IntN(len(chunks))]
				b.Prefills = append(b.Prefills, c)
				b.NumTokens += c.NewTokens
				if rng.IntN(2) == 0 {
					b.NumSampled++
				}
				b.NumRequests++
			}
			if len(b.Prefills) == 0 && n == 0 {
				continue
			}
			b.NumTokens += n
			b.PaddedTokens, b.Graph = b.NumTokens+rng.IntN(2)*8, rng.IntN(3) > 0
			async := rng.IntN(4) > 0
			if k, ok := memo.prefillKeyOf(&b, async); ok && memo.prefillMemo != nil {
				if s := &memo.prefillMemo[prefillSlotOf(&k, &b.Prefills[0])]; s.holds(&k, &b.Prefills[0]) {
					hits++
				}
			}
			if i%3 == 0 {
				st, lo, hi := memo.StepRange(&b, async)
				require.Equal(t, plain.step(&b, async), st, "batch %d %+v", i, b)
				if len(b.Prefills) > 0 {
					require.Equal(t, [2]int64{0, 0}, [2]int64{lo, hi}, "batch %d: no range for a prefill step", i)
				}
				continue
			}
			require.Equal(t, plain.step(&b, async), memo.Step(&b, async), "batch %d %+v", i, b)
		}
		require.Equal(t, plain.Coverage(), memo.Coverage())
		require.Equal(t, plain.AllNotes(), memo.AllNotes())
		if memo.mla {
			require.Nil(t, memo.prefillMemo, "MLA steps are not kept")
		} else {
			require.Greater(t, hits, 5000, cfg.Model.ID)
		}
	}
}
