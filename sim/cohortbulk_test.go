package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/predictor"
)

// TestCohortBulkPriceBelowWidth: cohortBulk's closed form goes on from
// one price to the next only while a step lasts at least its chunks'
// width (the API server's time for the members' tokens); a price below
// it backs the API server up, and the steps after stream as it frees.
// Real prices grow with the context, so within an advance they do not
// fall below the width once above it; dipPricer makes them (every third
// band of 64 context tokens priced at a tenth), on the codegen gate cell
// with the API server as calibrated, without a step sink (the bulk
// advance) and with one, and requires the same bytes as stepping one by
// one. It fails when the closed form ignores the width after a reprice.
func TestCohortBulkPriceBelowWidth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs twice")
	}
	codegen := codegenTenth(t)
	dips := 0
	for _, sink := range []bool{false, true} {
		tweak := func(s *Sim) {
			for _, c := range s.cores {
				c.Pred = dipPricer{c.Pred.(rangedPricer), &dips}
			}
			if !sink {
				s.stepSink = nil
			}
		}
		want := runTweaked(t, codegen, true, false, tweak)
		got := runTweaked(t, codegen, false, false, tweak)
		requireSameRun(t, "codegen, prices dipping below the chunks' width", want, got)
		require.Positive(t, got.kSteps)
	}
	require.Positive(t, dips)
}

// rangedPricer is a Pricer that tells its price's range (rangePricer).
type rangedPricer interface {
	Pricer
	rangePricer
}

// dipPricer prices a step at a tenth of p's wall time when its decode
// context sum lies in every third band of 64 tokens, counting such steps
// in dips; its ranges stop at the bands' edges.
type dipPricer struct {
	p    rangedPricer
	dips *int
}

func (d dipPricer) Step(b *predictor.Batch, async bool) predictor.StepTime {
	st, _, _ := d.StepRange(b, async)
	return st
}

func (d dipPricer) StepRange(b *predictor.Batch, async bool) (predictor.StepTime, int64, int64) {
	st, lo, hi := d.p.StepRange(b, async)
	const band = 64
	k := b.DecodeCtxSum / band
	if k%3 == 0 {
		st.WallNs = max(st.WallNs/10, 1)
		*d.dips++
	}
	if hi > lo {
		lo, hi = max(lo, k*band), min(hi, (k+1)*band)
	}
	return st, lo, hi
}
