package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim/engine"
)

// The decode macro-step's equivalence harness: a scenario run with the
// macro-step and step by step (Options.StepByStep) gives the same bytes
// in every output, the requests, the steps, the result and summary, and
// every call an Observer sees. requireStepByStepEquivalent runs any
// scenario both ways; add the workloads and deployments of a new feature
// to equivalenceScenarios (or call it from your own test).

// runBytes is a run's outputs, encoded: requests and steps as JSON lines
// (what the CSVs hold, and more), the result and bench serve's summary as
// JSON, and the observer's calls as text.
type runBytes struct {
	requests, steps, result, observed []byte
	inline                            int64 // steps the macro-step ran inline
	kSteps                            int64 // steps the k-step advance ran (cohortrun.go)
	seams                             seams // its ways past joins, leaves and idle deadlines
}

func runOnce(t testing.TB, sc *scenarios.Scenario, stepByStep, observe bool) runBytes {
	t.Helper()
	return runTweaked(t, sc, stepByStep, observe, nil)
}

// runTweaked is runOnce with tweak (nil: none) applied to the built Sim.
func runTweaked(t testing.TB, sc *scenarios.Scenario, stepByStep, observe bool, tweak func(*Sim)) runBytes {
	t.Helper()
	var steps bytes.Buffer
	stepEnc := json.NewEncoder(&steps)
	obs := &logObserver{}
	opt := Options{StepByStep: stepByStep, StepSink: func(r StepRecord) {
		require.NoError(t, stepEnc.Encode(r))
	}}
	if observe {
		opt.Observer = obs
	}
	s, _, err := Build(sc, opt)
	require.NoError(t, err)
	if tweak != nil {
		tweak(s)
	}
	res := s.Run()
	var out runBytes
	out.steps, out.observed, out.inline, out.kSteps, out.seams = steps.Bytes(), obs.b.Bytes(), s.macroSteps, s.kSteps, s.kSeams
	var reqs bytes.Buffer
	enc := json.NewEncoder(&reqs)
	for _, r := range res.Requests {
		require.NoError(t, enc.Encode(r))
	}
	out.requests = reqs.Bytes()
	errText := ""
	if res.Err != nil {
		errText = res.Err.Error()
	}
	sum := Summarize(res.Requests, res.ITL, []float64{1, 10, 50, 90, 99, 99.9}, SLO{TTFTMs: 100, TPOTMs: 20})
	res.ITL.settle() // (its sums, read below)
	result, err := json.Marshal(struct {
		Summary                                  BenchSummary
		Latencies                                map[string]float64
		Steps, EndNs                             int64
		Engines                                  []EngineInfo
		Coverage                                 any
		Notes                                    []string
		Peak                                     float64
		Err                                      string
		ITLCounts                                any
		ITLN                                     int64
		ITLSum, ITLSumSq, ITLMean, ITLStd, ITL99 float64
	}{sum, sum.Latencies, res.Steps, res.EndNs, res.Engines, res.Coverage, res.Notes, res.MaxOutputTokensPerS, errText,
		res.ITL.counts, res.ITL.n, res.ITL.sum, res.ITL.sumSquares(), res.ITL.Mean(), res.ITL.Std(), res.ITL.Percentile(99)})
	require.NoError(t, err)
	out.result = result
	return out
}

// requireStepByStepEquivalent runs sc step by step (observed) and with
// the macro-step (observed, and not: a run without an observer may take
// other paths) and requires equal outputs; it returns the steps the
// macro-step ran inline.
func requireStepByStepEquivalent(t testing.TB, name string, sc *scenarios.Scenario) int64 {
	t.Helper()
	require.NoError(t, sc.Validate(), name)
	want := runOnce(t, sc, true, true)
	require.Zero(t, want.inline, name)
	for _, observe := range []bool{true, false} {
		got := runOnce(t, sc, false, observe)
		outs := []struct {
			what      string
			want, got []byte
		}{{"requests", want.requests, got.requests}, {"steps", want.steps, got.steps}, {"result", want.result, got.result}}
		if observe {
			outs = append(outs, struct {
				what      string
				want, got []byte
			}{"observer calls", want.observed, got.observed})
		}
		for _, o := range outs {
			if !bytes.Equal(o.want, o.got) {
				wl, gl := firstDiff(o.want, o.got)
				require.Failf(t, "outputs differ", "%s (observer %v): %s differ from stepping one by one at line %d:\nstep by step: %s\nmacro-step:   %s",
					name, observe, o.what, wl, gl, lineAt(o.got, wl))
			}
		}
		if !observe {
			return got.inline
		}
	}
	return 0
}

// firstDiff is the first line where a and b differ (1-based) and a's text there.
func firstDiff(a, b []byte) (int, string) {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range la {
		if i >= len(lb) || !bytes.Equal(la[i], lb[i]) {
			return i + 1, clip(la[i])
		}
	}
	return len(la) + 1, ""
}

func lineAt(b []byte, n int) string {
	ls := bytes.Split(b, []byte("\n"))
	if n-1 < len(ls) {
		return clip(ls[n-1])
	}
	return "(none)"
}

// clip keeps a line short enough for the test log.
func clip(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// TestMacroStepEquivalence: every example scenario (cut to a few hundred
// requests), gate cells, and random deployments of every kind (TP, PP, DP,
// MoE in lockstep, EP, disaggregation, async on and off, prefix caching
// on and off, timeouts, max_concurrency, priority scheduling, small KV
// caches that preempt) give the same bytes with the macro-step as step
// by step, and the macro-step runs most of their steps.
func TestMacroStepEquivalence(t *testing.T) {
	if testing.Short() {
		t.Skip("many runs, each twice")
	}
	var inline int64
	for _, c := range equivalenceScenarios(t) {
		inline += requireStepByStepEquivalent(t, c.name, c.sc)
	}
	t.Logf("%d steps inline", inline)
	require.Positive(t, inline)
}

type equivalenceCase struct {
	name string
	sc   *scenarios.Scenario
}

// equivalenceScenarios is the harness's workload: the examples, two gate
// cells and random deployments.
func equivalenceScenarios(t testing.TB) []equivalenceCase {
	var out []equivalenceCase
	files, err := filepath.Glob("../scenarios/examples/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		sc, err := scenarios.Load(f)
		require.NoError(t, err)
		shrink(sc, 300)
		out = append(out, equivalenceCase{filepath.Base(f), sc})
	}
	for _, g := range []string{"20260217-155451-llama-2-7b-tp1-codegen", "20260218-135247-mixtral-8x7b-v0-1-tp2-reasoning"} {
		sc := loadGate(t, g)
		for i := range sc.Workload.Arrivals.Stages {
			sc.Workload.Arrivals.Stages[i].DurationS /= 20
		}
		out = append(out, equivalenceCase{g, sc})
	}
	rng := rand.New(rand.NewPCG(17, 29))
	for i := 0; i < 40; i++ {
		out = append(out, randomCase(rng, i))
	}
	return append(out, policyCases(t)...)
}

// shrink cuts a scenario's workload to about n requests.
func shrink(sc *scenarios.Scenario, n int) {
	w := &sc.Workload
	if w.Random != nil {
		w.Random.NumPrompts = min(w.Random.NumPrompts, n)
	}
	if ss := w.Sessions; ss != nil {
		ss.NumSessions = min(ss.NumSessions, max(1, n/8))
		if ss.ConcurrentUsers != nil {
			users := min(*ss.ConcurrentUsers, ss.NumSessions)
			ss.ConcurrentUsers = &users
		}
	}
	if w.Lengths != nil && w.Lengths.NumPrompts > n {
		w.Lengths.NumPrompts = n
	}
	for i := range w.Arrivals.Stages {
		st := &w.Arrivals.Stages[i]
		st.DurationS = min(st.DurationS, float64(n)/st.Rate)
	}
}

// randomCase is a random small deployment and workload, of every kind.
func randomCase(rng *rand.Rand, i int) equivalenceCase {
	moe := rng.IntN(4) == 0
	d := scenarios.DefaultDeployment()
	d.Model = "meta-llama/Llama-3.1-8B-Instruct"
	d.TensorParallelSize = []int{1, 1, 2, 4}[rng.IntN(4)]
	if moe {
		d.Model = "mistralai/Mixtral-8x7B-v0.1"
		d.TensorParallelSize = 2
		d.EnableExpertParallel = rng.IntN(2) == 0
	}
	d.PipelineParallelSize = []int{1, 1, 1, 2}[rng.IntN(4)]
	d.DataParallelSize = []int{1, 1, 2, 3}[rng.IntN(4)]
	d.MaxNumSeqs = 4 + rng.IntN(64)
	d.MaxNumBatchedTokens = max(d.MaxNumSeqs, 128+rng.IntN(2048))
	d.MaxModelLen = 2048
	if rng.IntN(2) == 0 {
		blocks := 130 + rng.IntN(600) // small: preemption
		d.NumGPUBlocksOverride = &blocks
	}
	async, caching := rng.IntN(3) > 0, rng.IntN(2) == 0
	d.AsyncScheduling, d.EnablePrefixCaching = &async, &caching
	if rng.IntN(4) == 0 {
		d.SchedulingPolicy = "priority"
	}
	arr := scenarios.Arrivals{RequestRate: scenarios.Rate(2 + rng.Float64()*60), Burstiness: 0.5 + rng.Float64()}
	if rng.IntN(3) == 0 {
		timeout := 2 + rng.Float64()*30
		arr.TimeoutS = &timeout
	}
	if rng.IntN(4) == 0 {
		c := 1 + rng.IntN(40)
		arr.MaxConcurrency = &c
	}
	w := scenarios.Workload{Seed: int64(i), Dataset: "random", Arrivals: arr,
		Random: &scenarios.RandomData{NumPrompts: 120 + rng.IntN(200), InputLen: 20 + rng.IntN(900),
			OutputLen: 2 + rng.IntN(300), RangeRatio: rng.Float64() * 0.9}}
	if rng.IntN(3) == 0 {
		w.Dataset, w.Random = "shared_prefix", nil
		w.SharedPrefix = &scenarios.SharedPrefix{NumGroups: 1 + rng.IntN(5), NumPromptsPerGroup: 1 + rng.IntN(10),
			SystemPromptLen: 16 * rng.IntN(40), QuestionLen: 10 + rng.IntN(400), OutputLen: 2 + rng.IntN(300)}
	}
	if d.SchedulingPolicy == "priority" {
		w.Classes = []scenarios.RequestClass{{Name: "hi", Priority: 0, Share: 0.3}, {Name: "lo", Priority: 5, Share: 0.7}}
	}
	sc := &scenarios.Scenario{Name: "macro", Hardware: []string{"h100-sxm", "h200-sxm"}[rng.IntN(2)], Deployment: &d, Workload: w}
	if rng.IntN(5) == 0 && !moe {
		p := d
		p.PipelineParallelSize, p.DataParallelSize = 1, 1
		sc.Deployment = nil
		sc.Disaggregation = &scenarios.Disaggregation{Prefill: scenarios.Pool{Instances: 1 + rng.IntN(2), Deployment: p},
			Decode: scenarios.Pool{Instances: 1 + rng.IntN(2), Deployment: p}}
	} else if rng.IntN(5) == 0 {
		sc.Replicas = &scenarios.Replicas{Count: 2 + rng.IntN(2), Router: []string{"round-robin", "least-requests", "prefix-cache", "kv-usage"}[rng.IntN(4)]}
	}
	name := fmt.Sprintf("random %d (moe %v tp %d pp %d dp %d async %v caching %v policy %q disagg %v replicas %v)", i, moe,
		d.TensorParallelSize, d.PipelineParallelSize, d.DataParallelSize, async, caching, d.SchedulingPolicy, sc.Disaggregation != nil, sc.Replicas != nil)
	return equivalenceCase{name, sc}
}

// logObserver writes every Observer call as a line of text.
type logObserver struct{ b bytes.Buffer }

func (o *logObserver) StageStarted(k int, ns int64) { fmt.Fprintln(&o.b, "stage", k, ns) }
func (o *logObserver) Queued(e int, rec *RequestRecord, ns int64) {
	fmt.Fprintf(&o.b, "queued %d %+v %d\n", e, *rec, ns)
}
func (o *logObserver) Preempted(e, id int, ns int64) { fmt.Fprintln(&o.b, "preempted", e, id, ns) }
func (o *logObserver) StepRecord(rec *StepRecord)    { fmt.Fprintf(&o.b, "record %+v\n", *rec) }
func (o *logObserver) StepDone(e int, st *engine.Step, after EngineState, ns int64) {
	fmt.Fprintf(&o.b, "done %d %d %+v %d %d %d", e, ns, after, st.NumTokens, st.DecodeCtxSum, st.ScheduledNs)
	for _, it := range st.Items {
		q := it.Req
		fmt.Fprintf(&o.b, " [%d %d %d %v %v %d %d %d %d]", q.ID, it.NumNew, it.Computed, it.Samples, q.Status, q.NumOutput, q.NumComputed, q.Pending, len(q.Blocks))
	}
	fmt.Fprintln(&o.b)
}
func (o *logObserver) Aborted(e, id int, ns int64) { fmt.Fprintln(&o.b, "aborted", e, id, ns) }
func (o *logObserver) Closed(rec *RequestRecord, ns int64) {
	fmt.Fprintf(&o.b, "closed %+v %d\n", *rec, ns)
}
