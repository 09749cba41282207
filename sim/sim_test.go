package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// fixedPricer prices every step at 10 ms.
type fixedPricer struct{}

func (fixedPricer) Step(*predictor.Batch, bool) predictor.StepTime {
	return predictor.StepTime{DeviceNs: 10e6, WallNs: 10e6}
}

const ms = int64(1e6)

func tinySim(async bool, reqs []workload.Request, stepSink func(StepRecord)) *Sim {
	core := &Core{
		Sched: engine.NewScheduler(engine.Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 64, MaxModelLen: 4096, BlockSize: 16, NumBlocks: 100}),
		Pred:  fixedPricer{}, Async: async,
	}
	plan := &workload.Plan{Stages: []workload.Stage{{Requests: reqs}}}
	return New(plan, []*Core{core}, LeastLoaded{}, predictor.HostModel{}, ClientConfig{}, Options{StepSink: stepSink})
}

// Worked by hand (steps of 10 ms, no front-end time): A (40-token prompt,
// 3 outputs) and B (50 tokens, 2 outputs) arrive at t = 0. Step 1 [0, 10]:
// A 40 + B 24 (budget 64), A's first token at 10 ms. Step 2 [10, 20]:
// A 1 + B 26, B's first token at 20 ms. Step 3 [20, 30]: both decode and
// finish at 30 ms. The same with async scheduling: step 2 is scheduled at
// t = 0 with placeholders and holds the same tokens.
func TestTwoRequestTimeline(t *testing.T) {
	for _, async := range []bool{false, true} {
		var steps [][2]int
		s := tinySim(async, []workload.Request{
			{ID: 0, PromptTokens: 40, OutputTokens: 3, ContentKey: 1},
			{ID: 1, PromptTokens: 50, OutputTokens: 2, ContentKey: 2},
		}, func(r StepRecord) { steps = append(steps, [2]int{r.PrefillTokens, r.DecodeTokens}) })
		res := s.Run()
		assert.Equal(t, [][2]int{{64, 0}, {26, 1}, {0, 2}}, steps, "async=%v (prefill tokens, decode requests) per step", async)
		a, b := res.Requests[0], res.Requests[1]
		assert.Equal(t, 10*ms, a.TTFTNs())
		assert.Equal(t, 20*ms, b.TTFTNs())
		assert.Equal(t, 30*ms, a.E2ENs())
		assert.Equal(t, 30*ms, b.E2ENs())
		assert.Equal(t, int32(3), a.OutputTokens)
		assert.Equal(t, int64(3), res.Steps)
	}
}

// A request arriving at 5 ms, while step 1 runs, joins step 2 without
// async scheduling (scheduled at 10 ms) but step 3 with it (step 2 was
// scheduled when step 1 started): TTFT 15 ms vs 25 ms.
func TestAsyncArrivalJoinsStepAfterNext(t *testing.T) {
	for _, c := range []struct {
		async bool
		ttft  int64
	}{{false, 15 * ms}, {true, 25 * ms}} {
		s := tinySim(c.async, []workload.Request{
			{ID: 0, PromptTokens: 16, OutputTokens: 10, ContentKey: 1},
			{ID: 1, At: 5 * ms, PromptTokens: 16, OutputTokens: 2, ContentKey: 2},
		}, nil)
		res := s.Run()
		assert.Equal(t, c.ttft, res.Requests[1].TTFTNs(), "async=%v", c.async)
	}
}

// With a client timeout shorter than the work, the request fails at
// exactly send + timeout, and its KV blocks return to the pool.
func TestTimeoutAbortsAndFrees(t *testing.T) {
	s := tinySim(true, []workload.Request{{ID: 0, PromptTokens: 40, OutputTokens: 100, ContentKey: 1}}, nil)
	s.client.cfg.TimeoutNs = 55 * ms
	res := s.Run()
	r := res.Requests[0]
	assert.True(t, r.Failed)
	assert.Equal(t, 55*ms, r.FinishNs)
	assert.Equal(t, 0, s.cores[0].Sched.Pool.NumUsed())
}

func TestMaxConcurrencyHoldsRequests(t *testing.T) {
	var reqs []workload.Request
	for i := 0; i < 4; i++ {
		reqs = append(reqs, workload.Request{ID: int32(i), PromptTokens: 16, OutputTokens: 2, ContentKey: uint64(i + 1)})
	}
	s := tinySim(false, reqs, nil)
	s.client.cfg.MaxConcurrency = 1
	res := s.Run()
	// One at a time: each takes 2 steps (20 ms), so sends are 0, 20, 40, 60 ms.
	for i, r := range res.Requests {
		assert.Equal(t, int64(i)*20*ms, r.SendNs)
		assert.Equal(t, 20*ms, r.E2ENs())
	}
}

// Stages: the second stage starts 1 s after the first stage's last
// request finished.
func TestStagesDrainThenPause(t *testing.T) {
	core := &Core{
		Sched: engine.NewScheduler(engine.Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 64, MaxModelLen: 4096, BlockSize: 16, NumBlocks: 100}),
		Pred:  fixedPricer{},
	}
	plan := &workload.Plan{Stages: []workload.Stage{
		{Requests: []workload.Request{{ID: 0, PromptTokens: 16, OutputTokens: 3, ContentKey: 1}}, IntervalNs: workload.StageIntervalNs},
		{Requests: []workload.Request{{ID: 1, PromptTokens: 16, OutputTokens: 1, ContentKey: 2}}, IntervalNs: workload.StageIntervalNs},
	}}
	res := New(plan, []*Core{core}, LeastLoaded{}, predictor.HostModel{}, ClientConfig{}, Options{}).Run()
	require.Len(t, res.Requests, 2)
	assert.Equal(t, 30*ms, res.Requests[0].FinishNs)
	assert.Equal(t, 30*ms+int64(1e9), res.Requests[1].SendNs)
}
