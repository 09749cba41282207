package workload

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

func noResolve(p string) string { return p }

func randomWorkload(n, in, out int, r float64, rate float64, seed int64) *scenarios.Workload {
	a := scenarios.DefaultArrivals()
	a.RequestRate = scenarios.Rate(rate)
	return &scenarios.Workload{Seed: seed, Dataset: "random",
		Random:   &scenarios.RandomData{NumPrompts: n, InputLen: in, OutputLen: out, RangeRatio: r},
		Arrivals: a}
}

func build(t *testing.T, w *scenarios.Workload) *Plan {
	t.Helper()
	p, err := Build(w, noResolve)
	require.NoError(t, err)
	return p
}

func allRequests(p *Plan) []Request {
	var out []Request
	for _, s := range p.Stages {
		out = append(out, s.Requests...)
	}
	return out
}

func TestRandomLengthsWithinRange(t *testing.T) {
	cases := []struct {
		in, out int
		r       float64
	}{
		{512, 128, 0}, {100, 10, 0.1}, {1000, 200, 0.5}, {7, 3, 0.9}, {10, 10, 0.5}, {1, 1, 0.99},
	}
	for _, c := range cases {
		reqs := allRequests(build(t, randomWorkload(2000, c.in, c.out, c.r, math.Inf(1), 3)))
		require.Len(t, reqs, 2000)
		// vllm bench serve: uniform integers in [⌊len(1−r)⌋, ⌊len(1+r)⌋],
		// at least 1 token.
		span := func(n int) (int, int) {
			lo := max(1, int(math.Floor(float64(n)*(1-c.r))))
			return lo, max(lo, int(math.Floor(float64(n)*(1+c.r))))
		}
		inLo, inHi := span(c.in)
		outLo, outHi := span(c.out)
		minIn, maxIn, minOut, maxOut := math.MaxInt, 0, math.MaxInt, 0
		for _, r := range reqs {
			minIn, maxIn = min(minIn, int(r.PromptTokens)), max(maxIn, int(r.PromptTokens))
			minOut, maxOut = min(minOut, int(r.OutputTokens)), max(maxOut, int(r.OutputTokens))
		}
		assert.GreaterOrEqual(t, minIn, inLo, "%+v", c)
		assert.LessOrEqual(t, maxIn, inHi, "%+v", c)
		assert.GreaterOrEqual(t, minOut, outLo, "%+v", c)
		assert.LessOrEqual(t, maxOut, outHi, "%+v", c)
		if c.r == 0 {
			assert.Equal(t, []int{c.in, c.in, c.out, c.out}, []int{minIn, maxIn, minOut, maxOut}, "r = 0 gives exact lengths")
		}
		if c.r > 0 && inHi-inLo <= 20 {
			// With ≤ 21 values and 2000 draws, missing an end has
			// probability < 2·(20/21)^2000 ≈ 1e-42: the ends are reached.
			assert.Equal(t, []int{inLo, inHi}, []int{minIn, maxIn}, "%+v", c)
		}
	}
}

func TestRandomPromptsAreDistinct(t *testing.T) {
	reqs := allRequests(build(t, randomWorkload(500, 64, 8, 0, math.Inf(1), 0)))
	keys := map[uint64]bool{}
	for i, r := range reqs {
		assert.Equal(t, i, int(r.ID))
		assert.Zero(t, r.PrefixTokens)
		assert.NotZero(t, r.ContentKey)
		keys[r.ContentKey] = true
	}
	assert.Len(t, keys, 500)
}

func TestRateInfSendsAllAtZero(t *testing.T) {
	p := build(t, randomWorkload(300, 64, 8, 0, math.Inf(1), 1))
	require.Len(t, p.Stages, 1)
	for _, r := range p.Stages[0].Requests {
		assert.Zero(t, r.At)
	}
}

// TestPoissonGaps checks the gaps' mean and spread. With n gamma gaps of
// mean μ and shape k (CV 1/√k), the sample mean has standard error
// μ/√(k·n): 0.71 % at n = 20,000 for Poisson (k = 1). The sample CV of
// exponential gaps has standard error ≈ √(8/n)/2 ≈ 1 %. Tolerances are
// five standard errors, and the seed is fixed, so the test is not flaky.
func TestPoissonGaps(t *testing.T) {
	const n, rate = 20000, 8.0
	for _, c := range []struct {
		burstiness float64
		cv         float64 // gamma shape k: CV = 1/√k
	}{{1, 1}, {4, 0.5}, {0.25, 2}} {
		w := randomWorkload(n, 64, 8, 0, rate, 11)
		w.Arrivals.Burstiness = c.burstiness
		reqs := allRequests(build(t, w))
		require.Len(t, reqs, n)
		assert.Zero(t, reqs[0].At, "the first request at t = 0")
		gaps := make([]float64, n-1)
		sum := 0.0
		for i := 1; i < n; i++ {
			require.GreaterOrEqual(t, reqs[i].At, reqs[i-1].At)
			gaps[i-1] = float64(reqs[i].At-reqs[i-1].At) / 1e9
			sum += gaps[i-1]
		}
		mean := sum / float64(len(gaps))
		tol := 5 * c.cv / math.Sqrt(n)
		assert.InEpsilon(t, 1/rate, mean, tol, "burstiness %g: mean gap", c.burstiness)
		if c.burstiness == 1 {
			ss := 0.0
			for _, g := range gaps {
				ss += (g - mean) * (g - mean)
			}
			cv := math.Sqrt(ss/float64(len(gaps)-1)) / mean
			assert.InDelta(t, c.cv, cv, 0.05, "Poisson: gap CV")
		}
	}
}

func TestBurstinessChangesSpread(t *testing.T) {
	cv := func(b float64) float64 {
		w := randomWorkload(5000, 64, 8, 0, 10, 2)
		w.Arrivals.Burstiness = b
		reqs := allRequests(build(t, w))
		var xs []float64
		for i := 1; i < len(reqs); i++ {
			xs = append(xs, float64(reqs[i].At-reqs[i-1].At))
		}
		m, ss := 0.0, 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return math.Sqrt(ss/float64(len(xs))) / m
	}
	// gamma shape k has CV 1/√k: 0.5 for k = 4, 2 for k = 0.25
	assert.InDelta(t, 0.5, cv(4), 0.05)
	assert.InDelta(t, 2.0, cv(0.25), 0.3)
}

func TestSeedDeterminism(t *testing.T) {
	sp := func(seed int64) *scenarios.Workload {
		w := &scenarios.Workload{Seed: seed, Dataset: "shared_prefix", Arrivals: scenarios.DefaultArrivals(),
			SharedPrefix: &scenarios.SharedPrefix{NumGroups: 5, NumPromptsPerGroup: 5, SystemPromptLen: 32, QuestionLen: 64, OutputLen: 8}}
		w.Arrivals.Stages = []scenarios.Stage{{Rate: 5, DurationS: 10}}
		return w
	}
	cases := map[string]func(int64) *scenarios.Workload{
		"random poisson": func(s int64) *scenarios.Workload { return randomWorkload(200, 100, 20, 0.5, 4, s) },
		"shared_prefix":  sp,
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := build(t, mk(1)), build(t, mk(1))
			assert.Equal(t, a, b, "same seed, same plan")
			c := build(t, mk(2))
			assert.NotEqual(t, a, c, "another seed, another plan")
		})
	}
}

func TestSharedPrefix(t *testing.T) {
	const groups, perGroup, sys, q, out = 4, 5, 100, 60, 12
	n := groups * perGroup
	w := &scenarios.Workload{Seed: 3, Dataset: "shared_prefix", Arrivals: scenarios.DefaultArrivals(),
		SharedPrefix: &scenarios.SharedPrefix{NumGroups: groups, NumPromptsPerGroup: perGroup, SystemPromptLen: sys, QuestionLen: q, OutputLen: out}}
	w.Arrivals.Stages = []scenarios.Stage{{Rate: 5, DurationS: 6}, {Rate: 10, DurationS: 3.5}} // 30 + 35 requests
	reqs := allRequests(build(t, w))
	require.Len(t, reqs, 65)
	require.Greater(t, len(reqs), 2*n)

	content := map[uint64]bool{}
	groupOf := map[uint64]uint64{} // ContentKey → PrefixKey
	for i, r := range reqs {
		assert.Equal(t, i, int(r.ID), "ids run across stages")
		assert.Equal(t, sys+q, int(r.PromptTokens), "prompt_len omitted: system + question")
		assert.Equal(t, out, int(r.OutputTokens))
		assert.Equal(t, sys, int(r.PrefixTokens))
		assert.NotZero(t, r.PrefixKey)
		if i < n {
			content[r.ContentKey] = true
		}
		if i+n < len(reqs) {
			assert.Equal(t, r.ContentKey, reqs[i+n].ContentKey, "request %d and %d send the same prompt", i, i+n)
			assert.Equal(t, r.PrefixKey, reqs[i+n].PrefixKey)
		}
		if g, ok := groupOf[r.ContentKey]; ok {
			assert.Equal(t, g, r.PrefixKey, "a prompt always carries its group's prefix")
		}
		groupOf[r.ContentKey] = r.PrefixKey
	}
	assert.Len(t, content, n, "N = groups × per_group distinct prompts")
	perPrefix := map[uint64]int{}
	for _, g := range groupOf {
		perPrefix[g]++
	}
	assert.Len(t, perPrefix, groups, "one system prompt per group")
	for _, c := range perPrefix {
		assert.Equal(t, perGroup, c, "each group has per_group prompts")
	}
	for _, g := range groupOf {
		_, clash := content[g]
		assert.False(t, clash, "prefix and prompt identities differ")
	}
}

func TestSharedPrefixPromptLenAndNoStages(t *testing.T) {
	w := &scenarios.Workload{Dataset: "shared_prefix", Arrivals: scenarios.DefaultArrivals(),
		SharedPrefix: &scenarios.SharedPrefix{NumGroups: 3, NumPromptsPerGroup: 4, SystemPromptLen: 100, QuestionLen: 466, OutputLen: 247, PromptLen: 592}}
	p := build(t, w)
	require.Len(t, p.Stages, 1)
	reqs := p.Stages[0].Requests
	require.Len(t, reqs, 12, "without stages each prompt is sent once")
	keys := map[uint64]bool{}
	for _, r := range reqs {
		assert.Equal(t, 592, int(r.PromptTokens), "the measured prompt_len")
		assert.Equal(t, 100, int(r.PrefixTokens))
		assert.Zero(t, r.At, "rate inf")
		keys[r.ContentKey] = true
	}
	assert.Len(t, keys, 12)
}

func TestStages(t *testing.T) {
	stages := []scenarios.Stage{{Rate: 5, DurationS: 60}, {Rate: 2.5, DurationS: 3}, {Rate: 0.5, DurationS: 2}, {Rate: 33.3, DurationS: 7.7}}
	w := randomWorkload(50, 64, 8, 0, math.Inf(1), 9)
	w.Arrivals.Stages = stages
	p := build(t, w)
	require.Len(t, p.Stages, len(stages))
	id := 0
	for k, st := range p.Stages {
		want := int(math.Round(stages[k].Rate * stages[k].DurationS))
		require.Len(t, st.Requests, want, "stage %d sends round(rate × duration)", k)
		assert.Equal(t, StageIntervalNs, st.IntervalNs, "1 s pause after each stage")
		assert.Zero(t, st.Requests[0].At, "stage %d starts at offset 0", k)
		for i, r := range st.Requests {
			assert.Equal(t, id, int(r.ID))
			id++
			if i > 0 {
				assert.GreaterOrEqual(t, r.At, st.Requests[i-1].At, "stage %d offsets non-decreasing", k)
			}
		}
		last := st.Requests[len(st.Requests)-1].At
		assert.Less(t, last, int64(stages[k].DurationS*1e9), "stage %d ends inside its duration", k)
	}
	assert.Equal(t, id, p.NumRequests())
	// 300 requests over a 50-prompt pool: the pool cycles
	all := allRequests(p)
	assert.Equal(t, all[0].ContentKey, all[50].ContentKey)
	assert.Equal(t, all[0].PromptTokens, all[50].PromptTokens)
}

func TestStagesSpreadOverDuration(t *testing.T) {
	// gaps rescaled to sum to the duration: the last request lands near
	// the end (the final gap is one exponential draw of the n, ≈ d/n).
	w := randomWorkload(10, 64, 8, 0, math.Inf(1), 4)
	w.Arrivals.Stages = []scenarios.Stage{{Rate: 10, DurationS: 100}}
	reqs := build(t, w).Stages[0].Requests
	require.Len(t, reqs, 1000)
	assert.Greater(t, reqs[len(reqs)-1].At, int64(95e9))
}

func TestBuildUnknownDataset(t *testing.T) {
	_, err := Build(&scenarios.Workload{Dataset: "sharegpt"}, noResolve)
	assert.EqualError(t, err, `workload.dataset: unknown "sharegpt"`)
}

func TestBuildTraceResolvesPath(t *testing.T) {
	var asked string
	w := &scenarios.Workload{Dataset: "trace", Trace: &scenarios.TraceData{Path: "prefix_groups.csv"}, Arrivals: scenarios.DefaultArrivals()}
	p, err := Build(w, func(s string) string { asked = s; return "../../fixtures/traces/" + s })
	require.NoError(t, err)
	assert.Equal(t, "prefix_groups.csv", asked)
	require.Len(t, p.Stages, 1)
	assert.Equal(t, 12, p.NumRequests())
	assert.Zero(t, p.Stages[0].IntervalNs)
}

func TestArrivalsBeyondTheClockAreErrors(t *testing.T) {
	_, err := Build(randomWorkload(5, 64, 8, 0, 1e-300, 0), noResolve)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workload.arrivals.request_rate: 1e-300 requests/s sends request 1 after")

	w := randomWorkload(5, 64, 8, 0, math.Inf(1), 0)
	w.Arrivals.Stages = []scenarios.Stage{{Rate: 1e-10, DurationS: 1e11}}
	_, err = Build(w, noResolve)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workload.arrivals.stages[0].duration_s: must be <")
}

// TestRequestIsCompact: a plan holds every request from the start (10⁶ in
// sim's BenchmarkMillion, ~61 MB at 64 bytes each; 168 bytes with int
// fields and a conversation turn's fields in every request), so Request's
// counts and indices stay int32, its fields packed, and the turn's fields
// behind one pointer. 64 bytes, a cache line: the client reads a
// request's entry once, an arrival after the last, each a fresh line.
func TestRequestIsCompact(t *testing.T) {
	assert.Equal(t, uintptr(64), unsafe.Sizeof(Request{}))
	// A request outside conversations has no turn fields: it reads zeros.
	p := build(t, randomWorkload(3, 64, 8, 0, math.Inf(1), 1))
	for _, r := range allRequests(p) {
		assert.False(t, r.HasTurn())
		assert.Nil(t, r.Segments())
		assert.Zero(t, r.OutputKey())
		assert.Zero(t, r.ThinkNs())
		assert.Zero(t, r.Session())
		assert.Zero(t, r.Turn())
		assert.Zero(t, r.ReusedTokens())
	}
}

// TestStagePlanOffsets: each stage's offsets are its exponential gaps
// (drawn in turn from the plan's generator) scaled to sum to the
// duration, accumulated in float64 and truncated to ns: worked here from
// the same generator, for the two stages together.
func TestStagePlanOffsets(t *testing.T) {
	stages := []scenarios.Stage{{Rate: 7, DurationS: 3}, {Rate: 2.5, DurationS: 4.4}}
	pool := make([]Request, 5)
	for i := range pool {
		pool[i] = Request{PromptTokens: int32(10 + i), ContentKey: uint64(i + 1)}
	}
	p, err := stagePlan(pool, stages, rand.New(rand.NewPCG(4, 4)))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(4, 4))
	for k, st := range stages {
		gaps := make([]float64, int(math.Round(st.Rate*st.DurationS)))
		sum := 0.0
		for i := range gaps {
			gaps[i] = rng.ExpFloat64()
			sum += gaps[i]
		}
		require.Len(t, p.Stages[k].Requests, len(gaps))
		tm := 0.0
		for i, g := range gaps {
			require.Equal(t, int64(tm*1e9), p.Stages[k].Requests[i].At, "stage %d request %d", k, i)
			tm += g * (st.DurationS / sum)
		}
	}
}
