package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Goodput and peak concurrency on hand-made records.
func TestGoodputAndPeakConcurrency(t *testing.T) {
	ms := int64(1e6)
	rec := func(send, first, finish int64, out int, failed bool) RequestRecord {
		return RequestRecord{SendNs: send * ms, FirstTokenNs: first * ms, FinishNs: finish * ms, OutputTokens: int32(out), Failed: failed}
	}
	reqs := []RequestRecord{
		rec(0, 100, 1000, 10, false),    // ttft 100, tpot 100, e2el 1000
		rec(500, 800, 1400, 4, false),   // ttft 300, tpot 200, e2el 900
		rec(1000, 1050, 1050, 1, false), // ttft 50, one token: tpot 0
		rec(1200, 0, 2000, 0, true),     // failed: never good, not in flight
	}
	slo, err := ParseGoodput([]string{"ttft:200"})
	require.NoError(t, err)
	assert.Equal(t, 2, slo.Good(reqs))
	slo, err = ParseGoodput([]string{"ttft:300", "tpot:150"})
	require.NoError(t, err)
	assert.Equal(t, 2, slo.Good(reqs), "the second misses tpot")
	slo, err = ParseGoodput([]string{"e2el:950"})
	require.NoError(t, err)
	assert.Equal(t, 2, slo.Good(reqs))
	// [0,1000) and [500,1400) overlap; the third starts exactly when the
	// first ends (a finish comes before a send at the same instant).
	assert.Equal(t, 2, PeakConcurrency(reqs))

	for _, bad := range []string{"ttft", "ttft:0", "ttft:-5", "itl:5", "ttft:x", "ttft:1e13"} {
		_, err := ParseGoodput([]string{bad})
		assert.ErrorContains(t, err, "--goodput", bad)
	}
}
