package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// queueRecords sends n requests 100 ms apart; request i waits wait(i) ms
// for its first token and finishes 1 s after it.
func queueRecords(n int, wait func(i int) int64) []RequestRecord {
	var out []RequestRecord
	for i := range n {
		send := int64(i) * 100 * ms
		first := send + wait(i)*ms
		out = append(out, RequestRecord{ID: int32(i), SendNs: send, FirstTokenNs: first, FinishNs: first + 1000*ms, OutputTokens: 10})
	}
	return out
}

// A steady queue (every TTFT 50 ms) is judged and not growing: TTFT
// medians 50 ms in every quarter and, worked by hand for 100 requests over
// a 9.9 s send window (quarters of 2.475 s), about 10.5 requests in
// flight (each stays 1.05 s, one sent every 0.1 s) once the first second
// has filled the server.
func TestDetectGrowthSteady(t *testing.T) {
	g := DetectGrowth(queueRecords(100, func(int) int64 { return 50 }))
	require.True(t, g.Judged)
	assert.False(t, g.Growing)
	assert.Empty(t, g.Reason)
	assert.Equal(t, [4]float64{50, 50, 50, 50}, g.TTFTMs)
	assert.False(t, g.InFlightRamp, "a 1.05 s request is shorter than a 2.475 s quarter")
	for k := 1; k < 4; k++ {
		assert.InDelta(t, 10.5, g.InFlight[k], 0.5, "quarter %d", k)
	}
}

// A queue whose wait grows by 20 ms per request (the server serves one
// request per 120 ms while they arrive every 100 ms) is growing on both
// rules; the reason gives both series.
func TestDetectGrowthGrowing(t *testing.T) {
	g := DetectGrowth(queueRecords(100, func(i int) int64 { return int64(20 * i) }))
	require.True(t, g.Judged)
	require.True(t, g.Growing)
	// Quarter medians of 0, 20, …, 1980 ms over requests 0–24, 25–49, 50–74, 75–99
	// (the quarters of the 9.9 s window hold 25, 25, 25 and 25 sends).
	assert.Equal(t, [4]float64{240, 740, 1240, 1740}, g.TTFTMs)
	assert.Less(t, g.InFlight[1], g.InFlight[2])
	assert.Less(t, g.InFlight[2], g.InFlight[3])
	assert.Equal(t, "TTFT and the queue were still growing at the last send: median TTFT by quarter of the sends 240 → 740 → 1240 → 1740 ms, "+
		"requests in flight "+fmtSeries(g.InFlight), g.Reason)
}

func fmtSeries(v [4]float64) string {
	return fmt.Sprintf("%.0f → %.0f → %.0f → %.0f", v[0], v[1], v[2], v[3])
}

// No verdict without a spread of sends or enough requests; rejected
// requests do not count; a failed request without a token counts the
// time it waited.
func TestDetectGrowthEdges(t *testing.T) {
	atOnce := queueRecords(100, func(i int) int64 { return int64(20 * i) })
	for i := range atOnce {
		atOnce[i].FirstTokenNs -= atOnce[i].SendNs
		atOnce[i].FinishNs -= atOnce[i].SendNs
		atOnce[i].SendNs = 0
	}
	assert.False(t, DetectGrowth(atOnce).Judged, "rate inf: every request sent at t = 0")
	assert.False(t, DetectGrowth(queueRecords(39, func(i int) int64 { return int64(50 * i) })).Judged)

	timedOut := queueRecords(100, func(i int) int64 { return int64(20 * i) })
	for i := 50; i < 100; i++ { // the second half gives up after 300 ms without a token
		r := &timedOut[i]
		r.FirstTokenNs, r.FinishNs, r.Failed = -1, r.SendNs+300*ms, true
	}
	g := DetectGrowth(timedOut)
	require.True(t, g.Judged)
	assert.Equal(t, [4]float64{240, 740, 300, 300}, g.TTFTMs, "a timed-out request counts its 300 ms wait")
	assert.False(t, g.Growing, "waits capped by the timeout do not grow")

	rejected := queueRecords(100, func(int) int64 { return 50 })
	for i := 60; i < 100; i++ {
		rejected[i].Rejected, rejected[i].Failed = true, true
	}
	g = DetectGrowth(rejected)
	require.True(t, g.Judged, "60 requests over a 5.9 s window")
	assert.Equal(t, [4]float64{50, 50, 50, 50}, g.TTFTMs)
}

// Still filling: requests that last longer than a quarter of the sends
// ramp the queue up from empty; that is not judged as growth of the queue.
func TestDetectGrowthRamp(t *testing.T) {
	recs := queueRecords(100, func(int) int64 { return 50 })
	for i := range recs {
		recs[i].FinishNs = recs[i].FirstTokenNs + 5000*ms // 5 s > 2.475 s quarters
	}
	g := DetectGrowth(recs)
	require.True(t, g.Judged)
	assert.True(t, g.InFlightRamp)
	assert.Less(t, g.InFlight[1], g.InFlight[3], "in flight still rises")
	assert.False(t, g.Growing)
}

// The newcomer's run (Llama-3.1-8B on one H200, 2,000 requests of
// 1,024/256 tokens at 26 req/s, capacity ≈ 23.4 req/s): median TTFT by
// quarter went 144 → 219 → 354 → 479 ms. The old rule (last quarter over
// twice the first and 0.5 s above it) missed it; DetectGrowth and the
// overload note catch it, and the 20 req/s run stays quiet.
func TestOverloadNoteAt26RequestsPerSecond(t *testing.T) {
	if testing.Short() {
		t.Skip("two 2,000-request runs")
	}
	run := func(rate float64) *Result {
		sc := scenario("meta-llama/Llama-3.1-8B-Instruct", "h200-sxm", nil)
		sc.Deployment.MaxModelLen = 0
		sc.Workload.Random = &scenarios.RandomData{NumPrompts: 2000, InputLen: 1024, OutputLen: 256}
		sc.Workload.Arrivals.RequestRate = scenarios.Rate(rate)
		require.NoError(t, sc.Validate())
		s, _, err := Build(sc, Options{})
		require.NoError(t, err)
		return s.Run()
	}
	res := run(26)
	notes := Diagnose(res, true)
	g := res.Growth
	require.True(t, g.Growing)
	// By quarters of the send window (time, not request count) the
	// medians read about 147 → 221 → 358 → 478 ms.
	assert.Greater(t, g.TTFTMs[3], 1.8*g.TTFTMs[1])
	assert.Greater(t, g.InFlight[3], 1.8*g.InFlight[1])
	require.NotEmpty(t, notes)
	assert.Contains(t, notes[len(notes)-1], "overloaded: TTFT and the queue were still growing at the last send: median TTFT by quarter of the sends ")

	calm := run(20)
	for _, n := range Diagnose(calm, true) {
		assert.NotContains(t, n, "overloaded")
	}
	assert.True(t, calm.Growth.Judged)
	assert.False(t, calm.Growth.Growing)
}

// A dip in the second quarter followed by recovery is not growth. The
// newcomer's sweep point (Llama-3.1-70B TP4 on H200, 1,000 requests of
// 1,024/256 at 8 req/s, below its ~7.3–8 req/s capacity) read
// 179 → 136 → 175 → 175 ms (TTFT) and 69 → 51 → 65 → 71 (in flight): both
// series rise over the last three quarters only because the second one
// dipped, and end where the first quarter already was. The rule's
// reference is therefore the higher of the first two quarters (for in
// flight, the first quarter after the server has filled).
//
// By hand, 400 sends 100 ms apart (quarters of 9.975 s, 100 sends each):
// TTFT 180 ms in the first quarter, 135 in the second, 175 then 176 ms;
// the old rule (176 ≥ 1.25 × 135, 41 ms above it, strictly rising) called
// it growing. In flight: requests stay 4.0 s, 2.8 s, 4.0 s, 4.2 s by
// quarter, i.e. 40, 28, 40, 42 once settled. A quarter's average mixes
// in the previous quarter's requests while they leave: the second quarter
// holds 40 for 2.8 s, falls to 28 by 4 s, then 28 (319.8 request-seconds,
// summed request by request, / 9.975 s = 32.06); the third 28, rising to
// 40 by 4 s (358.2 / 9.975 = 35.91); the last 40, 42 from 4.2 s
// (410.7 / 9.975 = 41.17). The old rule: 41.17 ≥ 1.25 × 32.06, 9.1 above
// it, strictly rising: growing. The first quarter averages 32.18 over the
// whole quarter (60 requests × 4 s + the last 40 cut at 9.975 s: 321.0),
// as it fills from empty for 4 s, but 40 once filled (from its median E2E
// of 4.0 s on): against 40, 41.17 is no growth; against 32.18 it would be.
func TestDetectGrowthDipIsNotGrowth(t *testing.T) {
	wait := [4]int64{180, 135, 175, 176}
	stay := [4]int64{4000, 2800, 4000, 4200}
	var recs []RequestRecord
	for i := range 400 {
		q := i / 100
		send := int64(i) * 100 * ms
		recs = append(recs, RequestRecord{ID: int32(i), SendNs: send, FirstTokenNs: send + wait[q]*ms, FinishNs: send + stay[q]*ms, OutputTokens: 10})
	}
	g := DetectGrowth(recs)
	require.True(t, g.Judged)
	assert.Equal(t, [4]float64{180, 135, 175, 176}, g.TTFTMs)
	assert.False(t, g.InFlightRamp)
	assert.InDelta(t, 321.0/9.975, g.InFlight[0], 1e-9, "whole first quarter, filling included")
	assert.InDelta(t, 319.8/9.975, g.InFlight[1], 1e-9)
	assert.InDelta(t, 358.2/9.975, g.InFlight[2], 1e-9)
	assert.InDelta(t, 410.7/9.975, g.InFlight[3], 1e-9)
	assert.InDelta(t, 40.0, inFlightBetween(recs, 4000*ms, 9975*ms, recs[399].FinishNs), 1e-9, "the first quarter once filled")
	assert.False(t, g.Growing, g.Reason)
	assert.Empty(t, g.Reason)

	// The same shape continuing upward (the last quarter well above the
	// first) is still growth.
	for i := 300; i < 400; i++ {
		recs[i].FirstTokenNs = recs[i].SendNs + 240*ms
	}
	g = DetectGrowth(recs)
	assert.Equal(t, [4]float64{180, 135, 175, 240}, g.TTFTMs)
	assert.True(t, g.Growing, "240 ≥ 1.25 × 180 and 60 ms above it")
}

// The newcomer's run itself: Llama-3.1-70B TP4 on one H200 node, 1,000
// requests of 1,024/256 tokens at 8 req/s (the same rate with 500, 2,000
// and 4,000 requests drew no note). Its quarters dip and come back; no
// overload note.
func TestNoOverloadNoteOnADip(t *testing.T) {
	sc := scenario("meta-llama/Llama-3.1-70B-Instruct", "h200-sxm", func(d *scenarios.Deployment) { d.TensorParallelSize = 4 })
	sc.Deployment.MaxModelLen = 0
	sc.Workload.Random = &scenarios.RandomData{NumPrompts: 1000, InputLen: 1024, OutputLen: 256}
	sc.Workload.Arrivals.RequestRate = scenarios.Rate(8)
	require.NoError(t, sc.Validate())
	s, _, err := Build(sc, Options{})
	require.NoError(t, err)
	res := s.Run()
	notes := Diagnose(res, true)
	g := res.Growth
	require.True(t, g.Judged)
	assert.Less(t, g.TTFTMs[1], g.TTFTMs[0], "the second quarter dips")
	assert.Less(t, g.TTFTMs[3], GrowthRatio*g.TTFTMs[0], "and the last is back near the first")
	assert.False(t, g.Growing, g.Reason)
	for _, n := range notes {
		assert.NotContains(t, n, "overloaded")
	}
}

// A send window past 2^61 ns (a request rate of 1.5e-8 req/s: about 2
// years between sends) once overflowed (t − first) × 4 into a negative
// quarter index (panic: index out of range [-3]). The quarters are worked
// in 128-bit arithmetic: the same steady queue spread over such a window
// is judged, each quarter holds 25 sends, and a steady queue stays quiet.
func TestDetectGrowthLongWindow(t *testing.T) {
	const gap = int64(1) << 55 // ns between sends: 99 gaps ≈ 3.6e18 ns, × 4 past int64
	var recs []RequestRecord
	for i := range 100 {
		send := int64(i) * gap
		recs = append(recs, RequestRecord{ID: int32(i), SendNs: send, FirstTokenNs: send + 50*ms, FinishNs: send + 1050*ms, OutputTokens: 10})
	}
	var g Growth
	require.NotPanics(t, func() { g = DetectGrowth(recs) })
	require.True(t, g.Judged)
	assert.False(t, g.Growing)
	assert.Equal(t, [4]float64{50, 50, 50, 50}, g.TTFTMs)
	// One request in flight for 1.05 s of each quarter's ~2^59 ns: ~0.
	for k := range 4 {
		assert.InDelta(t, 0, g.InFlight[k], 1e-6, "quarter %d", k)
	}
}
