package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A misspelt command and an unknown benchmark are bad input (exit 2), not
// exit 1 or a help page with exit 0 (newcomer3 findings 1 and 2); `bench`
// alone still shows its help.
func TestUnknownCommandsAreBadInput(t *testing.T) {
	_, _, err := run(t, "nonsense")
	require.Error(t, err)
	assert.Equal(t, `unknown command "nonsense" for "frontier"`, err.Error())
	assert.Equal(t, 2, exitCode(err))

	_, _, err = run(t, "bench", "serve")
	require.Error(t, err)
	assert.Equal(t, `bench: unknown benchmark "serve": frontier bench latency | throughput; vllm bench serve (the online benchmark, through the API server) is frontier simulate, with bench serve's flags`, err.Error())
	assert.Equal(t, 2, exitCode(err))
	_, _, err = run(t, "bench", "latncy")
	require.Error(t, err)
	assert.Equal(t, `bench: unknown benchmark "latncy": frontier bench latency | throughput`, err.Error())

	out, _, err := run(t, "bench")
	require.NoError(t, err)
	assert.Contains(t, out, "latency")
	assert.Equal(t, 1, exitCode(errors.New("a run failed")))
}

// A flags-only run that leaves out a required value names the flag that
// gives it, not the YAML key (newcomer3 finding 3); with a scenario file
// the key and the file stay.
func TestRequiredValueNamesTheFlag(t *testing.T) {
	_, _, err := run(t, "simulate", "--dataset-name", "lengths")
	require.Error(t, err)
	assert.Equal(t, "--dataset-path: required when dataset is lengths (a JSONL or CSV file of prompt_len, output_len)", err.Error())
	assert.Equal(t, 2, exitCode(err))
}

// A closed-loop capacity is a whole number of concurrent requests, printed
// as one (newcomer3 finding 6: "176.00 concurrent requests").
func TestClosedLoopCapacityPrintsWholeRequests(t *testing.T) {
	out, _, err := run(t, "capacity", "--closed-loop", "--slo", "tpot:mean<=20ms", "--num-prompts", "400")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^Capacity: +\d+ concurrent requests \(\d+ concurrent requests failed: within `, out)
	assert.NotRegexp(t, `\d\.\d\d concurrent requests`, out)
}
