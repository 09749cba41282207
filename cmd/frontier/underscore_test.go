package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vLLM's parser takes --max_num_seqs for --max-num-seqs (a newcomer's
// `--max_num_seqs 64` got "unknown flag"): the same run either way, on
// simulate and on a planning command, and a bad value names the flag.
func TestUnderscoreFlagsAreDashFlags(t *testing.T) {
	dash, _, err := run(t, withTiny("--max-num-seqs", "4", "--request-rate", "50")...)
	require.NoError(t, err)
	under, _, err := run(t, withTiny("--max_num_seqs", "4", "--request_rate=50")...)
	require.NoError(t, err)
	assert.Equal(t, dash, under)
	other, _, err := run(t, withTiny("--request-rate", "50")...)
	require.NoError(t, err)
	assert.NotEqual(t, dash, other, "--max_num_seqs 4 took effect")

	_, _, err = run(t, withTiny("--max_num_seqs", "-1")...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--max-num-seqs")

	dashSweep, _, err := run(t, append(append([]string{}, tinySweep...), "--vary", "max-num-seqs=4,8", "--max-num-batched-tokens", "1024")...)
	require.NoError(t, err)
	underSweep, _, err := run(t, append(append([]string{}, tinySweep...), "--vary", "max_num_seqs=4,8", "--max_num_batched_tokens", "1024")...)
	require.NoError(t, err, "a --vary key takes underscores too (attack12)")
	assert.Equal(t, dashSweep, underSweep)
}
