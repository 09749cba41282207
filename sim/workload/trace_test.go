package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadTracePrefixGroups(t *testing.T) {
	reqs, err := ReadTrace("../../fixtures/traces/prefix_groups.csv")
	require.NoError(t, err)
	require.Len(t, reqs, 12)
	for i, r := range reqs {
		assert.Equal(t, i, int(r.ID), "ids follow arrival order")
		if i > 0 {
			assert.GreaterOrEqual(t, r.At, reqs[i-1].At, "sorted by arrival")
		}
	}
	// rows in file order: 0.0 chat, 0.1 chat, 0.25 -, 0.9 -, 1.5 code, 2.0 code, 2.0 chat (stable) …
	assert.Equal(t, []int64{0, 100e6, 250e6, 900e6, 1500e6, 2000e6, 2000e6, 3250e6, 4000e6, 4500e6, 5000e6, 6125e6},
		func() (at []int64) {
			for _, r := range reqs {
				at = append(at, r.At)
			}
			return
		}())
	assert.Equal(t, 1100, int(reqs[5].PromptTokens), "equal arrivals keep file order")
	assert.Equal(t, 530, int(reqs[6].PromptTokens))

	chat, code := reqs[0].PrefixKey, reqs[4].PrefixKey
	assert.NotZero(t, chat)
	assert.NotZero(t, code)
	assert.NotEqual(t, chat, code)
	byGroup := map[uint64][]int{}
	keys := map[uint64]bool{}
	for _, r := range reqs {
		keys[r.ContentKey] = true
		if r.PrefixKey != 0 {
			byGroup[r.PrefixKey] = append(byGroup[r.PrefixKey], int(r.PrefixTokens))
		}
	}
	assert.Len(t, keys, 12, "every trace prompt is distinct beyond its prefix")
	assert.Equal(t, []int{512, 512, 512, 512}, byGroup[chat])
	assert.Equal(t, []int{1024, 1024, 1024, 0}, byGroup[code])
	assert.Zero(t, reqs[2].PrefixKey, "ungrouped row")
	assert.Zero(t, reqs[2].PrefixTokens)
	assert.Equal(t, 300, int(reqs[2].PromptTokens))
	assert.Equal(t, 16, int(reqs[2].OutputTokens))
}

func TestParseTraceColumnsAnyOrder(t *testing.T) {
	reqs, err := parseTrace(strings.NewReader("output_tokens, prompt_tokens, arrival_s\n8, 100, 0.5\n"), "t.csv")
	require.NoError(t, err)
	require.Len(t, reqs, 1)
	assert.Equal(t, Request{ID: 0, At: 500e6, PromptTokens: 100, OutputTokens: 8, ContentKey: reqs[0].ContentKey, UniquePrompt: true}, reqs[0])
}

func TestParseTraceErrors(t *testing.T) {
	const h = "arrival_s,prompt_tokens,output_tokens\n"
	const hg = "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n"
	cases := []struct{ name, csv, want string }{
		{"empty file", "", `trace t.csv: empty file (want a header row: arrival_s, prompt_tokens, output_tokens[, prefix_group, prefix_tokens][, session_id, turn, think_s][, priority])`},
		{"header only", h, "trace t.csv: no requests"},
		{"missing column", "arrival_s,prompt_tokens\n0,10\n", `trace t.csv: missing column "output_tokens"`},
		{"bad arrival", h + "0,10,5\nsoon,10,5\n", `trace t.csv line 3: arrival_s: must be a decimal number of seconds in [0, 1e+08], got "soon"`},
		{"negative arrival", h + "0,10,5\n1,10,5\n-1,10,5\n", `trace t.csv line 4: arrival_s: must be a decimal number of seconds in [0, 1e+08], got "-1"`},
		{"nan arrival", h + "NaN,10,5\n", `trace t.csv line 2: arrival_s: must be a decimal number of seconds in [0, 1e+08], got "NaN"`},
		{"overflowing arrival", h + "1e300,10,5\n", `trace t.csv line 2: arrival_s: must be a decimal number of seconds in [0, 1e+08], got "1e300"`},
		{"bad prompt", h + "0,ten,5\n", `trace t.csv line 2: prompt_tokens: must be an integer in [1, 10000000], got "ten"`},
		{"fractional prompt", h + "0,10.5,5\n", `trace t.csv line 2: prompt_tokens: must be an integer in [1, 10000000], got "10.5"`},
		{"zero prompt", h + "0,0,5\n", `trace t.csv line 2: prompt_tokens: must be an integer in [1, 10000000], got "0"`},
		{"negative output", h + "0,10,-5\n", `trace t.csv line 2: output_tokens: must be an integer in [1, 10000000], got "-5"`},
		{"empty field", h + "0,,5\n", `trace t.csv line 2: prompt_tokens: must be an integer in [1, 10000000], got ""`},
		{"missing field", h + "0,10,5\n1,10\n", `trace t.csv: record on line 3: wrong number of fields`},
		{"prefix over prompt", hg + "0,10,5,g,11\n", `trace t.csv line 2: prefix_tokens: must be an integer in [0, prompt_tokens=10] when prefix_group is set, got "11"`},
		{"prefix negative", hg + "0,10,5,g,-1\n", `trace t.csv line 2: prefix_tokens: must be an integer in [0, prompt_tokens=10] when prefix_group is set, got "-1"`},
		{"group without prefix column", "arrival_s,prompt_tokens,output_tokens,prefix_group\n0,10,5,g\n", `trace t.csv line 2: prefix_tokens: must be an integer in [0, prompt_tokens=10] when prefix_group is set, got ""`},
		{"line numbers count blank lines", h + "0,10,5\n\n\n1,x,5\n", `trace t.csv line 5: prompt_tokens: must be an integer in [1, 10000000], got "x"`},
		{"bad quoting", h + "0,\"10,5\n", `trace t.csv: parse error on line 2`},
	}
	checkTraceErrors(t, cases)
}

// checkTraceErrors parses each case's CSV and checks that the error
// starts with the wanted text.
func checkTraceErrors(t *testing.T, cases []struct{ name, csv, want string }) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = parseTrace(strings.NewReader(c.csv), "t.csv") })
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "got  %q\nwant %q…", err.Error(), c.want)
		})
	}
}

func TestReadTraceFileErrors(t *testing.T) {
	_, err := ReadTrace(filepath.Join(t.TempDir(), "missing.csv"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.True(t, strings.HasPrefix(err.Error(), "workload.trace.path: "), err.Error())

	empty := filepath.Join(t.TempDir(), "empty.csv")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = ReadTrace(empty)
	require.Error(t, err)
	assert.Contains(t, err.Error(), empty+": empty file")
}

// Hex floats and digit separators are not decimal numbers of seconds.
func TestParseTraceRejectsNonDecimalArrivals(t *testing.T) {
	for _, v := range []string{"0x1p3", "1_0", "inf"} {
		_, err := parseTrace(strings.NewReader("arrival_s,prompt_tokens,output_tokens\n"+v+",10,2\n"), "t.csv")
		assert.ErrorContains(t, err, "arrival_s: must be a decimal number", v)
	}
	reqs, err := parseTrace(strings.NewReader("\ufeffarrival_s,prompt_tokens,output_tokens\n1.5e1,10,2\n"), "t.csv")
	require.NoError(t, err, "a UTF-8 BOM before the header is ignored")
	assert.Equal(t, int64(15e9), reqs[0].At)
}

// A misspelt optional column used to be ignored: "priorty" left every
// request at priority 0 with exit 0 (newcomer2, finding E2). A column
// near a known one is refused with the likely name; other extra columns
// (what --requests-csv adds) are still ignored.
func TestParseTraceRefusesMisspeltColumns(t *testing.T) {
	cases := []struct{ name, csv, want string }{
		{"priority", "arrival_s,prompt_tokens,output_tokens,priorty\n0,10,5,1\n",
			`trace t.csv: column "priorty" is not a trace column; did you mean "priority"? (trace columns: arrival_s, prompt_tokens, output_tokens, prefix_group, prefix_tokens, session_id, turn, think_s, priority; others are ignored)`},
		{"prefix tokens", "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_token\n0,10,5,g,4\n", `trace t.csv: column "prefix_token" is not a trace column; did you mean "prefix_tokens"?`},
		{"another case", "arrival_s,prompt_tokens,Output_Tokens\n0,10,5\n", `trace t.csv: column "Output_Tokens" is not a trace column; did you mean "output_tokens"?`},
		{"session", "sesion_id,turn,think_s,arrival_s,prompt_tokens,output_tokens\na,1,,0,10,5\n", `trace t.csv: column "sesion_id" is not a trace column; did you mean "session_id"?`},
		{"think time", "session_id,turn,think,arrival_s,prompt_tokens,output_tokens\na,1,,0,10,5\n", `trace t.csv: column "think" is not a trace column; did you mean "think_s"?`},
		{"turns", "session_id,turns,arrival_s,prompt_tokens,output_tokens\na,1,0,10,5\n", `trace t.csv: column "turns" is not a trace column; did you mean "turn"?`},
		{"required column misspelt", "arival_s,prompt_tokens,output_tokens\n0,10,5\n", `trace t.csv: column "arival_s" is not a trace column; did you mean "arrival_s"?`},
	}
	checkTraceErrors(t, cases)
}

func TestParseTraceIgnoresOtherColumns(t *testing.T) {
	// --requests-csv's header: it reads back as a trace (no column of it
	// is within a typo of a trace column it lacks).
	const h = "request_id,stage,engine,prefill_engine,kv_transfer_done_s,arrival_s,first_token_s,finish_s,ttft_ms,e2el_ms,prompt_tokens,cached_tokens,output_tokens,preemptions,failed,session_id,turn,priority,replica\n"
	reqs, err := parseTrace(strings.NewReader(h+"0,0,0,0,-1,0.5,0.6,1,100,500,100,0,8,0,false,0,0,0,0\n"), "t.csv")
	require.NoError(t, err)
	require.Len(t, reqs, 1)
	assert.Equal(t, int64(500e6), reqs[0].At)
	assert.Equal(t, 100, int(reqs[0].PromptTokens))
	// a column far from every trace column, or one the header also has
	// spelt right, is ignored
	reqs, err = parseTrace(strings.NewReader("arrival_s,prompt_tokens,output_tokens,priority,priorty,model\n0,10,5,2,9,llama\n"), "t.csv")
	require.NoError(t, err)
	assert.Equal(t, 2, reqs[0].Priority)
}

// A trace's session labels come back in session-number order (sessions
// are numbered by their first turn's arrival), so a report can print the
// label the user wrote (newcomer2 E3: --requests-csv said session 1 for
// "user0", 2 for "user1", …).
func TestTraceSessionLabels(t *testing.T) {
	reqs, labels, err := parseTraceSessions(strings.NewReader("session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens\n"+
		"bob,1,,0.7,580,24\nalice,1,,0.0,600,20\nalice,2,4.5,,900,15\n,,,0.3,100,5\n"), "t.csv")
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob"}, labels)
	var got []string
	for _, r := range reqs {
		if r.Session() > 0 {
			got = append(got, labels[r.Session()-1])
		} else {
			got = append(got, "")
		}
	}
	assert.Equal(t, []string{"alice", "alice", "", "bob"}, got, "request order: arrival, a session's turns after its first")
}
