package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// PeakConcurrency counts as bench serve's event sweep does (every send
// +1 and finish −1 sorted by time, a finish first at a tie; the peak of
// the running sum) on random runs with many ties, zero-length, failed
// and unsent requests.
func TestPeakConcurrencyMatchesEventSweep(t *testing.T) {
	sweep := func(reqs []RequestRecord) int {
		type ev struct {
			t     int64
			delta int
		}
		var evs []ev
		for _, r := range reqs {
			if !r.Failed && r.FinishNs >= 0 && r.SendNs >= 0 {
				evs = append(evs, ev{r.SendNs, 1}, ev{r.FinishNs, -1})
			}
		}
		slices.SortFunc(evs, func(a, b ev) int {
			if a.t != b.t {
				return int(a.t - b.t)
			}
			return a.delta - b.delta
		})
		cur, peak := 0, 0
		for _, e := range evs {
			cur += e.delta
			peak = max(peak, cur)
		}
		return peak
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for run := 0; run < 500; run++ {
		reqs := make([]RequestRecord, 1+rng.IntN(60))
		for i := range reqs {
			send := int64(rng.IntN(20))
			reqs[i] = RequestRecord{SendNs: send, FinishNs: send + int64(rng.IntN(10)), Failed: rng.IntN(8) == 0}
			if rng.IntN(10) == 0 {
				reqs[i].SendNs, reqs[i].FinishNs = -1, -1
			}
		}
		require.Equal(t, sweep(reqs), PeakConcurrency(reqs), "run %d", run)
		// In a buffer of room for every completed request (Summarize's),
		// or too small (appending past a half allocates): the same peak.
		n := 0
		for _, r := range reqs {
			if !r.Failed && r.FinishNs >= 0 {
				n++
			}
		}
		require.Equal(t, sweep(reqs), peakConcurrency(reqs, make([]int64, 2*n)), "run %d", run)
		require.Equal(t, sweep(reqs), peakConcurrency(reqs, make([]int64, 2)), "run %d", run)
	}
}
