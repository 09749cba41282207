package sim

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Defect 5 (issue 10): memory is O(requests in flight) plus one
// RequestRecord per request. A run of 20,000 requests at a sustainable
// rate allocates at most 1.5 × sizeof(RequestRecord) more per request
// than one of 4,000 (a finished request's record, blocks, hashes and
// token state serve the next request); before, every request kept ~1 KB.
func TestMemoryPerFinishedRequest(t *testing.T) {
	allocated := func(n int) uint64 {
		sc := millionScenario(n)
		require.NoError(t, sc.Validate())
		st, err := Resolve(sc)
		require.NoError(t, err)
		s, err := st.NewSim(Options{})
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := s.Run()
		runtime.ReadMemStats(&after)
		require.Len(t, res.Requests, n)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(4000), allocated(20000)
	perRequest := (float64(large) - float64(small)) / 16000 // may be below 0: allocation no longer grows with requests
	record := float64(unsafe.Sizeof(RequestRecord{}))
	t.Logf("%.0f bytes per request (RequestRecord: %.0f)", perRequest, record)
	assert.Less(t, perRequest, 1.5*record)
}
