package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The newcomer's overloaded run says so in the summary and in a note
// (DetectGrowth); a run the deployment keeps up with says neither.
func TestOverloadInSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2,000-request run")
	}
	out, stderr, err := run(t, "simulate", "--request-rate", "26", "--num-prompts", "2000",
		"--random-input-len", "1024", "--random-output-len", "256", "--quiet")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Load:                                    overloaded, the queue still grew at the last send (see the note)")
	assert.Contains(t, stderr, "note: overloaded: TTFT and the queue were still growing at the last send")

	out, stderr, err = run(t, withTiny("--request-rate", "5")...)
	require.NoError(t, err, stderr)
	assert.NotContains(t, out, "Load:")
	assert.NotContains(t, stderr, "overloaded")
}
