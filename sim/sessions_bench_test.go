package sim

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim/workload"
)

// sessionsScenario is Llama-3.1-8B on one H200 serving n sessions of five
// turns (500-token system prompt, 100-token messages and replies, think
// time exponential with a 2 s mean), started at 4 sessions/s.
func sessionsScenario(n int) *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model, d.MaxModelLen = "meta-llama/Llama-3.1-8B-Instruct", 8192
	s := scenarios.DefaultSessions()
	s.NumSessions, s.NumTurns = n, scenarios.Fixed(5)
	s.SystemPromptLen, s.UserMessageLen, s.OutputLen = 500, 100, 100
	s.ThinkTimeS = scenarios.Distribution{Distribution: "exponential", Mean: 2}
	return &scenarios.Scenario{Name: "sessions", Hardware: "h200-sxm", Deployment: &d, Workload: scenarios.Workload{
		Dataset: "sessions", Sessions: &s, Arrivals: scenarios.Arrivals{RequestRate: 4, Burstiness: 1}}}
}

// BenchmarkSessions simulates 10^5 turns (20,000 sessions × 5) closed-loop;
// BenchmarkArrivals the same number of open-loop random requests of the
// sessions' mean prompt (1,035 tokens) and output at the same request rate
// (20 req/s). Compare ns/request.
func BenchmarkSessions(b *testing.B) {
	benchRuns(b, sessionsScenario(20000), 100000)
}

// BenchmarkSessionsOpenLoop sends the very requests of BenchmarkSessions
// (same prompts, so the same prefix-cache work) open-loop, each at the
// time the closed loop sent it: the difference is the cost of the closed
// loop itself.
func BenchmarkSessionsOpenLoop(b *testing.B) {
	st, err := Resolve(sessionsScenario(20000))
	require.NoError(b, err)
	s, err := st.NewSim(Options{})
	require.NoError(b, err)
	res := s.Run()
	reqs := slices.Clone(st.Plan.Stages[0].Requests)
	for i := range reqs {
		reqs[i].ClosedLoop, reqs[i].Next, reqs[i].At = false, 0, res.Requests[i].SendNs
	}
	slices.SortStableFunc(reqs, func(a, b workload.Request) int { return cmp.Compare(a.At, b.At) })
	for i := range reqs {
		reqs[i].ID = int32(i)
	}
	st.Plan = &workload.Plan{Stages: []workload.Stage{{Requests: reqs}}}
	benchSetup(b, st, 100000)
}

func BenchmarkArrivals(b *testing.B) {
	sc := sessionsScenario(1)
	sc.Workload = scenarios.Workload{Dataset: "random", Arrivals: scenarios.Arrivals{RequestRate: 20, Burstiness: 1},
		Random: &scenarios.RandomData{NumPrompts: 100000, InputLen: 1035, OutputLen: 100}}
	benchRuns(b, sc, 100000)
}

// Invariants of a sessions run on a small KV cache with a client timeout
// (preemption, eviction and failed turns all happen): every turn ends
// completed or failed; each closed-loop turn is sent exactly its think
// time after the previous turn of its session finished; a completed turn
// got all its tokens; no turn hits more than prompt − 1 tokens; the
// blocks are all free at the end.
func TestInvariantsSessions(t *testing.T) {
	sc := sessionsScenario(300)
	sc.Workload.Sessions.ThinkTimeS = scenarios.Distribution{Distribution: "uniform", Min: 0, Max: 1}
	sc.Workload.Sessions.RangeRatio = 0.5
	sc.Workload.Sessions.ToolCallProbability, sc.Workload.Sessions.ToolResultLen = 0.3, 300
	sc.Workload.Sessions.ToolLatencyS = scenarios.Fixed(0.25)
	sc.Workload.Arrivals.RequestRate = 40
	blocks, timeout := 600, 20.0
	sc.Deployment.NumGPUBlocksOverride, sc.Deployment.MaxNumSeqs = &blocks, 64
	sc.Workload.Arrivals.TimeoutS = &timeout
	require.NoError(t, sc.Validate())
	var preempted int
	s, st, err := Build(sc, Options{StepSink: func(r StepRecord) {
		preempted += r.Preempted
		require.LessOrEqual(t, r.KVBlocksUsed, blocks)
	}})
	require.NoError(t, err)
	res := s.Run()
	plan := st.Plan.Stages[0].Requests
	require.Len(t, res.Requests, len(plan))
	var failed, hits int
	for i, r := range res.Requests {
		p := plan[i]
		assert.Equal(t, p.Session(), r.Session)
		assert.Equal(t, p.Turn(), r.Turn)
		if p.ClosedLoop {
			prev := res.Requests[i-1] // a turn's predecessor is the turn before it
			require.Equal(t, i, int(plan[i-1].Next))
			assert.Equal(t, prev.FinishNs+p.ThinkNs(), r.SendNs, "turn %d of session %d", r.Turn, r.Session)
		}
		if r.Failed {
			failed++
			continue
		}
		assert.Equal(t, p.OutputTokens, r.OutputTokens)
		assert.LessOrEqual(t, r.CachedTokens, r.PromptTokens-1)
		assert.Positive(t, r.TTFTNs())
		if r.Turn > 1 && r.CachedTokens > 0 {
			hits++
		}
	}
	t.Logf("%d turns, %d failed, %d preemptions, %d later turns with hits", len(res.Requests), failed, preempted, hits)
	assert.Positive(t, preempted, "the run must exercise preemption")
	assert.Positive(t, failed, "and timeouts")
	assert.Positive(t, hits)
	assert.Zero(t, s.cores[0].Sched.Pool.NumUsed(), "all blocks free at the end")
}

// The decode macro-step's equivalence harness on session workloads
// (beyond the examples it already runs): closed-loop chat and agents with
// tool calls, turns cut for max_model_len, client timeouts, a small KV
// cache that preempts and evicts, async scheduling on and off, two DP
// engines, and a session trace; each gives the same bytes with the
// macro-step as step by step.
func TestMacroStepEquivalenceSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("each run twice")
	}
	var cases []equivalenceCase
	for i, async := range []bool{true, false} {
		sc := sessionsScenario(40)
		s := sc.Workload.Sessions
		s.ThinkTimeS = scenarios.Distribution{Distribution: "uniform", Min: 0, Max: 0.5}
		s.RangeRatio, s.ToolCallProbability, s.ToolResultLen = 0.5, 0.4, 300
		s.ToolLatencyS = scenarios.Distribution{Distribution: "exponential", Mean: 0.2}
		s.NumTurns = scenarios.Distribution{Distribution: "uniform", Min: 2, Max: 9}
		blocks, timeout := 400, 3.0
		sc.Deployment.NumGPUBlocksOverride, sc.Deployment.MaxNumSeqs, sc.Deployment.MaxModelLen = &blocks, 32, 1500
		sc.Deployment.AsyncScheduling = &async
		sc.Workload.Arrivals.RequestRate, sc.Workload.Arrivals.TimeoutS = 20, &timeout
		cases = append(cases, equivalenceCase{[]string{"sessions, async", "sessions, sync"}[i], sc})
	}
	users, dp := 16, 2
	sc := sessionsScenario(48)
	sc.Workload.Sessions.ConcurrentUsers = &users
	sc.Workload.Arrivals.RequestRate = scenarios.Rate(math.Inf(1))
	sc.Deployment.DataParallelSize = dp
	cases = append(cases, equivalenceCase{"sessions, 16 users, DP 2", sc})
	tr := sessionsScenario(1)
	tr.Workload = scenarios.Workload{Dataset: "trace", Trace: &scenarios.TraceData{Path: "../fixtures/traces/two_sessions.csv"}, Arrivals: scenarios.DefaultArrivals()}
	cases = append(cases, equivalenceCase{"session trace", tr})
	// The first case exercises what it says: cut turns, timeouts, preemption.
	var preempted int
	s, st, err := Build(cases[0].sc, Options{StepSink: func(r StepRecord) { preempted += r.Preempted }})
	require.NoError(t, err)
	failed := 0
	for _, r := range s.Run().Requests {
		if r.Failed {
			failed++
		}
	}
	t.Logf("%d turns failed, %d preemptions", failed, preempted)
	assert.Positive(t, failed, "timeouts")
	assert.Positive(t, preempted, "preemption")
	assert.Contains(t, strings.Join(st.Notes, "\n"), "would exceed max_model_len 1500", "turns cut")
	var inline int64
	for _, c := range cases {
		inline += requireStepByStepEquivalent(t, c.name, c.sc)
	}
	t.Logf("%d steps inline", inline)
	require.Positive(t, inline)
}
