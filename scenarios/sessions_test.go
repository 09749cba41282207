package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sessionsDoc(extra string) string {
	return doc("", "dataset: sessions\nsessions:\n  num_sessions: 4\n  num_turns: 3\n  user_message_len: 20\n  output_len: 10\n"+extra)
}

func TestSessionsParse(t *testing.T) {
	s, err := parseValid(sessionsDoc("  think_time_s: {distribution: exponential, mean: 5}\n  tool_latency_s: 0.5\n  concurrent_users: 2\n"))
	require.NoError(t, err)
	w := s.Workload.Sessions
	assert.Equal(t, Fixed(3), w.NumTurns, "a plain number is fixed")
	assert.Equal(t, Distribution{Distribution: "exponential", Mean: 5}, w.ThinkTimeS)
	assert.Equal(t, Fixed(0.5), w.ToolLatencyS)
	assert.Equal(t, 5, w.ChatTemplateTokens, "Llama-3's template by default")
	assert.Equal(t, 1, w.NumUniqueSystemPrompts)
	assert.Equal(t, 1, w.NumUsersPerSystemPrompt)
	assert.Equal(t, 2, *w.ConcurrentUsers)
	s, err = parseValid(strings.Replace(sessionsDoc("  chat_template_tokens: 0\n"), "num_turns: 3", "num_turns: {distribution: uniform, min: 2, max: 6}", 1))
	require.NoError(t, err)
	assert.Equal(t, 0, s.Workload.Sessions.ChatTemplateTokens, "an explicit 0 stays 0")
	assert.Equal(t, Distribution{Distribution: "uniform", Min: 2, Max: 6}, s.Workload.Sessions.NumTurns)
}

func TestSessionsBadInput(t *testing.T) {
	turns := func(v string) string {
		return strings.Replace(sessionsDoc(""), "num_turns: 3", "num_turns: "+v, 1)
	}
	cases := []struct{ name, yaml, want string }{
		{"zero turns", turns("0"), "workload.sessions.num_turns: must be an integer in [1, 10000], got 0"},
		{"fractional turns", turns("2.5"), "workload.sessions.num_turns: must be an integer in [1, 10000], got 2.5"},
		{"turns missing", strings.Replace(sessionsDoc(""), "    num_turns: 3\n", "", 1), "workload.sessions.num_turns: required"},
		{"turns exponential", turns("{distribution: exponential, mean: 3}"), "workload.sessions.num_turns: must be fixed or uniform (integers), got exponential"},
		{"turns uniform reversed", turns("{distribution: uniform, min: 5, max: 2}"), "workload.sessions.num_turns.max: must be an integer in [1, 10000] and ≥ min (5), got 2"},
		{"turns text", turns("many"), `workload.sessions.num_turns: must be a number or {distribution: fixed|exponential|uniform, …}, got "many"`},
		{"negative think", sessionsDoc("  think_time_s: -1\n"), "workload.sessions.think_time_s: must be a number in [0, 1e+08], got -1"},
		{"negative think mean", sessionsDoc("  think_time_s: {distribution: exponential, mean: -2}\n"), "workload.sessions.think_time_s.mean: must be a number in [0, 1e+08], got -2"},
		{"unknown distribution", sessionsDoc("  think_time_s: {distribution: normal, mean: 2}\n"), `workload.sessions.think_time_s.distribution: must be one of fixed, exponential, uniform, got "normal"`},
		{"unknown distribution key", sessionsDoc("  think_time_s: {distribution: fixed, stddev: 2}\n"), "workload.sessions.think_time_s.stddev: unknown key (allowed: distribution, value, mean, min, max)"},
		{"negative tool latency", sessionsDoc("  tool_latency_s: {distribution: uniform, min: -1, max: 2}\n"), "workload.sessions.tool_latency_s.min: must be a number in [0, 1e+08], got -1"},
		{"no sessions", strings.Replace(sessionsDoc(""), "num_sessions: 4", "num_sessions: 0", 1), "workload.sessions.num_sessions: required, an integer ≥ 1 (got 0)"},
		{"users over sessions", sessionsDoc("  concurrent_users: 5\n"), "workload.sessions.concurrent_users: must be in [1, num_sessions = 4] or null (sessions start by workload.arrivals), got 5"},
		{"users and rate", sessionsDoc("  concurrent_users: 2\narrivals: {request_rate: 3}\n"), "workload.arrivals.request_rate: not used with workload.sessions.concurrent_users"},
		{"stages", sessionsDoc("arrivals: {stages: [{rate: 1, duration_s: 10}]}\n"), "workload.arrivals.stages: not supported with dataset sessions"},
		{"message 0", strings.Replace(sessionsDoc(""), "user_message_len: 20", "user_message_len: 0", 1), "workload.sessions.user_message_len: must be ≥ 1, got 0"},
		{"template negative", sessionsDoc("  chat_template_tokens: -1\n"), "workload.sessions.chat_template_tokens: must be ≥ 0, got -1"},
		{"tool probability", sessionsDoc("  tool_call_probability: 1.5\n"), "workload.sessions.tool_call_probability: must be in [0, 1], got 1.5"},
		{"tool without result", sessionsDoc("  tool_call_probability: 0.5\n"), "workload.sessions.tool_result_len: must be ≥ 1 when tool_call_probability > 0, got 0"},
		{"range ratio", sessionsDoc("  range_ratio: 1\n"), "workload.sessions.range_ratio: must be in [0, 1), got 1"},
		{"too many turns", strings.Replace(turns("10000"), "num_sessions: 4", "num_sessions: 1000", 1), "workload.sessions: num_sessions × num_turns must be ≤ 2000000 requests, got 1000 × 10000"},
		{"block missing", doc("", "dataset: sessions"), "workload.sessions: required when dataset is sessions"},
		{"lengths path", doc("", "dataset: lengths\nlengths: {num_prompts: 5}"), "workload.lengths.path: required when dataset is lengths"},
		{"lengths num_prompts", doc("", "dataset: lengths\nlengths: {path: l.jsonl}"), "workload.lengths.num_prompts: must be ≥ 1, got 0"},
		{"random prefix", doc("", "random: {num_prompts: 1, input_len: 8, output_len: 8, prefix_len: -1}"), "workload.random.prefix_len: must be ≥ 0, got -1"},
		{"random prefix huge", doc("", "random: {num_prompts: 1, input_len: 8, output_len: 8, prefix_len: 20000000}"), "workload.random.prefix_len: must be ≤ 10000000, got 20000000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = parseValid(c.yaml) })
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "got %q, want it to start with %q", err.Error(), c.want)
		})
	}
}
