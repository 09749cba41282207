package sim

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// TestUnsentRecords: a run stopped early (here after 20 steps) still
// returns a record for every planned request, with the plan's fields;
// those never sent, closed-loop turns and open-loop requests alike, have
// every time -1. Sim.newRecord writes a request's record when the client
// plans to send it; Run writes the others (fillUnsent).
func TestUnsentRecords(t *testing.T) {
	for _, name := range []string{"llama-3.1-8b-h200-agent-sessions", "llama-3.1-8b-h200-priority-classes"} {
		sc, err := scenarios.Load("../scenarios/examples/" + name + ".yaml")
		require.NoError(t, err)
		st, err := Resolve(sc)
		require.NoError(t, err)
		var s *Sim
		steps := 0
		s, err = st.NewSim(Options{StepSink: func(StepRecord) {
			if steps++; steps == 20 {
				s.fail(errors.New("stop"))
			}
		}})
		require.NoError(t, err)
		res := s.Run()
		require.EqualError(t, res.Err, "stop")
		require.Len(t, res.Requests, st.Plan.NumRequests())
		sent, unsent, laterTurns, classes := 0, 0, 0, map[int32]bool{}
		for k, stg := range st.Plan.Stages {
			for i := range stg.Requests {
				p := &stg.Requests[i]
				r := res.Requests[p.ID]
				require.Equal(t, RequestRecord{ID: p.ID, Stage: int32(k), Session: p.Session(), Turn: p.Turn(),
					PromptTokens: p.PromptTokens, Priority: int64(p.Priority), Class: int32(p.Class)},
					RequestRecord{ID: r.ID, Stage: r.Stage, Session: r.Session, Turn: r.Turn,
						PromptTokens: r.PromptTokens, Priority: r.Priority, Class: r.Class}, name)
				if r.SendNs >= 0 {
					sent++
					continue
				}
				unsent++
				require.Equal(t, [4]int64{-1, -1, -1, -1}, [4]int64{r.SendNs, r.FirstTokenNs, r.FinishNs, r.TransferDoneNs}, name)
				if r.Turn > 1 {
					laterTurns++
				}
				classes[r.Class] = true
			}
		}
		require.Positive(t, sent, name)
		require.Greater(t, unsent, sent, name)
		if name == "llama-3.1-8b-h200-agent-sessions" {
			require.Positive(t, laterTurns, name)
		} else {
			require.Len(t, classes, 2, name)
		}
	}
}
