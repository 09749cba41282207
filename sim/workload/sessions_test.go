package workload

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim/engine"
)

func chat(sessions, turns int) *scenarios.Sessions {
	s := scenarios.DefaultSessions()
	s.NumSessions, s.NumTurns = sessions, scenarios.Fixed(float64(turns))
	s.SystemPromptLen, s.UserMessageLen, s.OutputLen = 30, 20, 40
	s.ThinkTimeS = scenarios.Fixed(1)
	return &s
}

func buildSessions(t *testing.T, s *scenarios.Sessions, a scenarios.Arrivals, maxModelLen int) *Plan {
	t.Helper()
	require.NoError(t, s.Validate(&a))
	w := &scenarios.Workload{Dataset: "sessions", Sessions: s, Arrivals: a}
	plan, err := BuildFor(w, nil, maxModelLen)
	require.NoError(t, err)
	return plan
}

// Worked by hand, Llama-3's 5 template tokens per message: the system
// message is 5 + 30 = 35 tokens; each turn adds its user message with its
// template and the generation prompt (5 + 20 + 5 = 30) and then its
// 40-token reply. Turn 1: 65 tokens; turn 2: 65 + 40 + 30 = 135; turn 3:
// 205. Each turn's prompt is the previous prompt, reply and new message.
func TestSessionsPromptLayout(t *testing.T) {
	u := 2
	s := chat(2, 3)
	s.ConcurrentUsers = &u
	plan := buildSessions(t, s, scenarios.DefaultArrivals(), 0)
	require.Len(t, plan.Stages, 1)
	reqs := plan.Stages[0].Requests
	require.Len(t, reqs, 6)
	for i, r := range reqs {
		assert.Equal(t, i, int(r.ID))
		assert.Equal(t, 1+i/3, int(r.Session()))
		assert.Equal(t, 1+i%3, int(r.Turn()))
		assert.Equal(t, []int{65, 135, 205}[i%3], int(r.PromptTokens))
		assert.Equal(t, 40, int(r.OutputTokens))
		assert.Equal(t, 35, int(r.PrefixTokens), "the system message is the group's shared prefix")
		assert.Equal(t, r.Turn() > 1, r.ClosedLoop)
		assert.Equal(t, map[bool]int64{true: 1e9, false: 0}[r.Turn() > 1], r.ThinkNs())
		assert.Equal(t, map[bool]int{true: i + 1, false: 0}[int(r.Turn()) < 3], int(r.Next))
		assert.Equal(t, map[bool]int32{true: r.PromptTokens + 40, false: 0}[r.Turn() < 3], r.ReusedTokens())
		assert.Zero(t, r.At)
	}
	a1, a2, a3, b1 := reqs[0], reqs[1], reqs[2], reqs[3]
	assert.Equal(t, a1.Segments(), a2.Segments()[:2], "turn 2 starts with turn 1's prompt")
	assert.Equal(t, engine.Segment{Key: a1.OutputKey(), End: 105}, a2.Segments()[2], "then turn 1's reply")
	assert.Equal(t, a2.Segments(), a3.Segments()[:4])
	assert.Equal(t, []int{35, 65, 105, 135, 175, 205}, ends(a3.Segments()))
	assert.Equal(t, a1.Segments()[0], b1.Segments()[0], "one system prompt for both sessions")
	assert.NotEqual(t, a1.Segments()[1].Key, b1.Segments()[1].Key)
	assert.Equal(t, a1.PrefixKey, a1.Segments()[0].Key)
}

func ends(segs []engine.Segment) []int {
	var out []int
	for _, s := range segs {
		out = append(out, s.End)
	}
	return out
}

// Sessions by rate: starts are bench serve's gamma gaps (the first at 0);
// with concurrent users, user u runs sessions u, u + U, …: a session's
// last turn triggers the user's next session after a think time.
func TestSessionsStartsAndUsers(t *testing.T) {
	byRate := buildSessions(t, chat(4, 2), scenarios.Arrivals{RequestRate: 2, Burstiness: 1}, 0).Stages[0].Requests
	var starts []int64
	for _, r := range byRate {
		if r.Turn() == 1 {
			assert.False(t, r.ClosedLoop)
			starts = append(starts, r.At)
		}
	}
	want, err := sendTimes(4, &scenarios.Arrivals{RequestRate: 2, Burstiness: 1}, rand.New(rand.NewPCG(0, 0x5eed)), "session")
	require.NoError(t, err)
	assert.Equal(t, want, starts)
	assert.Zero(t, starts[0])

	u := 2
	s := chat(5, 2)
	s.ConcurrentUsers = &u
	reqs := buildSessions(t, s, scenarios.DefaultArrivals(), 0).Stages[0].Requests
	next := map[int]int{} // request → the request it triggers
	for i, r := range reqs {
		if r.Next > 0 {
			next[i] = int(r.Next)
		}
	}
	// sessions 1..5 at indexes 0,2,4,6,8; users: {1, 3, 5}, {2, 4}
	assert.Equal(t, map[int]int{0: 1, 1: 4, 2: 3, 3: 6, 4: 5, 5: 8, 6: 7, 8: 9}, next)
	for _, i := range []int{4, 6, 8} {
		assert.True(t, reqs[i].ClosedLoop, "a user's next session starts closed-loop")
		assert.Equal(t, int64(1e9), reqs[i].ThinkNs())
	}
	assert.False(t, reqs[0].ClosedLoop)
	assert.False(t, reqs[2].ClosedLoop)
}

// max_model_len 250: turn 3 (205 + 40 = 245) fits; turn 4 (275 + 40)
// drops turn 1 (its message and reply, 70 tokens): 35 + [turn 2: 30 + 40]
// + [turn 3: 30 + 40] + 30 = 205 → 245. Turn 5 (345 + 40 uncut) drops two
// turns: 205 again, so it repeats nothing of turn 4 after the system
// prompt; turn 4's prompt is new from position 35 on. Each names what it
// keeps after the system prompt as one stream of its own.
func TestSessionsDropOldestTurns(t *testing.T) {
	plan := buildSessions(t, chat(1, 5), scenarios.DefaultArrivals(), 250)
	reqs := plan.Stages[0].Requests
	var prompts []int
	for _, r := range reqs {
		prompts = append(prompts, int(r.PromptTokens))
		assert.LessOrEqual(t, int(r.PromptTokens)+int(r.OutputTokens), 250)
	}
	assert.Equal(t, []int{65, 135, 205, 205, 205}, prompts)
	t3, t4, t5 := reqs[2], reqs[3], reqs[4]
	assert.Equal(t, []int{35, 205}, ends(t4.Segments()))
	assert.Equal(t, []int{35, 205}, ends(t5.Segments()))
	assert.Equal(t, t3.Segments()[0], t4.Segments()[0], "the system prompt stays")
	assert.Equal(t, t3.Segments()[0], t5.Segments()[0])
	for _, k := range []uint64{t3.Segments()[1].Key, t3.Segments()[3].Key, t4.Segments()[1].Key} {
		assert.NotEqual(t, k, t5.Segments()[1].Key, "turn 5's kept turns are no earlier prompt's tokens")
	}
	assert.NotEqual(t, t3.Segments()[3].Key, t4.Segments()[1].Key)
	assert.Equal(t, 175, int(reqs[1].ReusedTokens()), "turn 3 repeats turn 2 and its reply")
	assert.Zero(t, t3.ReusedTokens(), "turn 4 (cut) does not repeat turn 3…")
	assert.Zero(t, t4.ReusedTokens(), "…nor turn 5 turn 4")
	require.Len(t, plan.Notes, 1)
	assert.Contains(t, plan.Notes[0], "sessions: 2 of 5 turns would exceed max_model_len 250")
}

// A session far longer than max_model_len: 2,000 turns of a 1-token
// message and a 1-token reply (no template tokens, no system prompt), so
// turn k's prompt is 2k − 1 tokens and turns 1–500 fit max_model_len
// 1,000; every later turn drops one more turn than the one before and
// keeps 999 tokens. Each such cut turn holds one segment (its kept turns
// as one stream), not the 999 of the turns it keeps: on main each cut
// turn copied them, O(turns²) memory (854 MB for one 10,000-turn session
// cut at 10,000 tokens).
func TestSessionsCutTurnsCostConstantSegments(t *testing.T) {
	s := chat(1, 2000)
	s.SystemPromptLen, s.UserMessageLen, s.OutputLen, s.ChatTemplateTokens = 0, 1, 1, 0
	reqs := buildSessions(t, s, scenarios.DefaultArrivals(), 1000).Stages[0].Requests
	require.Len(t, reqs, 2000)
	for k, r := range reqs {
		if k < 500 {
			require.Equal(t, 2*k+1, int(r.PromptTokens))
			continue
		}
		require.Equal(t, 999, int(r.PromptTokens), "turn %d", k+1)
		require.Equal(t, 1, len(r.Segments()), "turn %d", k+1)
		require.Equal(t, 999, r.Segments()[0].End)
		require.Zero(t, reqs[k-1].ReusedTokens(), "turn %d starts a run", k+1)
	}
}

// Cut turns that drop as many turns as the turn before repeat its prompt
// and reply: their segments are its segments, its reply and the new
// message, and the turn before is marked reused in full. Random lengths
// (range ratio 0.8) make runs of several cut turns.
func TestSessionsCutRunsRepeatTheTurnBefore(t *testing.T) {
	s := chat(1, 400)
	s.RangeRatio = 0.8
	reqs := buildSessions(t, s, scenarios.DefaultArrivals(), 2000).Stages[0].Requests
	runs := 0
	for k := 1; k < len(reqs); k++ {
		prev, r := &reqs[k-1], &reqs[k]
		assert.LessOrEqual(t, int(r.PromptTokens)+int(r.OutputTokens), 2000)
		assert.Equal(t, int(r.PromptTokens), r.Segments()[len(r.Segments())-1].End)
		if prev.ReusedTokens() == 0 {
			continue
		}
		assert.Equal(t, prev.PromptTokens+prev.OutputTokens, prev.ReusedTokens())
		n := len(prev.Segments())
		require.Equal(t, n+2, len(r.Segments()), "turn %d: the previous prompt, its reply, the new message", k+1)
		assert.Equal(t, prev.Segments(), r.Segments()[:n])
		assert.Equal(t, engine.Segment{Key: prev.OutputKey(), End: int(prev.ReusedTokens())}, r.Segments()[n])
		if len(r.Segments()) < 2*k+2 { // cut: fewer than the system prompt, k turns and a message
			runs++
		}
	}
	assert.Positive(t, runs, "some cut turns continue a run")
}

// workload.classes with sessions: a session draws its class once, and
// every turn of it carries the class's priority.
func TestSessionsClasses(t *testing.T) {
	s := chat(40, 3)
	a := scenarios.DefaultArrivals()
	w := &scenarios.Workload{Dataset: "sessions", Sessions: s, Arrivals: a,
		Classes: []scenarios.RequestClass{{Name: "gold", Priority: 0, Share: 0.5}, {Name: "bronze", Priority: 2, Share: 0.5}}}
	require.NoError(t, w.Validate())
	plan, err := BuildFor(w, nil, 0)
	require.NoError(t, err)
	require.Len(t, plan.Classes, 2)
	byClass := map[int]int{}
	reqs := plan.Stages[0].Requests
	for i, r := range reqs {
		if r.Turn() > 1 {
			assert.Equal(t, reqs[i-1].Class, r.Class, "one class per session")
			assert.Equal(t, reqs[i-1].Priority, r.Priority)
		} else {
			byClass[int(r.Class)]++
		}
		assert.Equal(t, []int{0, 2}[r.Class], r.Priority)
	}
	assert.Positive(t, byClass[0])
	assert.Positive(t, byClass[1])
}

// A plan built without max_model_len (Build) keeps every turn's whole
// history; a turn past int32 tokens (the plan's counts) is refused, not
// wrapped. 10M-token messages and replies: turn k's prompt + reply is about
// 20M·k tokens, past 2^31 − 1 from turn 108.
func TestSessionsPromptPastInt32IsRefused(t *testing.T) {
	s := chat(1, 120)
	s.UserMessageLen, s.OutputLen = scenarios.MaxTokens, scenarios.MaxTokens
	a := scenarios.DefaultArrivals()
	require.NoError(t, s.Validate(&a))
	_, err := Build(&scenarios.Workload{Dataset: "sessions", Sessions: s, Arrivals: a}, nil)
	require.Error(t, err)
	assert.Regexp(t, `^workload\.sessions: session 1 turn 10[0-9]'s prompt \+ output would be [0-9]+ tokens, more than 2147483647; set max_model_len$`, err.Error())
	_, err = BuildFor(&scenarios.Workload{Dataset: "sessions", Sessions: s, Arrivals: a}, nil, 3*scenarios.MaxTokens)
	require.NoError(t, err, "with max_model_len the history is cut instead")
}
