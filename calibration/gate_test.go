package calibration

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentileByHand(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 10}
	tests := []struct {
		p, want float64
	}{
		{0, 1},
		{25, 2},     // rank 1
		{50, 3},     // rank 2
		{90, 7.6},   // rank 3.6: 4 + 0.6 × (10 − 4)
		{99, 9.76},  // rank 3.96: 4 + 0.96 × 6
		{100, 10},   // rank 4
		{12.5, 1.5}, // rank 0.5
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, Percentile(sorted, tt.p), 1e-12, "p%g", tt.p)
	}
	assert.True(t, math.IsNaN(Percentile(nil, 50)))
	assert.True(t, math.IsNaN(Percentile(sorted, 101)))
	assert.True(t, math.IsNaN(Percentile(sorted, -1)))
}

func TestSummarizeLeavesSamplesUnsorted(t *testing.T) {
	samples := []float64{10, 1, 4, 3, 2}
	s := Summarize(samples)
	assert.Equal(t, 4.0, s.Mean)
	assert.Equal(t, 3.0, s.Median)
	assert.InDelta(t, 7.6, s.P90, 1e-12)
	assert.Equal(t, []float64{10, 1, 4, 3, 2}, samples)
	assert.True(t, math.IsNaN(Summarize(nil).Mean))
}

func TestRelErr(t *testing.T) {
	assert.Equal(t, 0.1, RelErr(11, 10))
	assert.Equal(t, 0.1, RelErr(9, 10))
	assert.Equal(t, 0.0, RelErr(0, 0))
	assert.True(t, math.IsInf(RelErr(1, 0), 1))
	assert.True(t, math.IsNaN(RelErr(math.NaN(), 1)))
	assert.True(t, math.IsNaN(RelErr(math.NaN(), 0)))
}

func TestWithinToleranceBoundary(t *testing.T) {
	tests := []struct {
		name       string
		sim, truth float64
		want       bool
	}{
		{"exactly 10% over", 11, 10, true},
		{"exactly 10% under", 9, 10, true},
		{"10% in decimal, rounded in binary", 1.1, 1, true},
		{"10.01% over", 1.1001, 1, false},
		{"10.01% under", 0.8999, 1, false},
		{"NaN sim fails", math.NaN(), 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, withinTolerance(RelErr(tt.sim, tt.truth)))
		})
	}
}

// healthyTruth is a non-overloaded stage with round numbers.
func healthyTruth() StageTruth {
	return StageTruth{
		Index: 0, Successes: 1000, OutputLenRequested: 101, RequestsPerSec: 5,
		TTFT: Dist{Mean: 0.05, Median: 0.04, P90: 0.08, P99: 0.2},
		E2E:  Dist{Mean: 2.05, Median: 2, P90: 2.5, P99: 3},
	}
}

// simMatching returns a SimStage equal to the truth, latencies scaled by f.
func simMatching(tr StageTruth, f float64) SimStage {
	return SimStage{
		TTFT:      LatencySummary{Mean: tr.TTFT.Mean * f, Median: tr.TTFT.Median * f, P90: tr.TTFT.P90 * f, P99: tr.TTFT.P99 * f},
		E2E:       LatencySummary{Mean: tr.E2E.Mean * f, Median: tr.E2E.Median * f, P90: tr.E2E.P90 * f, P99: tr.E2E.P99 * f},
		Successes: tr.Successes, Failures: tr.Failures, WindowS: float64(tr.Successes) / tr.RequestsPerSec,
		TPOTMean: derivedTPOT(tr.E2E.Mean*f, tr.TTFT.Mean*f, tr.OutputLenRequested),
	}
}

func rowsByMetric(rows []Row) map[string]Row {
	m := map[string]Row{}
	for _, r := range rows {
		m[r.Metric] = r
	}
	return m
}

func TestCompareStageRowsOfAHealthyCell(t *testing.T) {
	tr := healthyTruth()
	rows := CompareStage("run/stage_0", tr, 101, simMatching(tr, 1))
	gated := map[string]bool{
		MetricTTFTMedian: true, MetricTTFTP90: true, MetricE2EMean: true,
		MetricE2EMedian: true, MetricE2EP90: true, MetricTPOTMean: true,
		MetricTTFTMean: false, MetricTTFTP99: false, MetricE2EP99: false,
	}
	require.Len(t, rows, len(gated))
	for _, r := range rows {
		want, ok := gated[r.Metric]
		require.True(t, ok, "unexpected metric %s", r.Metric)
		assert.Equal(t, want, r.Gated, r.Metric)
		assert.Equal(t, "run/stage_0", r.Cell)
		assert.True(t, r.Pass, r.Metric)
		assert.Equal(t, 0.0, r.RelErr, r.Metric)
	}
	byMetric := rowsByMetric(rows)
	assert.InDelta(t, (2.05-0.05)/100, byMetric[MetricTPOTMean].Truth, 1e-15)
	assert.Equal(t, 0.04, byMetric[MetricTTFTMedian].Truth)
}

func TestCompareStagePassFailBoundary(t *testing.T) {
	tr := healthyTruth()
	tr.E2E.Median = 10
	sim := simMatching(tr, 1)

	sim.E2E.Median = 11 // exactly 10 %
	r := rowsByMetric(CompareStage("c", tr, 101, sim))[MetricE2EMedian]
	assert.Equal(t, 0.1, r.RelErr)
	assert.True(t, r.Pass)

	sim.E2E.Median = 11.001 // 10.01 %
	r = rowsByMetric(CompareStage("c", tr, 101, sim))[MetricE2EMedian]
	assert.InDelta(t, 0.1001, r.RelErr, 1e-12)
	assert.False(t, r.Pass)

	// A failing reported row does not fail the cell; a failing gated row does.
	sim = simMatching(tr, 1)
	sim.TTFT.P99 *= 2
	p, f := Verdicts(CompareStage("c", tr, 101, sim))
	assert.Equal(t, []int{1, 0}, []int{p, f})
	sim.TTFT.P90 *= 2
	p, f = Verdicts(CompareStage("c", tr, 101, sim))
	assert.Equal(t, []int{0, 1}, []int{p, f})
}

func TestCompareStageOverloadedCell(t *testing.T) {
	tr := healthyTruth()
	tr.Successes, tr.Failures, tr.RequestsPerSec = 732, 4068, 0.48792199204321196
	tr.TTFT.Mean = 106
	require.True(t, tr.Overloaded())

	// Latencies far off, counts and rate right: the cell passes.
	sim := simMatching(tr, 3)
	rows := CompareStage("reasoning/stage_0", tr, 101, sim)
	byMetric := rowsByMetric(rows)
	for _, m := range []string{MetricSuccesses, MetricSuccessRPS} {
		assert.True(t, byMetric[m].Gated, m)
		assert.True(t, byMetric[m].Pass, m)
	}
	for _, m := range []string{MetricFailures, MetricTTFTMedian, MetricTTFTP90, MetricE2EMean, MetricTPOTMean} {
		assert.False(t, byMetric[m].Gated, m)
	}
	assert.Equal(t, 732.0, byMetric[MetricSuccesses].Truth)
	assert.Equal(t, tr.RequestsPerSec, byMetric[MetricSuccessRPS].Truth)
	assert.InDelta(t, tr.RequestsPerSec, byMetric[MetricSuccessRPS].Sim, 1e-12)
	p, f := Verdicts(rows)
	assert.Equal(t, []int{1, 0}, []int{p, f})

	// 20 % fewer successes over the same window fails both gated rows.
	sim.Successes = 585
	p, f = Verdicts(CompareStage("reasoning/stage_0", tr, 101, sim))
	assert.Equal(t, []int{0, 1}, []int{p, f})
}

func TestNewSimStage(t *testing.T) {
	s := NewSimStage([]float64{0.1, 0.3, 0.2}, []float64{2.1, 2.3, 2.2}, 4, 10, 11)
	assert.Equal(t, 3, s.Successes)
	assert.Equal(t, 4, s.Failures)
	assert.InDelta(t, 0.2, s.TTFT.Median, 1e-12)
	assert.InDelta(t, 2.2, s.E2E.Mean, 1e-12)
	assert.InDelta(t, 0.2, s.TPOTMean, 1e-12) // (2.2 − 0.2) / 10
	assert.InDelta(t, 0.3, s.SuccessRPS(), 1e-12)
	assert.True(t, math.IsNaN(SimStage{Successes: 3}.SuccessRPS()))
}

func TestVerdictsCountCells(t *testing.T) {
	rows := []Row{
		{Cell: "a", Metric: "x", Gated: true, Pass: true},
		{Cell: "a", Metric: "y", Gated: false, Pass: false},
		{Cell: "b", Metric: "x", Gated: true, Pass: true},
		{Cell: "b", Metric: "y", Gated: true, Pass: false},
		{Cell: "c", Metric: "x", Gated: true, Pass: true},
		{Cell: "a", Metric: "z", Gated: true, Pass: true},  // not adjacent to a's other rows
		{Cell: "d", Metric: "x", Gated: false, Pass: true}, // no gated row: fails
	}
	p, f := Verdicts(rows)
	assert.Equal(t, 2, p) // a, c
	assert.Equal(t, 2, f) // b, d
	p, f = Verdicts(nil)
	assert.Equal(t, []int{0, 0}, []int{p, f})
}

func TestRenderText(t *testing.T) {
	tr := healthyTruth()
	sim := simMatching(tr, 1)
	rows := CompareStage("run/stage_0", tr, 101, sim)
	sim.E2E.Mean *= 1.5
	rows = append(rows, CompareStage("run/stage_1", tr, 101, sim)...)

	var buf bytes.Buffer
	require.NoError(t, RenderText(&buf, rows))
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 1+len(rows)+1)
	assert.Equal(t, "1 passed, 1 failed", lines[len(lines)-1])
	assert.Regexp(t, `^cell\s+metric\s+unit\s+truth\s+sim\s+\(sim−truth\)/truth\s+verdict$`, lines[0])
	assert.Contains(t, lines[1], " s ", "latency rows are in seconds")

	// Columns align: every metric column starts at the same offset.
	col := strings.Index(lines[0], "metric")
	for _, l := range lines[1 : len(lines)-1] {
		assert.Equal(t, "run/stage_", l[:10])
		assert.NotEqual(t, byte(' '), l[col], l)
		assert.Equal(t, byte(' '), l[col-1], l)
	}
	out := buf.String()
	assert.Contains(t, out, "PASS")
	assert.Contains(t, out, "FAIL")
	assert.Contains(t, out, "reported")
	assert.Contains(t, out, "50.00%")
}

func TestRowJSONKeys(t *testing.T) {
	data, err := json.Marshal(Row{Cell: "c", Metric: "ttft_p90", Truth: 1, Sim: 1.25, RelErr: 0.25, Gated: true, Pass: false})
	require.NoError(t, err)
	assert.JSONEq(t, `{"cell":"c","metric":"ttft_p90","truth":1,"sim":1.25,"rel_err":0.25,"signed_err":0.25,"gated":true,"pass":false}`, string(data))

	// A reported-only row is judged by nothing: pass is null; the signed
	// error keeps the direction.
	data, err = json.Marshal(Row{Cell: "c", Metric: "ttft_p99", Truth: 2, Sim: 1.5, RelErr: 0.25})
	require.NoError(t, err)
	assert.JSONEq(t, `{"cell":"c","metric":"ttft_p99","truth":2,"sim":1.5,"rel_err":0.25,"signed_err":-0.25,"gated":false,"pass":null}`, string(data))

	// Non-finite values have no JSON spelling: they become null.
	data, err = json.Marshal(Row{Cell: "c", Metric: "success_rps", Truth: 0.5, Sim: math.NaN(), RelErr: math.Inf(1), Gated: true})
	require.NoError(t, err)
	assert.JSONEq(t, `{"cell":"c","metric":"success_rps","truth":0.5,"sim":null,"rel_err":null,"signed_err":null,"gated":true,"pass":false}`, string(data))
}

func TestCellName(t *testing.T) {
	assert.Equal(t, "20260217-155451-llama-2-7b-tp1-codegen/stage_1", CellName("20260217-155451-llama-2-7b-tp1-codegen", 1))
}
