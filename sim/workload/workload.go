package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"frontier/scenarios"
	"frontier/sim/engine"
)

// Request is one planned request. Lengths are tokens; At is nanoseconds
// from the start of its stage.
type Request struct {
	ID    int
	Stage int
	// Session is the conversation this request is a turn of, numbered from
	// 1 in the plan; 0 = not part of a session. Turn is its 1-based turn
	// within the session (0 outside sessions). A router may use Session
	// for affinity.
	Session      int
	Turn         int
	At           int64
	PromptTokens int
	OutputTokens int
	// PrefixKey names the content of the first PrefixTokens prompt tokens
	// (a shared system prompt); ContentKey names the whole prompt's content
	// (equal for repeats of one prompt). See engine.Request.
	PrefixKey    uint64
	PrefixTokens int
	ContentKey   uint64
	// UniquePrompt: no other request repeats this prompt beyond its shared
	// prefix (random dataset, trace rows).
	UniquePrompt bool
	// Segments, when set, is the prompt's content as streams
	// (engine.Request.Segments): a session turn's prompt is the session's
	// earlier messages and replies (OutputKey of the earlier turns) plus
	// its new message. OutputKey names this request's generated tokens (0 =
	// unique to it); ReusedTokens is how much of its prompt + output a later
	// request's prompt repeats.
	Segments     []engine.Segment
	OutputKey    uint64
	ReusedTokens int
	// ClosedLoop: the request is sent ThinkNs after its predecessor (the
	// request whose Next names it) finished, not at At. Next is the index,
	// in the stage's Requests, of the closed-loop request this one
	// triggers; 0 = none (a successor always comes after its predecessor,
	// so index 0 never is one).
	ClosedLoop bool
	ThinkNs    int64
	Next       int
	// Priority is the request's priority (vLLM's "priority" request field;
	// lower is served first under --scheduling-policy priority), and Class
	// its index in Plan.Classes (0 when the plan has none).
	Priority int
	Class    int
}

// Stage is a group of requests sent together. The next stage starts
// IntervalNs after every request of this one has finished or failed
// (inference-perf); a plan with one stage has no pause.
type Stage struct {
	Requests   []Request
	IntervalNs int64
}

// Plan is the whole client workload.
type Plan struct {
	Stages []Stage
	// Classes are the request classes (workload.classes, or one per
	// distinct value of a trace's priority column); nil when the workload
	// has none.
	Classes []Class
}

// NumRequests counts the planned requests.
func (p *Plan) NumRequests() int {
	n := 0
	for _, s := range p.Stages {
		n += len(s.Requests)
	}
	return n
}

// StageIntervalNs is inference-perf's pause between stages (load.interval,
// 1 s in every shared run).
const StageIntervalNs = int64(1e9)

// Build plans the workload w. Relative paths (trace) resolve with resolve.
func Build(w *scenarios.Workload, resolve func(string) string) (*Plan, error) {
	rng := rand.New(rand.NewPCG(uint64(w.Seed), 0x5eed))
	switch w.Dataset {
	case "random":
		reqs := randomDataset(w.Random, rng)
		mixClasses(reqs, w)
		plan, err := planArrivals(reqs, &w.Arrivals, rng)
		return withClasses(plan, w), err
	case "shared_prefix":
		plan, err := sharedPrefix(w.SharedPrefix, &w.Arrivals, rng, func(prompts []Request) { mixClasses(prompts, w) })
		return withClasses(plan, w), err
	case "trace":
		reqs, err := ReadTrace(resolve(w.Trace.Path))
		if err != nil {
			return nil, err
		}
		return &Plan{Stages: []Stage{{Requests: reqs}}, Classes: traceClasses(reqs)}, nil
	}
	return nil, fmt.Errorf("workload.dataset: unknown %q", w.Dataset)
}

// randomDataset draws `vllm bench serve --dataset-name random` lengths:
// uniform integers in [⌊len·(1−r)⌋, ⌊len·(1+r)⌋] (RandomDataset.sample),
// each prompt distinct random tokens.
func randomDataset(r *scenarios.RandomData, rng *rand.Rand) []Request {
	reqs := make([]Request, r.NumPrompts)
	inLo, inHi := lengthRange(r.InputLen, r.RangeRatio)
	outLo, outHi := lengthRange(r.OutputLen, r.RangeRatio)
	for i := range reqs {
		reqs[i] = Request{
			ID:           i,
			PromptTokens: inLo + rng.IntN(inHi-inLo+1),
			OutputTokens: outLo + rng.IntN(outHi-outLo+1),
			ContentKey:   uniqueKey(i),
			UniquePrompt: true,
		}
	}
	return reqs
}

func lengthRange(n int, r float64) (int, int) {
	lo := max(1, int(float64(n)*(1-r)))
	hi := max(lo, int(float64(n)*(1+r)))
	return lo, hi
}

func uniqueKey(i int) uint64 { return 0xa076_1d64_78bd_642f ^ uint64(i+1)*0xe703_7ed1_a0b4_28db }

// Kinds of session content streams (streamKey).
const (
	keySystem  = iota + 1 // a system prompt (by group)
	keyMessage            // a turn's new message(s): user message or tool result, with template tokens
	keyReply              // a turn's generated reply
)

// streamKey names a content stream of a session workload: its kind and
// two numbers (session and turn, or group). splitmix64 finalizer over the
// three, so distinct arguments give distinct keys in practice (as vLLM's
// block hashes are collision-free in practice).
func streamKey(kind, a, b uint64) uint64 {
	x := kind*0x9e37_79b9_7f4a_7c15 ^ (a+1)*0xbf58_476d_1ce4_e5b9 ^ (b+1)*0x94d0_49bb_1331_11eb
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x | 1 // never 0 (0 = "unique to the request")
}

// maxOffsetS is the latest send time, seconds, that the nanosecond clock
// holds (about 292 years); later offsets would overflow int64.
const maxOffsetS = math.MaxInt64 / 1e9

// planArrivals spaces requests as `vllm bench serve` does: all at t = 0 for
// rate inf, else gamma gaps with shape burstiness and mean 1/rate
// (burstiness 1 = Poisson), the first request at t = 0.
func planArrivals(reqs []Request, a *scenarios.Arrivals, rng *rand.Rand) (*Plan, error) {
	if len(a.Stages) > 0 {
		return stagePlan(reqs, a.Stages, rng)
	}
	rate := float64(a.RequestRate)
	if !math.IsInf(rate, 1) {
		g := distuv.Gamma{Alpha: a.Burstiness, Beta: rate * a.Burstiness, Src: rng}
		t := 0.0
		for i := range reqs {
			if !(t < maxOffsetS) {
				return nil, fmt.Errorf("workload.arrivals.request_rate: %g requests/s sends request %d after %.3g s, beyond the simulated clock (%.3g s)", rate, i, t, maxOffsetS)
			}
			reqs[i].At = int64(t * 1e9)
			t += g.Rand()
		}
	}
	return &Plan{Stages: []Stage{{Requests: reqs}}}, nil
}

// stagePlan cuts requests cyclically into inference-perf stages: stage k
// sends rate·duration requests whose exponential gaps are rescaled to sum
// to the duration (the first at the stage start).
func stagePlan(pool []Request, stages []scenarios.Stage, rng *rand.Rand) (*Plan, error) {
	plan := &Plan{}
	id := 0
	for k, st := range stages {
		if !(st.DurationS < maxOffsetS) {
			return nil, fmt.Errorf("workload.arrivals.stages[%d].duration_s: must be < %.3g s (the simulated clock), got %g", k, maxOffsetS, st.DurationS)
		}
		n := int(math.Round(st.Rate * st.DurationS))
		gaps := make([]float64, n)
		sum := 0.0
		for i := range gaps {
			gaps[i] = rng.ExpFloat64()
			sum += gaps[i]
		}
		scale := st.DurationS / sum
		reqs := make([]Request, n)
		t := 0.0
		for i := range reqs {
			r := pool[id%len(pool)]
			r.ID, r.Stage, r.At = id, k, int64(t*1e9)
			if r.ContentKey == 0 {
				r.ContentKey, r.UniquePrompt = uniqueKey(id), true
			}
			reqs[i] = r
			t += gaps[i] * scale
			id++
		}
		plan.Stages = append(plan.Stages, Stage{Requests: reqs, IntervalNs: StageIntervalNs})
	}
	return plan, nil
}

// sharedPrefix builds inference-perf's shared_prefix prompts: num_groups ×
// num_prompts_per_group distinct prompts, each its group's system prompt
// (system_prompt_len tokens, shared) then a unique question; the prompt
// list is shuffled once and request i sends prompt i mod N, so repeats hit
// the prefix cache in full. prompt_len, when given, is the measured prompt
// length (system + question + template); the template tokens are counted
// in the unique part.
func sharedPrefix(p *scenarios.SharedPrefix, a *scenarios.Arrivals, rng *rand.Rand, mix func([]Request)) (*Plan, error) {
	n := p.NumGroups * p.NumPromptsPerGroup
	promptLen := p.PromptLen
	if promptLen == 0 {
		promptLen = p.SystemPromptLen + p.QuestionLen
	}
	prompts := make([]Request, n)
	for i := range prompts {
		g := i / p.NumPromptsPerGroup
		prompts[i] = Request{
			PromptTokens: promptLen,
			OutputTokens: p.OutputLen,
			PrefixKey:    0x9e37_79b9_7f4a_7c15 ^ uint64(g+1)*0xbf58_476d_1ce4_e5b9,
			PrefixTokens: p.SystemPromptLen,
			ContentKey:   0x94d0_49bb_1331_11eb ^ uint64(i+1)*0x2545_f491_4f6c_dd1d,
		}
	}
	rng.Shuffle(n, func(i, j int) { prompts[i], prompts[j] = prompts[j], prompts[i] })
	mix(prompts)
	if len(a.Stages) > 0 {
		return stagePlan(prompts, a.Stages, rng)
	}
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = prompts[i]
		reqs[i].ID = i
	}
	return planArrivals(reqs, a, rng)
}
