package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// hugePricer prices every step at wall ns.
type hugePricer struct{ wall int64 }

func (p hugePricer) Step(*predictor.Batch, bool) predictor.StepTime {
	return predictor.StepTime{DeviceNs: p.wall, WallNs: p.wall}
}

func hugeSim(wall int64, outputs int) *Sim {
	core := &Core{
		Sched: engine.NewScheduler(engine.Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 64, MaxModelLen: 4096, BlockSize: 16, NumBlocks: 100}),
		Pred:  hugePricer{wall}, Async: true,
	}
	plan := &workload.Plan{Stages: []workload.Stage{{Requests: []workload.Request{{ID: 0, PromptTokens: 16, OutputTokens: int32(outputs), ContentKey: 1}}}}}
	return New(plan, []*Core{core}, LeastLoaded{}, predictor.HostModel{}, ClientConfig{}, Options{})
}

// Defect 3: the int64 clock never wraps. Steps of 2^56 − 1 ns (just under
// predictor.MaxStepNs) pass MaxClockNs = 2^62 after 64 steps: a request
// of 100 tokens stops the run there with an error, times never negative.
func TestClockCannotWrap(t *testing.T) {
	res := hugeSim(predictor.MaxStepNs-1, 100).Run()
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "the simulated clock would pass 4611686018427387904 ns")
	assert.GreaterOrEqual(t, res.EndNs, int64(0))
	assert.LessOrEqual(t, res.EndNs, MaxClockNs)
	assert.False(t, res.Requests[0].FinishNs >= 0 && !res.Requests[0].Failed, "the request did not complete")

	// 60 steps fit: the same request of 60 tokens completes, no error.
	res = hugeSim(predictor.MaxStepNs-1, 60).Run()
	require.NoError(t, res.Err)
	assert.Equal(t, int32(60), res.Requests[0].OutputTokens)
}

// A step priced at the predictor's saturation (an impossible price) stops
// the run at once.
func TestSaturatedStepStopsTheRun(t *testing.T) {
	res := hugeSim(predictor.MaxStepNs, 2).Run()
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "engine 0: a step priced at or past 72057594037927936 ns")
	assert.Equal(t, int64(0), res.EndNs, "stopped before the step ended")
}
