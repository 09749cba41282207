package predictor

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// memoBatches are decode-only and mixed batches that fill every memo
// table (step, prefill, decode cache).
func memoBatches() []Batch {
	rng := rand.New(rand.NewPCG(7, 3))
	var out []Batch
	for i := 0; i < 3000; i++ {
		n := 1 + rng.IntN(64)
		b := Batch{NumTokens: n, PaddedTokens: n, Graph: true, NumDecodes: n, DecodeCtxSum: int64(n) * int64(100+rng.IntN(4000)),
			NumSampled: n, NumRequests: n, NumRunning: n}
		if i%4 == 0 {
			b.Prefills = []Chunk{{NewTokens: 1 + rng.IntN(512), PrefixTokens: rng.IntN(2048)}}
			b.NumTokens += b.Prefills[0].NewTokens
			b.PaddedTokens, b.Graph = b.NumTokens, false
		}
		out = append(out, b)
	}
	for _, b := range out[:1000] { // priced twice: memo hits
		out = append(out, b)
	}
	return out
}

// A predictor built after another's Release prices as a fresh one does,
// although the tables it takes held the other model's prices under the
// same keys, and its memo slices the other's backing arrays: Release
// hands them back cleared (keeping either's entries fails this).
func TestReleasedTablesStartEmpty(t *testing.T) {
	cfgs := memoConfigs(t)
	batches := memoBatches()
	first := mustNew(t, cfgs[1])
	for i := range batches {
		first.Step(&batches[i], true)
	}
	require.NotNil(t, first.stepMemo)
	require.NotNil(t, first.prefillMemo)
	require.NotNil(t, first.decodeHot)
	first.Release()
	require.Nil(t, first.stepMemo)
	again, plain := mustNew(t, cfgs[0]), mustNew(t, cfgs[0])
	for i := range batches {
		require.Equal(t, plain.step(&batches[i], true), again.Step(&batches[i], true), "batch %d", i)
	}
	require.Equal(t, plain.Coverage(), again.Coverage())
	again.Release()
	require.Equal(t, [1 << stepMemoBits]stepSlot{}, *newStepMemo())
	require.Equal(t, [1 << prefillMemoBits]prefillSlot{}, *newPrefillMemo())
	require.Equal(t, [decodeHotSize]decodeSlot{}, *newDecodeHot())
}
