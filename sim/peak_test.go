package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"frontier/sim/workload"
)

// peakRun feeds peakTokens sends and ends as the simulator would.
func peakRun(r0Fails bool) float64 {
	const s = int64(1e9)
	mk := func(send int64, chunks ...int64) *record {
		r := &record{recordHead: recordHead{out: &RequestRecord{}}}
		r.out.SendNs = send
		r.chunks = chunks
		return r
	}
	r0 := mk(0, 4*s/10, 8*s/10, 12*s/10)
	r1 := mk(3*s/10, 8*s/10, 12*s/10)
	r2 := mk(35*s/100, 8*s/10, 12*s/10, 16*s/10)
	var p peakTokens
	for _, r := range []*record{r0, r1, r2} {
		p.send(r)
	}
	end := func(r *record, failed bool) {
		r.done = true
		p.end(r, failed)
	}
	end(r1, false) // r0, sent earlier, may still complete: r1 waits
	end(r0, r0Fails)
	end(r2, false)
	return p.peak()
}

// bench serve's max_output_tokens_per_s by hand. r0 (sent at 0 s, chunks
// at 0.4, 0.8, 1.2 s) times out; r1 (sent 0.3 s: 0.8, 1.2) and r2 (sent
// 0.35 s: 0.8, 1.2, 1.6) complete. Successful requests only, buckets from
// the earliest successful start, 0.3 s: second 0 holds 0.8, 1.2, 0.8, 1.2
// (4), second 1 holds 1.6 (1): peak 4. Counting r0 would give 7 there.
// When r0 completes, the buckets start at 0 s: second 0 holds 0.4, 0.8,
// 0.8, 0.8 (4), second 1 holds 1.2 ×3 and 1.6 (4): peak 4; without r0's
// chunks that origin would give 3.
func TestPeakOutputTokensPerSecond(t *testing.T) {
	assert.Equal(t, 4.0, peakRun(true))
	assert.Equal(t, 4.0, peakRun(false))

	var p peakTokens
	assert.Zero(t, p.peak(), "no completed request")
}

// Wired into the run: the two-request timeline (chunks at 10, 20, 30 ms
// and 20, 30 ms) puts 5 chunks in second 0.
func TestPeakInARun(t *testing.T) {
	s := tinySim(false, []workload.Request{
		{ID: 0, PromptTokens: 40, OutputTokens: 3, ContentKey: 1},
		{ID: 1, PromptTokens: 50, OutputTokens: 2, ContentKey: 2},
	}, nil)
	res := s.Run()
	assert.Equal(t, 5.0, res.MaxOutputTokensPerS)
	assert.Empty(t, s.peak.pending)
}

// A run far longer than 48 days keeps its late seconds in a map: chunks at
// 0 s and twice at ≈ 1.16 · 10⁸ s (3.7 years) give a peak of 2 without a
// 10⁸-entry slice.
func TestPeakSparseSeconds(t *testing.T) {
	var p peakTokens
	late := int64(116e15)
	r := &record{recordHead: recordHead{out: &RequestRecord{}, chunks: []int64{0, late, late + 1}}}
	p.send(r)
	r.done = true
	p.end(r, false)
	assert.Equal(t, 2.0, p.peak())
	assert.Len(t, p.buckets, 1)
}
