package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// The stress run (small KV cache: preemption, chunked prefill, timeouts)
// under priority scheduling with a 30/70 mix of priorities 0 and 1:
// every request ends completed (all its tokens) or failed at the timeout,
// blocks all return, steps respect capacity, budget and max_num_seqs, and
// the priority-0 class is served first: its median TTFT is below the
// other's, and it is preempted less per request.
func TestPriorityStressInvariants(t *testing.T) {
	sc := stressScenario()
	sc.Deployment.SchedulingPolicy = "priority"
	sc.Workload.Classes = []scenarios.RequestClass{{Name: "hi", Priority: 0, Share: 0.3}, {Name: "lo", Priority: 1, Share: 0.7}}
	require.NoError(t, sc.Validate())
	var bad []StepRecord
	s, st, err := Build(sc, Options{StepSink: func(r StepRecord) {
		if r.KVBlocksUsed > 1200 || r.PrefillTokens+r.DecodeTokens > 512 || r.Running > 64 || r.DurationNs <= 0 {
			bad = append(bad, r)
		}
	}})
	require.NoError(t, err)
	res := s.Run()
	assert.Empty(t, bad)
	planned := map[int]int{}
	for _, stg := range st.Plan.Stages {
		for _, r := range stg.Requests {
			planned[int(r.ID)] = int(r.OutputTokens)
		}
	}
	pre := [2]int{}
	count := [2]int{}
	for _, r := range res.Requests {
		count[r.Class]++
		pre[r.Class] += int(r.Preemptions)
		assert.Equal(t, int64(r.Class), r.Priority)
		if r.Failed {
			assert.Equal(t, int64(40e9), r.E2ENs())
			continue
		}
		assert.Equal(t, planned[int(r.ID)], int(r.OutputTokens))
		assert.Positive(t, r.TTFTNs())
		assert.LessOrEqual(t, r.TTFTNs(), r.E2ENs())
	}
	assert.Zero(t, s.cores[0].Sched.Pool.NumUsed())
	cls := SummarizeClasses(res, []float64{99}, SLO{})
	require.Len(t, cls, 2)
	assert.Equal(t, count[0], cls[0].Completed+cls[0].Failed)
	t.Logf("median TTFT hi %.0f ms lo %.0f ms; preemptions per request hi %.3f lo %.3f; failed hi %d/%d lo %d/%d",
		cls[0].Latencies["median_ttft_ms"], cls[1].Latencies["median_ttft_ms"],
		float64(pre[0])/float64(count[0]), float64(pre[1])/float64(count[1]), cls[0].Failed, count[0], cls[1].Failed, count[1])
	// Overloaded (40 req/s against ~8 served): the low class starves in
	// the waiting queue and times out, the high class mostly completes.
	assert.Less(t, float64(cls[0].Failed)/float64(count[0]), 0.2)
	assert.Greater(t, float64(cls[1].Failed)/float64(count[1]), 0.9)
	assert.Positive(t, pre[0]+pre[1], "the run must exercise preemption")
}

// At 7 req/s, a load the deployment sustains with queues, both classes
// complete and the priority-0 class waits less: its median TTFT is below
// the other's (49.7 against 208.2 ms when written).
func TestPriorityServesLowerValueFirst(t *testing.T) {
	sc := stressScenario()
	sc.Deployment.SchedulingPolicy = "priority"
	sc.Workload.Random.NumPrompts = 1000
	sc.Workload.Arrivals.RequestRate = 7
	sc.Workload.Classes = []scenarios.RequestClass{{Name: "hi", Priority: 0, Share: 0.3}, {Name: "lo", Priority: 1, Share: 0.7}}
	s, _, err := Build(sc, Options{})
	require.NoError(t, err)
	cls := SummarizeClasses(s.Run(), []float64{99}, SLO{})
	t.Logf("median TTFT hi %.1f ms lo %.1f ms; failed %d, %d", cls[0].Latencies["median_ttft_ms"], cls[1].Latencies["median_ttft_ms"], cls[0].Failed, cls[1].Failed)
	assert.Zero(t, cls[0].Failed+cls[1].Failed)
	assert.Less(t, cls[0].Latencies["median_ttft_ms"], cls[1].Latencies["median_ttft_ms"])
}

func TestPriorityDeterministic(t *testing.T) {
	run := func() []RequestRecord {
		sc := stressScenario()
		sc.Deployment.SchedulingPolicy = "priority"
		sc.Workload.Random.NumPrompts = 300
		sc.Workload.Classes = []scenarios.RequestClass{{Name: "hi", Priority: 0, Share: 0.5}, {Name: "lo", Priority: 1, Share: 0.5}}
		s, _, err := Build(sc, Options{})
		require.NoError(t, err)
		return s.Run().Requests
	}
	assert.Equal(t, run(), run())
}

// Priority and sjf under pipeline parallelism (requests in flight are
// skipped, so a victim can come before the request asking without being
// in the step) and with async scheduling on and off, on the stress run:
// every completed request has all its tokens and every block returns.
func TestPolicyInvariantsPPAndAsync(t *testing.T) {
	for _, pol := range []string{"priority", "sjf"} {
		for _, pp := range []int{1, 2} {
			for _, async := range []bool{false, true} {
				sc := stressScenario()
				sc.Workload.Random.NumPrompts = 1500
				sc.Deployment.SchedulingPolicy = pol
				sc.Deployment.PipelineParallelSize = pp
				sc.Deployment.AsyncScheduling = &async
				if pol == "priority" {
					sc.Workload.Classes = []scenarios.RequestClass{{Name: "a", Priority: 0, Share: 0.3}, {Name: "b", Priority: 2, Share: 0.7}}
				}
				require.NoError(t, sc.Validate())
				s, st, err := Build(sc, Options{})
				require.NoError(t, err)
				res := s.Run()
				planned := map[int]int{}
				for _, stg := range st.Plan.Stages {
					for _, r := range stg.Requests {
						planned[int(r.ID)] = int(r.OutputTokens)
					}
				}
				pre := 0
				for _, r := range res.Requests {
					pre += int(r.Preemptions)
					if !r.Failed {
						require.Equal(t, planned[int(r.ID)], int(r.OutputTokens), "%s pp %d async %v request %d", pol, pp, async, r.ID)
					}
				}
				for _, c := range s.cores {
					require.Zero(t, c.Sched.Pool.NumUsed())
				}
				assert.Positive(t, pre, "%s pp %d async %v: the run must preempt", pol, pp, async)
			}
		}
	}
}
