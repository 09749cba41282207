package report

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim"
)

const codegen = "../../scenarios/gate/20260217-155451-llama-2-7b-tp1-codegen.yaml"

func benchScenario(b *testing.B) *scenarios.Scenario {
	sc, err := scenarios.Load(codegen)
	require.NoError(b, err)
	require.NoError(b, sc.Validate())
	return sc
}

// BenchmarkCodegenPlain is the codegen gate scenario (9,000 requests) with
// no report: the baseline of BenchmarkCodegenReports.
func BenchmarkCodegenPlain(b *testing.B) {
	sc := benchScenario(b)
	for b.Loop() {
		s, _, err := sim.Build(sc, sim.Options{})
		require.NoError(b, err)
		s.Run()
	}
}

// BenchmarkCodegenReports is the same run with --timeline, --metrics and
// --trace (default 1,000 traced requests) written to io.Discard. The issue's
// goal: at most 1.5× BenchmarkCodegenPlain.
func BenchmarkCodegenReports(b *testing.B) {
	sc := benchScenario(b)
	for b.Loop() {
		rec := NewRecorder(1e9, nil)
		s, st, err := sim.Build(sc, sim.Options{Observer: rec})
		require.NoError(b, err)
		rec.Attach(NewTrace(io.Discard, 1000, st.Plan.NumRequests()))
		rec.Begin(s.EngineSpecs(), st.Model.ID)
		res := s.Run()
		require.NoError(b, rec.Finish(res.EndNs))
		require.NoError(b, WriteTimelineCSV(io.Discard, rec.Rows()))
		require.NoError(b, rec.WriteMetrics(io.Discard))
	}
}

// BenchmarkPlots renders the three run figures of the codegen run in PNG
// and SVG (a fixed cost after the run).
func BenchmarkPlots(b *testing.B) {
	sc := benchScenario(b)
	rec := NewRecorder(1e9, nil)
	s, st, err := sim.Build(sc, sim.Options{Observer: rec})
	require.NoError(b, err)
	rec.Begin(s.EngineSpecs(), st.Model.ID)
	res := s.Run()
	require.NoError(b, rec.Finish(res.EndNs))
	in := PlotInput{Title: "codegen", Rows: rec.Rows(), Stages: rec.Stages(), Requests: res.Requests}
	dir := b.TempDir()
	for b.Loop() {
		_, err := WritePlots(dir, []string{"png", "svg"}, in)
		require.NoError(b, err)
	}
}
