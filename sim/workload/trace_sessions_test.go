package workload

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/sim/engine"
)

// Two sessions interleaved with an ordinary row, in file order. Session
// "b" starts first (0.2 s), then the ordinary row (0.3 s), then "a" (0.5
// s). Turns follow their first turn; each links to the next; a turn whose
// prompt is at least the previous prompt + output repeats it (segments).
func TestTraceSessions(t *testing.T) {
	const csv = "session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n" +
		"a,1,,0.5,100,20,sys,64\n" +
		"b,2,1.5,,150,10,,\n" + // b's second turn before its first in the file
		"a,2,2,9.9,130,30,,\n" + // arrival_s of a later turn is not used
		"b,1,,0.2,90,40,,\n" +
		",,,0.3,50,5,,\n" +
		"a,3,0.25,,120,8,sys,64\n" // shorter than 130 + 30: a cut conversation
	reqs, err := parseTrace(strings.NewReader(csv), "t.csv")
	require.NoError(t, err)
	require.Len(t, reqs, 6)
	type row struct {
		session, turn int
		closed        bool
		think         int64
		next          int
		prompt        int
	}
	var got []row
	for i, r := range reqs {
		assert.Equal(t, i, int(r.ID))
		got = append(got, row{int(r.Session()), int(r.Turn()), r.ClosedLoop, r.ThinkNs(), int(r.Next), int(r.PromptTokens)})
	}
	assert.Equal(t, []row{
		{1, 1, false, 0, 1, 90}, // b: sent at 0.2 s
		{1, 2, true, 1.5e9, 0, 150},
		{0, 0, false, 0, 0, 50},  // the ordinary row
		{2, 1, false, 0, 4, 100}, // a
		{2, 2, true, 2e9, 5, 130},
		{2, 3, true, 0.25e9, 0, 120},
	}, got)
	assert.Equal(t, []int64{200e6, 0, 300e6, 500e6, 0, 0}, []int64{reqs[0].At, reqs[1].At, reqs[2].At, reqs[3].At, reqs[4].At, reqs[5].At})

	b1, b2 := reqs[0], reqs[1]
	assert.Equal(t, []engine.Segment{{Key: b1.Segments()[0].Key, End: 90}}, b1.Segments())
	assert.Equal(t, 130, int(b1.ReusedTokens()), "b's second turn repeats its first prompt and reply")
	assert.Equal(t, []engine.Segment{b1.Segments()[0], {Key: b1.OutputKey(), End: 130}, {Key: b2.Segments()[2].Key, End: 150}}, b2.Segments())
	assert.Zero(t, b2.ReusedTokens(), "a last turn is repeated by no one")

	a1, a2, a3 := reqs[3], reqs[4], reqs[5]
	sys := engine.Segment{Key: a1.PrefixKey, End: 64}
	assert.Equal(t, sys, a1.Segments()[0], "the prefix group opens the conversation")
	assert.Equal(t, 64, int(a2.PrefixTokens), "later turns keep the session's prefix group")
	assert.Equal(t, []engine.Segment{sys, {Key: a1.Segments()[1].Key, End: 100}, {Key: a1.OutputKey(), End: 120}, {Key: a2.Segments()[3].Key, End: 130}}, a2.Segments())
	assert.Zero(t, a2.ReusedTokens(), "turn 3 (120 tokens) is shorter than turn 2's 130 + 30: it repeats nothing of it")
	assert.Equal(t, []engine.Segment{sys, {Key: a3.Segments()[1].Key, End: 120}}, a3.Segments())
	keys := map[uint64]bool{}
	for _, r := range []Request{a1, a2, a3, b1, b2} {
		keys[r.OutputKey()] = true
	}
	assert.Len(t, keys, 5, "every reply its own stream")
}

func TestTraceSessionErrors(t *testing.T) {
	const h = "session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens\n"
	cases := []struct{ name, csv, want string }{
		{"turn repeats", h + "s,1,,0,10,5\ns,2,1,,20,5\ns,2,1,,30,5\n", `trace t.csv line 4: turn: session "s" has turn 2 twice (lines 3 and 4)`},
		{"turn skips", h + "s,1,,0,10,5\ns,3,1,,20,5\n", `trace t.csv line 3: turn: session "s" skips turn 2 (its turns: 1, 3)`},
		{"no first turn", h + "s,2,1,,20,5\n", `trace t.csv line 2: turn: session "s" skips turn 1 (its turns: 2)`},
		{"turn missing", h + "s,,,0,10,5\n", `trace t.csv line 2: turn: must be an integer ≥ 1 on a session row (session_id "s"), got ""`},
		{"turn zero", h + "s,0,,0,10,5\n", `trace t.csv line 2: turn: must be an integer ≥ 1 on a session row (session_id "s"), got "0"`},
		{"turn without session", h + ",2,,0,10,5\n", `trace t.csv line 2: turn: only on session rows; give session_id too (got turn "2")`},
		{"think without session", h + ",,1,0,10,5\n", `trace t.csv line 2: think_s: only on session rows; give session_id and turn too (got "1")`},
		{"negative think", h + "s,1,,0,10,5\ns,2,-1,,20,5\n", `trace t.csv line 3: think_s: must be a decimal number of seconds in [0, 1e+08] after a session's first turn (the delay after turn 1's last token), got "-1"`},
		{"missing think", h + "s,1,,0,10,5\ns,2,,,20,5\n", `trace t.csv line 3: think_s: must be a decimal number of seconds in [0, 1e+08] after a session's first turn`},
		{"think on turn 1", h + "s,1,2,0,10,5\n", `trace t.csv line 2: think_s: turn 1 has no earlier turn (it is sent at arrival_s); leave think_s empty, got "2"`},
		{"first turn needs arrival", h + "s,1,,,10,5\n", `trace t.csv line 2: arrival_s: must be a decimal number of seconds in [0, 1e+08], got ""`},
		{"bad arrival on a later turn", h + "s,1,,0,10,5\ns,2,1,soon,20,5\n", `trace t.csv line 3: arrival_s: must be a decimal number`},
		{"group changes", "session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\ns,1,,0,100,5,x,10\ns,2,1,,200,5,y,10\n",
			`trace t.csv line 3: prefix_group: a session's prefix group is its first turn's (line 2: "x", 10 tokens); leave it empty on later turns`},
	}
	checkTraceErrors(t, cases)
}

// session_id 0 and turn 0 (as --requests-csv writes requests outside
// sessions) are ordinary rows.
func TestTraceSessionZeroIsOrdinary(t *testing.T) {
	reqs, err := parseTrace(strings.NewReader("session_id,turn,arrival_s,prompt_tokens,output_tokens\n0,0,1,10,5\n"), "t.csv")
	require.NoError(t, err)
	assert.Equal(t, Request{ID: 0, At: 1e9, PromptTokens: 10, OutputTokens: 5, ContentKey: reqs[0].ContentKey, UniquePrompt: true}, reqs[0])
}

// A first turn's think_s may be any way of writing zero (a generator
// writing a float column writes 0.0): on main only "0" or empty were
// accepted, and "0.0" was refused as a think time before turn 1.
func TestTraceSessionFirstTurnZeroThink(t *testing.T) {
	for _, zero := range []string{"", "0", "0.0", "0.000", "+0", ".0"} {
		reqs, err := parseTrace(strings.NewReader("session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens\ns,1,"+zero+",2,10,5\ns,2,1.5,,20,5\n"), "t.csv")
		require.NoError(t, err, zero)
		assert.Equal(t, int64(2e9), reqs[0].At, zero)
		assert.False(t, reqs[0].ClosedLoop, zero)
		assert.Equal(t, int64(1.5e9), reqs[1].ThinkNs(), zero)
	}
}
