package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/require"
)

// After the build the collector stays off until the heap grows, and its
// first collection puts GOGC and the memory limit back.
func TestResumeGCAfterFirstCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	// gogc reads GOGC without setting it: a read by SetGCPercent(-1) and
	// back would race the cleanup (set to 100 between the two, then
	// overwritten with -1), which failed ~1 run in 20.
	gogc := func() int {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return int(s[0].Value.Uint64())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	resumeGC(100)
	require.Equal(t, -1, gogc(), "off until the first collection")
	require.Less(t, debug.SetMemoryLimit(-1), int64(math.MaxInt64), "a memory limit stands in")
	var keep [][]byte
	for i := 0; i < 1<<16 && ms.NumGC == before; i++ {
		keep = append(keep[:0], make([]byte, 64<<10)) // garbage until a collection
		runtime.ReadMemStats(&ms)
	}
	require.Greater(t, ms.NumGC, before, "the heap's growth brings a collection")
	for i := 0; i < 1e6 && gogc() != 100; i++ {
		runtime.Gosched() // the cleanup runs on the runtime's own goroutine
	}
	require.Equal(t, 100, gogc(), "GOGC back after the first collection")
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "the limit lifted")
	_ = keep
}
