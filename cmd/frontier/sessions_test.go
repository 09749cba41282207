package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionArgs is a small chat workload from flags alone.
var sessionArgs = []string{"simulate", "--quiet", "--dataset-name", "sessions", "--num-sessions", "6", "--concurrent-users", "3",
	"--num-turns", "3", "--system-prompt-len", "64", "--user-message-len", "40", "--session-output-len", "20", "--think-time", "0.5"}

// Sessions from flags: one row per turn in --requests-csv with its
// session and turn, each later turn sent exactly think time after the
// previous turn's finish, a per-turn table in the summary and per_turn in
// the result JSON.
func TestSimulateSessionsFromFlags(t *testing.T) {
	dir := t.TempDir()
	reqs, result := filepath.Join(dir, "r.csv"), filepath.Join(dir, "res.json")
	out, stderr, err := run(t, append(append([]string{}, sessionArgs...), "--requests-csv", reqs, "--save-result", "--result-filename", result)...)
	require.NoError(t, err, stderr)
	assert.Equal(t, 18, summaryInt(t, out, "Successful requests:"))
	assert.Contains(t, out, "sessions: 3 concurrent users (closed loop), 6 sessions")
	assert.Contains(t, out, "Per turn (sessions)")
	rows := readCSV(t, reqs)
	sess, turn, arrival, finish, prompt := column(t, rows, "session_id"), column(t, rows, "turn"), column(t, rows, "arrival_s"),
		column(t, rows, "finish_s"), column(t, rows, "prompt_tokens")
	f := func(r []string, c int) float64 {
		v, err := strconv.ParseFloat(r[c], 64)
		require.NoError(t, err)
		return v
	}
	for i, r := range rows[1:] {
		assert.Equal(t, strconv.Itoa(1+i/3), r[sess])
		assert.Equal(t, strconv.Itoa(1+i%3), r[turn])
		// 5 + 64 system; + 5 + 40 + 5 per message; + 20 per reply
		assert.Equal(t, strconv.Itoa([]int{119, 189, 259}[i%3]), r[prompt])
		if i%3 > 0 {
			assert.InDelta(t, f(rows[i], finish)+0.5, f(r, arrival), 1e-9, "row %d sent think time after the previous turn ended", i+1)
		}
	}
	var res map[string]any
	data, err := os.ReadFile(result)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Nil(t, res["request_rate"], "no single request rate")
	pt := res["frontier"].(map[string]any)["per_turn"].([]any)
	require.Len(t, pt, 4, "turns 1-3 and all")
	last := pt[3].(map[string]any)
	assert.Equal(t, 0.0, last["turn"])
	assert.Equal(t, 18.0, last["completed"])
	assert.Greater(t, last["prefix_cache_hit_rate"], 0.5)
	assert.Equal(t, "openai-sessions", filepath.Base(defaultName(t, sessionArgs))[:15])
}

// defaultName is the result file bench serve would name for args.
func defaultName(t *testing.T, args []string) string {
	dir := t.TempDir()
	_, stderr, err := run(t, append(append([]string{}, args...), "--save-result", "--result-dir", dir)...)
	require.NoError(t, err, stderr)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0]
}

// A conversation that outgrows max_model_len drops its oldest turns, with
// a note; one whose first turn does not fit is refused (exit 2).
func TestSessionsMaxModelLen(t *testing.T) {
	out, stderr, err := run(t, append(append([]string{}, sessionArgs...), "--max-model-len", "240")...)
	require.NoError(t, err, stderr)
	assert.Equal(t, 18, summaryInt(t, out, "Successful requests:"), "nothing rejected")
	assert.Contains(t, stderr, "note: sessions: 6 of 18 turns would exceed max_model_len 240")
	_, _, err = run(t, append(append([]string{}, sessionArgs...), "--max-model-len", "130")...)
	require.Error(t, err)
	var ue usageError
	assert.True(t, errors.As(err, &ue))
	assert.Contains(t, err.Error(), "workload.sessions: session 1's first turn needs 119 prompt + 20 output tokens, more than max_model_len 130")
}

func TestSessionAndLengthsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "l.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"prompt_len\": 10, \"output_len\": 5}\n{\"prompt_len\": 10, \"output_len\": 2.5}\n"), 0o644))
	with := func(extra ...string) []string { return append(append([]string{}, sessionArgs...), extra...) }
	lengths := []string{"simulate", "--quiet", "--dataset-name", "lengths"}
	cases := []usageCase{
		{"zero turns", with("--num-turns", "0"), "--num-turns: must be an integer in [1, 10000], got 0"},
		{"bad turns form", with("--num-turns", "3..5"), `--num-turns: must be N or uniform:MIN:MAX, got "3..5"`},
		{"negative think", with("--think-time", "-2"), "--think-time: must be a number in [0, 1e+08], got -2"},
		{"bad think form", with("--think-time", "gamma:2"), `--think-time: must be seconds S, exponential:MEAN or uniform:MIN:MAX, got "gamma:2"`},
		{"users beyond sessions", with("--concurrent-users", "9"), "--concurrent-users: must be in [1, num_sessions = 6]"},
		{"session flag on random", withTiny("--num-turns", "3"), "--num-turns: only for --dataset-name sessions, but the workload's dataset is random"},
		{"random flag on sessions", with("--random-input-len", "3"), "--random-input-len: only for the random dataset"},
		{"users with a rate", with("--request-rate", "3"), "--request-rate: not used with workload.sessions.concurrent_users"},
		{"lengths without a path", lengths, "--dataset-path: required"},
		{"lengths file missing", append(lengths, "--dataset-path", filepath.Join(dir, "none.jsonl")), "--dataset-path: open"},
		{"lengths non-integer", append(lengths, "--dataset-path", bad), bad + " line 2: output_len: must be an integer in [1, 10000000], got \"2.5\""},
		{"dataset-path on random", withTiny("--dataset-name", "random", "--dataset-path", bad), "--dataset-path: only for --dataset-name lengths or trace, but the workload's dataset is random"},
		{"dataset-path alone is a trace", withTiny("--dataset-path", bad), "only for the random dataset, but the workload's dataset is trace"},
		{"random prefix on lengths", append(lengths, "--dataset-path", bad, "--random-prefix-len", "4"), "--random-prefix-len: only for the random dataset"},
	}
	checkUsageErrors(t, cases)
}

// usageCase is a command line that must fail as bad input (exit 2) with
// a message containing want, simulating nothing.
type usageCase struct {
	name string
	args []string
	want string
}

func checkUsageErrors(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireBadInput(t, c.args, c.want) })
	}
}

// requireBadInput runs args, which must fail as bad input (exit 2) with a
// message containing every want, and print no result (simulate's,
// bench latency's or bench throughput's).
func requireBadInput(t *testing.T, args []string, want ...string) {
	t.Helper()
	out, _, err := run(t, args...)
	require.Error(t, err)
	var ue usageError
	assert.True(t, errors.As(err, &ue), "want a usageError (exit 2), got %T: %v", err, err)
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
	for _, result := range []string{"Successful requests:", "latency:", "Throughput:"} {
		assert.NotContains(t, out, result, "nothing is simulated")
	}
}

// --dataset-name lengths draws --num-prompts samples; --random-prefix-len
// makes every random prompt longer by the shared prefix, and its blocks hit.
func TestLengthsAndRandomPrefixFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "l.csv")
	require.NoError(t, os.WriteFile(file, []byte("prompt_len,output_len\n100,4\n200,8\n"), 0o644))
	out, stderr, err := run(t, "simulate", "--quiet", "--dataset-name", "lengths", "--dataset-path", file, "--num-prompts", "7")
	require.NoError(t, err, stderr)
	assert.Equal(t, 7, summaryInt(t, out, "Successful requests:"))
	in := summaryInt(t, out, "Total input tokens:")
	assert.Zero(t, (in-700)%100, "every prompt is 100 or 200 tokens: %d", in)
	out, stderr, err = run(t, "simulate", "--quiet", "--dataset-name", "lengths", "--dataset-path", file, "--num-prompts", "7", "--no-oversample")
	require.NoError(t, err, stderr)
	assert.Equal(t, 2, summaryInt(t, out, "Successful requests:"))

	reqs := filepath.Join(dir, "r.csv")
	out, stderr, err = run(t, withTiny("--random-prefix-len", "32", "--requests-csv", reqs)...)
	require.NoError(t, err, stderr)
	assert.Equal(t, 20*96, summaryInt(t, out, "Total input tokens:"))
	rows := readCSV(t, reqs)
	cached := column(t, rows, "cached_tokens")
	hits := 0
	for _, r := range rows[1:] {
		if r[cached] == "32" {
			hits++
		}
	}
	assert.Equal(t, 19, hits, "every request after the first hits the 2 shared blocks")
}
