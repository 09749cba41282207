package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Defect 8 (issue 10): a PP run's steps CSV counts each preemption once
// (on the first stage's row, where the batch was scheduled), so the rows
// add up to the preemptions the requests saw; they counted once per stage.
func TestPipelinePreemptionsCountedOnce(t *testing.T) {
	sc := stressScenario()
	sc.Deployment.PipelineParallelSize = 2
	sc.Deployment.TensorParallelSize = 1
	require.NoError(t, sc.Validate())
	rows, perStage := 0, map[int]int{}
	s, _, err := Build(sc, Options{StepSink: func(r StepRecord) {
		rows += r.Preempted
		perStage[r.PPStage] += r.Preempted
	}})
	require.NoError(t, err)
	res := s.Run()
	want := 0
	for _, r := range res.Requests {
		want += int(r.Preemptions)
	}
	require.Positive(t, want, "the run must preempt")
	assert.Equal(t, want, rows)
	assert.Equal(t, map[int]int{0: want, 1: 0}, perStage)
}
