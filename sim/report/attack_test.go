package report

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/sim"
	"frontier/sim/engine"
)

// vllm:num_preemptions_total counts a preemption when the frontend sees
// it: the PREEMPTED event travels with the request's next EngineCoreOutput
// (scheduler.py update_from_output: events=request.take_events(), only for
// a request with new tokens), and IterationStats.update_from_events adds
// it to num_preempted_reqs of that step. A request aborted before its next
// token never reports its preemption. Worked by hand on one engine, 1 s
// intervals: request 1 is preempted at 0.5 s and samples again at 1.5 s
// (counted in [1, 2) s, not [0, 1) s); request 2 is preempted at 0.6 s and
// aborted at 2.5 s without another token (never counted).
func TestPreemptionsCountWhenTheRequestNextEmits(t *testing.T) {
	rec := NewRecorder(1e9, nil)
	rec.Begin([]sim.EngineSpec{{ID: 0, PP: 1, KVBlocks: 100, MaxModelLen: 4096}}, "m")
	r1 := &engine.Request{ID: 1, PromptTokens: 10, MaxTokens: 5}
	r2 := &engine.Request{ID: 2, PromptTokens: 10, MaxTokens: 5}
	rec.Queued(0, &sim.RequestRecord{ID: 1}, 0)
	rec.Queued(0, &sim.RequestRecord{ID: 2}, 0)
	step := func(ns int64, reqs ...*engine.Request) {
		st := &engine.Step{ScheduledNs: ns - 1e6}
		for _, q := range reqs {
			q.NumOutput++
			q.Status = engine.Running
			st.Items = append(st.Items, engine.Scheduled{Req: q, NumNew: 1, Samples: true})
		}
		rec.StepRecord(&sim.StepRecord{Engine: 0, PPStage: -1, StartNs: ns - 1e6, DurationNs: 1e6, Preempted: 0})
		rec.StepDone(0, st, sim.EngineState{Running: len(reqs), KVBlocks: 100}, ns)
	}
	step(1e8, r1, r2)        // first tokens at 0.1 s
	rec.Preempted(0, 1, 5e8) // 0.5 s
	rec.Preempted(0, 2, 6e8) // 0.6 s
	rec.StepRecord(&sim.StepRecord{Engine: 0, PPStage: -1, StartNs: 5e8, DurationNs: 1e6, Preempted: 2})
	step(15e8, r1)          // r1 emits again at 1.5 s
	rec.Aborted(0, 2, 25e8) // r2 times out
	require.NoError(t, rec.Finish(3e9))
	var got []int64
	for _, row := range rec.Rows() {
		if row.Engine == -1 {
			got = append(got, row.Preemptions)
		}
	}
	assert.Equal(t, []int64{0, 1, 0}, got, "per interval: r1's preemption when it emits again, r2's never")
	fams := families(t, rec)
	assert.Equal(t, 1.0, fams[MetricPreemptions].Metric[0].GetCounter().GetValue())
}

// The timeline holds at most maxRows rows (memory bounded: a 1 ms
// interval over a 1,672 s run kept 3.3 M rows, 1.8 GB resident); past it
// the recorder stops keeping rows and Finish says how many intervals the
// run needed and the smallest interval that fits.
func TestTimelineRowLimit(t *testing.T) {
	rec := NewRecorder(1e6, nil) // 1 ms
	rec.maxRows = 100
	rec.Begin([]sim.EngineSpec{{ID: 0, PP: 1, KVBlocks: 10, MaxModelLen: 16}}, "m")
	rec.StageStarted(0, 0)
	rec.StageStarted(1, 1e12) // 1,000 s later: 10^6 intervals
	err := rec.Finish(1e12)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrTimelineTooLong))
	assert.Contains(t, err.Error(), "1000000 intervals of 0.001 s × 2 rows")
	assert.Contains(t, err.Error(), "an interval ≥ 20 s")
	assert.LessOrEqual(t, len(rec.Rows()), 100)

	ok := NewRecorder(1e9, nil)
	ok.maxRows = 100
	ok.Begin([]sim.EngineSpec{{ID: 0, PP: 1, KVBlocks: 10, MaxModelLen: 16}}, "m")
	require.NoError(t, ok.Finish(50e9))
	assert.Len(t, ok.Rows(), 100, "50 intervals × (engine + total) fit exactly")
}

// A gate cell whose simulation completed no request (a calibration that
// times every request out) still gets its percentile figure, with the
// measured line alone and a note; on main gate --plot exited 1 ("TTFT: no
// simulated percentiles"), drew nothing and left its folder empty.
func TestPercentilePlotWithoutSimulatedRequests(t *testing.T) {
	dir := t.TempDir()
	nan := math.NaN()
	files, err := WritePercentilePlot(filepath.Join(dir, "cell"), []string{"svg"}, "cell", []PercentilePanel{
		{Name: "TTFT", Percentiles: []float64{50, 90}, Measured: []float64{0.1, 0.2}, Simulated: []float64{nan, nan}},
	})
	require.NoError(t, err)
	require.Len(t, files, 1)
	svg, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Contains(t, string(svg), "no simulated request succeeded")
}
