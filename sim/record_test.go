package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// TestUnsentRecords: a run stopped early (after 20 or 1,000 steps) still
// returns a record for every planned request, with the plan's fields and
// its stage's index; those never sent (closed-loop turns, open-loop
// requests, requests held by --max-concurrency, a later stage's) have
// every time -1. client.send writes a request's record when it sends it;
// Run writes the others (fillUnsent).
func TestUnsentRecords(t *testing.T) {
	for _, name := range []string{"examples/llama-3.1-8b-h200-agent-sessions", "examples/llama-3.1-8b-h200-priority-classes",
		"gate/20260217-155451-llama-2-7b-tp1-codegen"} {
		sc, err := scenarios.Load("../scenarios/" + name + ".yaml")
		require.NoError(t, err)
		st, err := Resolve(sc)
		require.NoError(t, err)
		codegen := strings.HasPrefix(name, "gate/")
		if codegen {
			st.Client.MaxConcurrency = 1 // its arrivals wait in the client: records made, not sent
		}
		var s *Sim
		steps, stop := 0, 20
		if codegen {
			stop = 1000 // (20 s: a request takes ~2.5 s, one arrives every 0.2 s)
		}
		s, err = st.NewSim(Options{StepSink: func(StepRecord) {
			if steps++; steps == stop {
				s.fail(errors.New("stop"))
			}
		}})
		require.NoError(t, err)
		res := s.Run()
		require.EqualError(t, res.Err, "stop")
		require.Len(t, res.Requests, st.Plan.NumRequests())
		sent, unsent, laterTurns, classes, stages := 0, 0, 0, map[int32]bool{}, map[int32]bool{}
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
				classes[r.Class], stages[r.Stage] = true, true
			}
		}
		require.Positive(t, sent, name)
		require.Greater(t, unsent, sent, name)
		switch {
		case strings.HasSuffix(name, "agent-sessions"):
			require.Positive(t, laterTurns, name)
		case codegen:
			require.Len(t, stages, 2, name)
			require.Positive(t, len(s.client.blocked), name)
		default:
			require.Len(t, classes, 2, name)
		}
	}
}
