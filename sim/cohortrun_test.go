package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// TestCohortRunEquivalence: the k-step advance (cohortrun.go) ends most
// steps of a serving run, and every output (requests, steps, result with
// the ITL histogram's counts and sums, peak throughput) is the same bytes
// as stepping one by one: the codegen gate cell with the API server
// streaming as calibrated, for free (svc 0, every step one chunk per
// member) and saturated (chunks wait and merge, so the advance must stop
// and start again), each with a step sink (the advance goes cycle by
// cycle) and without (in bulk), with a client timeout that expires some
// requests, and the default scenario at three rates, each way
// (TestMacroStepEquivalence's random deployments run it too). Every
// codegen way must take the advance past each of its seams (joins,
// leaves, idle deadlines: cohortrun.go's seams).
func TestCohortRunEquivalence(t *testing.T) {
	if testing.Short() {
		t.Skip("many runs, each twice")
	}
	codegen := codegenTenth(t)
	type tweak struct {
		name string
		f    func(*Sim)
	}
	tweaks := []tweak{
		{"as calibrated", nil},
		{"svc 0", func(s *Sim) { s.tokSvc, s.tokDelay = 0, 0 }},
		{"svc ×40", func(s *Sim) { s.tokSvc *= 40 }},
		{"svc ×400", func(s *Sim) { s.tokSvc *= 400 }},
		// A client timeout near the requests' latency (160 of 900
		// fail): some expire while members (the cohort dissolves), the
		// other deadlines find their request completed, inside an
		// advance or not.
		{"timeout 2.3 s", func(s *Sim) { s.client.cfg.TimeoutNs = 2.3e9 }},
	}
	// Without a step sink the advance takes its cycles in bulk
	// (cohortBulk); with one, cycle by cycle.
	for _, tw := range tweaks[:len(tweaks):len(tweaks)] {
		f := tw.f
		tweaks = append(tweaks, tweak{tw.name + ", no step sink", func(s *Sim) {
			if f != nil {
				f(s)
			}
			s.stepSink = nil
		}})
	}
	var kSteps int64
	for _, tw := range tweaks {
		want := runTweaked(t, codegen, true, false, tw.f)
		got := runTweaked(t, codegen, false, false, tw.f)
		requireSameRun(t, "codegen "+tw.name, want, got)
		require.Zero(t, want.kSteps)
		// Every way runs the advance (cycle by cycle or in bulk), so an
		// advance that never starts cannot pass for an equivalent one.
		require.Positive(t, got.kSteps, tw.name)
		kSteps += got.kSteps
		// And every way takes the advance past each of its seams: the
		// first cycle after members left or joined, a request joining
		// before its first token, a client send and an engine's admission
		// (after which it ends the step and stops), the step before an
		// admission's prefill step, (in bulk) a last cycle
		// that leaves a finishing member out, and (with the timeout) idle
		// client deadlines.
		sm := got.seams
		require.Positive(t, sm.streamed, tw.name)
		require.Positive(t, sm.early, tw.name)
		require.Positive(t, sm.sends, tw.name)
		require.Positive(t, sm.admits, tw.name)
		if !strings.Contains(tw.name, "×400") { // (its chunks merge: no line)
			require.Positive(t, sm.before, tw.name)
		}
		if strings.HasSuffix(tw.name, "no step sink") {
			require.Positive(t, sm.leaves, tw.name)
		}
		if strings.HasPrefix(tw.name, "timeout") { // (300 s deadlines come after the last finish)
			require.Positive(t, sm.deadlines, tw.name)
			require.Regexp(t, `"failed":[1-9]`, string(got.result), tw.name)
		}
		if tw.name == "as calibrated" {
			// Most of the run's steps are the same decode cycle between
			// events: the advance ends more than half of them.
			require.Greater(t, got.kSteps, int64(bytes.Count(got.steps, []byte("\n"))/2), tw.name)
		}
	}
	// The default scenario (its API server saturated), at rates from
	// light to overloaded.
	for _, rate := range []float64{2, 10, 40} {
		sc, err := scenarios.Load("../scenarios/examples/llama-3.1-8b-h200-random.yaml")
		require.NoError(t, err)
		shrink(sc, 1500)
		sc.Workload.Arrivals.RequestRate = scenarios.Rate(rate)
		for _, tw := range tweaks {
			want := runTweaked(t, sc, true, false, tw.f)
			got := runTweaked(t, sc, false, false, tw.f)
			requireSameRun(t, fmt.Sprintf("random at %g req/s, %s", rate, tw.name), want, got)
			kSteps += got.kSteps
		}
	}
	t.Logf("%d steps ended by the k-step advance", kSteps)
}

// codegenTenth is the codegen gate cell with a tenth of its duration
// (about 900 requests).
func codegenTenth(t testing.TB) *scenarios.Scenario {
	codegen := loadGate(t, "20260217-155451-llama-2-7b-tp1-codegen")
	for i := range codegen.Workload.Arrivals.Stages {
		codegen.Workload.Arrivals.Stages[i].DurationS /= 10
	}
	return codegen
}

// requireSameRun requires equal requests, steps and result bytes.
func requireSameRun(t *testing.T, name string, want, got runBytes) {
	t.Helper()
	for _, o := range []struct {
		what      string
		want, got []byte
	}{{"requests", want.requests, got.requests}, {"steps", want.steps, got.steps}, {"result", want.result, got.result}} {
		if !bytes.Equal(o.want, o.got) {
			wl, gl := firstDiff(o.want, o.got)
			require.Failf(t, "outputs differ", "%s: %s differ from stepping one by one at line %d:\nstep by step: %s\nk-step:       %s",
				name, o.what, wl, gl, lineAt(o.got, wl))
		}
	}
}
