package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Diagnose flags merged SSE chunks above 10 % and a TTFT that keeps
// growing under a finite rate, and stays quiet otherwise.
func TestDiagnose(t *testing.T) {
	steady := func(n int, ttftAt func(i int) int64) *Result {
		res := &Result{ITL: NewHistogram()}
		for i := range n {
			send := int64(i) * 1e8
			first := send + ttftAt(i)
			res.Requests = append(res.Requests, RequestRecord{ID: int32(i), SendNs: send, FirstTokenNs: first, FinishNs: first + 9e8, OutputTokens: 10})
			for range 9 { // nine more chunks of one token each
				res.ITL.Add(1e8)
			}
		}
		return res
	}
	calm := steady(100, func(int) int64 { return 5e7 })
	assert.Empty(t, Diagnose(calm, true))

	merged := steady(100, func(int) int64 { return 5e7 })
	merged.ITL = NewHistogram()
	for range 100 * 4 { // 5 chunks carry each request's 10 tokens
		merged.ITL.Add(2e8)
	}
	notes := Diagnose(merged, false)
	require.Len(t, notes, 1)
	// Each request's 10 tokens over 0.9 s: TPOT 100 ms; 4 gaps of 200 ms each.
	assert.Equal(t, "API server saturated: 50 % of output tokens reached clients merged into a previous SSE chunk, "+
		"so a streaming client sees a chunk every 200 ms (mean ITL) although each request gains a token every 100 ms (mean TPOT): "+
		"the API server process, not the GPU, limits what users see; --api-server-count adds processes (vLLM's default: the DP size)", notes[0])

	growing := steady(100, func(i int) int64 { return int64(i) * 5e7 }) // 0 → 5 s
	notes = Diagnose(growing, true)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "overloaded: TTFT and the queue were still growing at the last send: median TTFT by quarter of the sends 600 → 1850 → 3100 → 4350 ms")
	assert.Empty(t, Diagnose(growing, false), "rate inf: queueing is the workload, not a finding")
}
