package calibration

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Four requests, max_num_seqs 2, 11 output tokens, worked by hand on the
// 1 s grid (cell g is counted when its midpoint g+0.5 lies in a life):
//
//	A success, sent 0,   tokens 0.5–10.5 (1 s/token), prompt 100
//	B success, sent 0.2, tokens 0.7–5.7 (0.5 s/token), prompt 200
//	C failed,  sent 1,   gives up at 8: admitted when B leaves (5.7)
//	D success, sent 2,   tokens 10.6–20.6, prompt 100
//	E failed,  sent 3,   gives up at 4 while A and B hold both slots
//
// Batch by cell: 0 → 1 (A); 1–5 → 2 (A, B); 6–7 → 2 (A, C); 8–10 → 1;
// 11–20 → 1 (D). C's context grows at the median TPOT of the successes
// decoding then (A alone: 1 s): 300.8 and 301.8 at cells 6 and 7.
func TestReconstructByHand(t *testing.T) {
	lives := []Life{
		{ArrivalS: 0, FirstS: 0.5, EndS: 10.5, Prompt: 100},
		{ArrivalS: 0.2, FirstS: 0.7, EndS: 5.7, Prompt: 200},
		{ArrivalS: 1, EndS: 8, Prompt: 300, Failed: true},
		{ArrivalS: 2, FirstS: 10.6, EndS: 20.6, Prompt: 100},
		{ArrivalS: 3, EndS: 4, Prompt: 999, Failed: true},
	}
	adm := admissions(lives, 2)
	assert.InDelta(t, 5.7, adm[2], 1e-12, "C enters when B leaves")
	assert.True(t, math.IsNaN(adm[4]), "E never ran")

	obs := Reconstruct(lives, 11, 2)
	require.Len(t, obs, 3, "one observation per success")
	// cells 1–5: A at 101…105 and B at 201.6…209.6 tokens: means 151.3 … 157.3
	ctx15 := 151.3 + 152.8 + 154.3 + 155.8 + 157.3
	want := []Observation{
		{ArrivalS: 0, Batch: 18.0 / 11, Context: (100 + ctx15 + (106+300.8)/2 + (107+301.8)/2 + 108 + 109 + 110) / 11, TPOTS: 1},
		{ArrivalS: 0.2, Batch: 11.0 / 6, Context: (100 + ctx15) / 6, TPOTS: 0.5},
		{ArrivalS: 2, Batch: 1, Context: (110 + 1000 + 54) / 11.0, TPOTS: 1},
	}
	for i, w := range want {
		assert.InDelta(t, w.ArrivalS, obs[i].ArrivalS, 1e-9, "arrival %d", i)
		assert.InDelta(t, w.Batch, obs[i].Batch, 1e-9, "batch %d", i)
		assert.InDelta(t, w.Context, obs[i].Context, 1e-9, "context %d", i)
		assert.InDelta(t, w.TPOTS, obs[i].TPOTS, 1e-12, "tpot %d", i)
	}
}

// FCFS: a failed request that arrived before a success is admitted no
// later than that success (here with it, at the success's first token).
func TestReconstructFCFSAdmitsEarlierFailures(t *testing.T) {
	lives := []Life{
		{ArrivalS: 0, FirstS: 0.5, EndS: 10.5, Prompt: 100},
		{ArrivalS: 0.1, EndS: 3, Prompt: 100, Failed: true},
		{ArrivalS: 0.2, FirstS: 0.7, EndS: 5.7, Prompt: 100},
	}
	adm := admissions(lives, 1)
	assert.InDelta(t, 0.7, adm[1], 1e-12, "the failure ahead of the second success enters with it")
	assert.Nil(t, Reconstruct(lives, 1, 1), "one output token: no TPOT")
}

// On a real run: the steady state of Mixtral reasoning is 128 running
// requests at ~1,800 tokens of context (1,076-token prompts + half of
// 1,448 outputs), and its per-token time is the slow ~37 ms the issue
// reports; bins carry the counts and the step price given.
func TestObservationsMixtralReasoning(t *testing.T) {
	r, err := ReadReplay("groundtruth/20260218-135247-mixtral-8x7b-v0-1-tp2-reasoning/replay")
	require.NoError(t, err)
	obs := Reconstruct(ReplayLives(r.Requests, 1076), 1448, 128)
	assert.Len(t, obs, 1506, "one per success")
	bins := BinObservations(obs, obs[:10], func(b int, c float64) float64 { return float64(b) + c/1000 }, 5)
	var top *ObservationBin
	for i := range bins {
		if bins[i].BatchLo == 120 {
			top = &bins[i]
		}
	}
	require.NotNil(t, top)
	assert.Greater(t, top.RealN, 1300)
	assert.InDelta(t, 128, top.RealBatch, 0.5)
	assert.InDelta(t, 1800, top.RealCtx, 30)
	assert.InDelta(t, 37.5, top.RealTPOTMs, 1.0)
	assert.InDelta(t, math.Round(top.RealBatch)+top.RealCtx/1000, top.StepMs, 1e-9)
	total := 0
	for _, b := range bins {
		total += b.RealN
	}
	assert.LessOrEqual(t, total, 1506)
}
