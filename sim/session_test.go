package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
	"frontier/scenarios"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// sessionSim runs reqs on one core pricing every step at 10 ms, with no
// front-end time, synchronous scheduling, block size 16 and a budget of
// 512 tokens (every prefill in one step).
func sessionSim(t *testing.T, blocks int, reqs []workload.Request) *Result {
	t.Helper()
	return sessionSimAsync(t, blocks, reqs, false)
}

// sessionSimAsync is sessionSim, with async scheduling when async.
func sessionSimAsync(t *testing.T, blocks int, reqs []workload.Request, async bool) *Result {
	t.Helper()
	core := &Core{
		Async: async,
		Sched: engine.NewScheduler(engine.Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, MaxModelLen: 4096, BlockSize: 16, NumBlocks: blocks, EnablePrefixCaching: true}),
		Pred:  fixedPricer{},
	}
	plan := &workload.Plan{Stages: []workload.Stage{{Requests: reqs}}}
	res := New(plan, []*Core{core}, LeastLoaded{}, predictor.HostModel{}, ClientConfig{}, Options{}).Run()
	require.Len(t, res.Requests, len(reqs))
	return res
}

// Worked by hand: two sessions × three turns from a trace
// (fixtures/traces/two_sessions.csv). Both share a 35-token system prompt
// (prefix group); turn k's prompt is the conversation so far: 65, then
// 65 + 40 + 30 = 135, then 135 + 40 + 30 = 205 tokens; every reply is 40
// tokens; think time 1 s.
//
// Turn 1 at t = 0: A hits nothing; B, admitted right after A in the same
// step, hits A's 2 full system-prompt blocks (32 tokens; block 2 mixes
// the system prompt with B's own message). One 10 ms prefill step, then
// 39 decode steps: first token at 10 ms, last at 400 ms.
// A turn computes KV for prompt + output − 1 tokens (its last token is
// never fed back): 104 after turn 1, so 6 full blocks (96 tokens, of
// which 31 generated) are cached. Turn 2 is sent at 0.4 + 1 = 1.4 s and
// hits 96 tokens; it finishes at 1.8 s having KV for 174 tokens (10
// blocks). Turn 3 is sent at 2.8 s and hits 160 tokens (25 of turn 2's
// generated ones); it ends at 3.2 s.
func TestTwoSessionsThreeTurns(t *testing.T) {
	reqs, err := workload.ReadTrace("../fixtures/traces/two_sessions.csv")
	require.NoError(t, err)
	res := sessionSim(t, 100, reqs)
	type turn struct {
		session, turn, cached int
		send, first, finish   int64
	}
	var got []turn
	for _, r := range res.Requests {
		got = append(got, turn{int(r.Session), int(r.Turn), int(r.CachedTokens), r.SendNs, r.FirstTokenNs, r.FinishNs})
	}
	assert.Equal(t, []turn{
		{1, 1, 0, 0, 10 * ms, 400 * ms},
		{1, 2, 96, 1400 * ms, 1410 * ms, 1800 * ms},
		{1, 3, 160, 2800 * ms, 2810 * ms, 3200 * ms},
		{2, 1, 32, 0, 10 * ms, 400 * ms},
		{2, 2, 96, 1400 * ms, 1410 * ms, 1800 * ms},
		{2, 3, 160, 2800 * ms, 2810 * ms, 3200 * ms},
	}, got)
	for i, r := range res.Requests {
		if r.Turn > 1 {
			assert.Equal(t, res.Requests[i-1].FinishNs+1e9, r.SendNs, "turn %d of session %d: previous finish + think time", r.Turn, r.Session)
		}
	}
}

// Worked by hand: one session of two turns (prompt 65 then 135, replies
// of 40, think 1 s) and, at 0.5 s, an unrelated 200-token prompt, on a
// KV cache of 16 usable blocks (17 with vLLM's null block 0). Turn 1 held
// blocks 1–7 and freed them tail first (free queue: 8–16, then 7, 6, 5,
// 4, 3, 2, 1); its full blocks 1–6 stay cached. The 200-token prompt
// takes 13 blocks: 8–16, then 7, 6, 5, 4, evicting the hashes of blocks
// 6, 5, 4. Turn 2 (sent at 1.4 s) hits only blocks 1–3: 48 cached tokens
// instead of 96.
func TestEvictionMakesLaterTurnMiss(t *testing.T) {
	reqs, err := workload.ReadTrace("../fixtures/traces/two_sessions.csv")
	require.NoError(t, err)
	a1, a2 := reqs[0], reqs[1]
	a2.Next = 0
	x := workload.Request{At: 500 * ms, PromptTokens: 200, OutputTokens: 1, ContentKey: 77, UniquePrompt: true}
	a1.Next = 2 // a1, x, a2 in send order
	plan := []workload.Request{a1, x, a2}
	for i := range plan {
		plan[i].ID = int32(i)
	}
	res := sessionSim(t, 17, plan)
	assert.Equal(t, 1400*ms, res.Requests[2].SendNs)
	assert.Equal(t, int32(48), res.Requests[2].CachedTokens)
	// The same without the intruder: all 96.
	a1.Next = 1
	plan = []workload.Request{a1, a2}
	plan[1].ID = 1
	res = sessionSim(t, 17, plan)
	assert.Equal(t, int32(96), res.Requests[1].CachedTokens)
}

// The same two sessions × three turns as TestTwoSessionsThreeTurns, built
// by the sessions dataset: a 30-token system prompt, 20-token user
// messages, 40-token replies, Llama-3's 5 template tokens per message
// (system message 35 tokens; each turn's message with the generation
// prompt 30), think time 1 s, two users. The layout is the trace's, so
// the cached tokens and times are the same hand-worked ones.
func TestSessionsDatasetTwoByThree(t *testing.T) {
	s := scenarios.DefaultSessions()
	users := 2
	s.NumSessions, s.ConcurrentUsers, s.NumTurns = 2, &users, scenarios.Fixed(3)
	s.SystemPromptLen, s.UserMessageLen, s.OutputLen, s.ThinkTimeS = 30, 20, 40, scenarios.Fixed(1)
	plan, err := workload.BuildFor(&scenarios.Workload{Dataset: "sessions", Sessions: &s, Arrivals: scenarios.DefaultArrivals()}, nil, 4096)
	require.NoError(t, err)
	res := sessionSim(t, 100, plan.Stages[0].Requests)
	var cached []int
	var send, finish []int64
	for _, r := range res.Requests {
		cached = append(cached, int(r.CachedTokens))
		send, finish = append(send, r.SendNs), append(finish, r.FinishNs)
	}
	assert.Equal(t, []int{0, 96, 160, 32, 96, 160}, cached)
	assert.Equal(t, []int64{0, 1400 * ms, 2800 * ms, 0, 1400 * ms, 2800 * ms}, send)
	assert.Equal(t, []int64{400 * ms, 1800 * ms, 3200 * ms, 400 * ms, 1800 * ms, 3200 * ms}, finish)
}

// An agent session: every reply but the last is a tool call (probability
// 1), so turn k+1 is sent after the tool's latency (0.5 s), not the think
// time (2 s), with the 50-token tool result instead of a user message.
// No system prompt. Worked by hand: turn 1 = 5 + 20 + 5 = 30 tokens;
// turn 2 = 30 + 40 + (5 + 50 + 5) = 130; turn 3 = 230. Turn 1 ends at
// 0.4 s, turn 2 is sent at 0.9 s and ends at 1.3 s, turn 3 at 1.8 s.
// Cached: turn 2 the 4 full blocks of turn 1's 69 tokens with KV (64);
// turn 3 the 10 of turn 2's 169 (160).
func TestAgentSessionToolCalls(t *testing.T) {
	s := scenarios.DefaultSessions()
	s.NumSessions, s.NumTurns = 1, scenarios.Fixed(3)
	s.UserMessageLen, s.OutputLen, s.ThinkTimeS = 20, 40, scenarios.Fixed(2)
	s.ToolCallProbability, s.ToolLatencyS, s.ToolResultLen = 1, scenarios.Fixed(0.5), 50
	plan, err := workload.BuildFor(&scenarios.Workload{Dataset: "sessions", Sessions: &s, Arrivals: scenarios.DefaultArrivals()}, nil, 4096)
	require.NoError(t, err)
	res := sessionSim(t, 100, plan.Stages[0].Requests)
	type turn struct {
		prompt, cached int
		send, finish   int64
	}
	var got []turn
	for _, r := range res.Requests {
		got = append(got, turn{int(r.PromptTokens), int(r.CachedTokens), r.SendNs, r.FinishNs})
	}
	assert.Equal(t, []turn{{30, 0, 0, 400 * ms}, {130, 64, 900 * ms, 1300 * ms}, {230, 160, 1800 * ms, 2200 * ms}}, got)
}

// Closed-loop sends wait in the client (pending), only the earliest with
// an event: sends added out of time order go out in time order, and a
// superseded event does nothing.
func TestPendingSendsInTimeOrder(t *testing.T) {
	var reqs []workload.Request
	for i := range 5 {
		reqs = append(reqs, workload.Request{ID: int32(i), PromptTokens: 16, OutputTokens: 1, ContentKey: uint64(i + 1), ClosedLoop: true})
	}
	s := tinySim(false, reqs, nil)
	for i, at := range []int64{50, 20, 20, 90, 10} {
		s.client.turns.add(s, at*ms, s.newRecord(&reqs[i]))
	}
	assert.Equal(t, 3, s.queue.len(), "armed at 50, then 20, then 10: two stale events")
	res := s.Run()
	var sends []int64
	for _, r := range res.Requests {
		sends = append(sends, r.SendNs)
	}
	assert.Equal(t, []int64{50 * ms, 20 * ms, 20 * ms, 90 * ms, 10 * ms}, sends)
	assert.Empty(t, s.client.turns.h)
}

// A long session cut by max_model_len 600 (turn lengths drawn with range
// ratio 0.8, so some cut turns drop as many turns as the turn before and
// some drop more), on a cache that never evicts: a turn that repeats the
// turn before (ReusedTokens) hits the full blocks of that turn's prompt +
// output − 1 tokens; a cut turn that drops more hits only the system
// prompt's 2 full blocks (35 tokens: 32).
func TestCutSessionTurnsHitTheirRun(t *testing.T) {
	s := scenarios.DefaultSessions()
	s.NumSessions, s.NumTurns, s.RangeRatio = 1, scenarios.Fixed(60), 0.8
	s.SystemPromptLen, s.UserMessageLen, s.OutputLen, s.ThinkTimeS = 30, 20, 40, scenarios.Fixed(1)
	plan, err := workload.BuildFor(&scenarios.Workload{Dataset: "sessions", Sessions: &s, Arrivals: scenarios.DefaultArrivals()}, nil, 600)
	require.NoError(t, err)
	require.Len(t, plan.Notes, 1)
	reqs := plan.Stages[0].Requests
	res := sessionSim(t, 1000, reqs)
	runs, starts := 0, 0
	for k := 1; k < len(reqs); k++ {
		prev, want := &reqs[k-1], 32
		if prev.ReusedTokens() > 0 {
			want = int(prev.PromptTokens+prev.OutputTokens-1) / 16 * 16
			if len(reqs[k].Segments()) < 2*k+2 {
				runs++
			}
		} else {
			starts++
		}
		assert.Equal(t, want, int(res.Requests[k].CachedTokens), "turn %d", k+1)
	}
	assert.Positive(t, runs, "cut turns that repeat the turn before")
	assert.Positive(t, starts, "cut turns that drop more than the turn before")
}

// Worked by hand: turn 1 of a session has 65 prompt and 32 output tokens,
// so it computes KV for 96 tokens (its last sampled token has none):
// exactly 6 full blocks, the last filled by the turn's last computed
// token. Turn 2 (65 + 32 + 30 = 127 tokens) hits all 6 (96 tokens), with
// synchronous scheduling and with async scheduling alike: vLLM's
// AsyncScheduler caches a request's full blocks when a step's tokens come
// back (cache_blocks(request, num_computed_tokens −
// num_output_placeholders)), the last step's included. On main async
// scheduling left that block unindexed (80 tokens), in one turn of 16 of
// every session workload, since async is vLLM's default.
func TestAsyncSchedulingCachesTheLastComputedBlock(t *testing.T) {
	reqs, err := workload.ReadTrace(writeTrace(t, "session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens\ns,1,,0,65,32\ns,2,1,,127,8\n"))
	require.NoError(t, err)
	for _, async := range []bool{false, true} {
		res := sessionSimAsync(t, 100, reqs, async)
		assert.Equal(t, int32(96), res.Requests[1].CachedTokens, "async %v", async)
	}
}

func writeTrace(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}
