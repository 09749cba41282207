package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Errors about values typed as flags name the flag, as simulate's others
// do (nameTheFlag), also for a field of a distribution flag (--num-turns
// uniform:3:1), the replicas flags, and bench throughput's --prefix-len.
// On main they named scenario keys the user never wrote:
// workload.sessions.num_turns.max, replicas.count (--replicas),
// replicas.weights.queue (--router-weights), workload.random.prefix_len.
func TestAttackErrorsNameTheFlag(t *testing.T) {
	sessions := func(args ...string) []string {
		return append([]string{"simulate", "--quiet", "--dataset-name", "sessions", "--num-sessions", "2"}, args...)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{sessions("--num-turns", "uniform:3:1"), "--num-turns: max: must be an integer in [1, 10000] and ≥ min (3), got 1"},
		{sessions("--think-time", "exponential:-1"), "--think-time: mean: must be a number in [0, 1e+08], got -1"},
		{sessions("--tool-latency", "uniform:-1:2"), "--tool-latency: min: must be a number in [0, 1e+08], got -1"},
		{withTiny("--replicas", "0"), "--replicas: must be in [1, 1024], got 0"},
		{withTiny("--replicas", "2", "--router-weights", "queue=-2,kv-usage=-3"), "--router-weights: kv-usage: must be in [0, 1e6], got -3"},
		{withTiny("--replicas", "2", "--router-metrics-interval-ms", "-1"), "--router-metrics-interval-ms: must be in [0, 1e+11] ms (0 = live), got -1"},
		{[]string{"bench", "throughput", "--input-len", "10", "--prefix-len", "-1"}, "--prefix-len: must be ≥ 0, got -1"},
		// on main the last weight of a scorer named twice won silently
		{withTiny("--replicas", "2", "--router-weights", "queue=1,kv-usage=1,queue=2"), `--router-weights: scorer "queue" given twice (queue=1, queue=2)`},
	} {
		_, _, err := run(t, c.args...)
		require.Error(t, err, c.args)
		assert.Equal(t, c.want, err.Error(), c.args)
		assert.Equal(t, 2, exitCode(err), c.args)
	}
}

// The offline benchmarks take the LLM class's batch defaults, and a
// defaulted max_num_seqs is capped at the token budget as vLLM's
// EngineArgs caps it: --max-num-batched-tokens 512 alone runs 512
// sequences (on main: refused, max_num_seqs 1024 > 512).
func TestBenchDefaultSeqsCappedByBudget(t *testing.T) {
	_, stderr, err := run(t, "bench", "throughput", "--input-len", "16", "--output-len", "4", "--num-prompts", "8", "--max-num-batched-tokens", "512")
	require.NoError(t, err)
	assert.Contains(t, stderr, "max_num_batched_tokens 512, max_num_seqs 512,")
	_, stderr, err = run(t, "bench", "throughput", "--input-len", "16", "--output-len", "4", "--num-prompts", "8")
	require.NoError(t, err)
	assert.Contains(t, stderr, "max_num_batched_tokens 16384, max_num_seqs 1024,")
	_, stderr, err = run(t, withTiny("--max-num-batched-tokens", "512")...)
	require.NoError(t, err, stderr)
}
