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
	At int64
	// PrefixKey names the content of the first PrefixTokens prompt tokens
	// (a shared system prompt); ContentKey names the whole prompt's content
	// (equal for repeats of one prompt). See engine.Request.
	PrefixKey  uint64
	ContentKey uint64
	// turn holds what only a conversation's turn (or a closed-loop
	// request) has: Segments, OutputKey, ThinkNs, Session, Turn and
	// ReusedTokens (methods); nil for every other request, which reads
	// them as zero.
	turn *turnFields
	// Priority is the request's priority (vLLM's "priority" request field;
	// lower is served first under --scheduling-policy priority).
	Priority int
	// Counts and indices are int32 (a plan of 10⁶ requests is held whole:
	// 64 bytes a request, a cache line, not 168 with int fields and the
	// turn's fields in every request). Its stage is the Plan.Stages entry
	// that holds it (not a field: the client sends a stage's requests
	// while that stage runs).
	ID           int32
	PromptTokens int32
	OutputTokens int32
	PrefixTokens int32
	// Next is the index, in the stage's Requests, of the closed-loop
	// request this one triggers; 0 = none (a successor always comes after
	// its predecessor, so index 0 never is one).
	Next int32
	// Class is the request's index in Plan.Classes (0 when the plan has
	// none; scenarios.MaxClasses bounds it).
	Class uint8
	// UniquePrompt: no other request repeats this prompt beyond its shared
	// prefix (random dataset, trace rows).
	UniquePrompt bool
	// ClosedLoop: the request is sent ThinkNs after its predecessor (the
	// request whose Next names it) finished, not at At.
	ClosedLoop bool
}

// turnFields are a request's fields that only conversation turns and
// closed-loop requests set (Request.turn): kept apart, a request without
// them takes 72 bytes, not 120 (a million-request plan: 48 MB less; the
// 9,000-request codegen run: 432 KB, ~105 fresh pages, less).
type turnFields struct {
	segments                    []engine.Segment
	outputKey                   uint64
	thinkNs                     int64
	session, turn, reusedTokens int32
}

// HasTurn is whether r has turn fields: a conversation's turn or a
// closed-loop request (the others read every one of them as zero).
func (r *Request) HasTurn() bool { return r.turn != nil }

// Session is the conversation this request is a turn of, numbered from 1
// in the plan; 0 = not part of a session. A router may use it for
// affinity.
func (r *Request) Session() int32 { return r.fields().session }

// Turn is the request's 1-based turn within its session (0 outside
// sessions).
func (r *Request) Turn() int32 { return r.fields().turn }

// ReusedTokens is how much of its prompt + output a later request's
// prompt repeats, tokens.
func (r *Request) ReusedTokens() int32 { return r.fields().reusedTokens }

// Segments, when set, is the prompt's content as streams
// (engine.Request.Segments): a session turn's prompt is the session's
// earlier messages and replies (OutputKey of the earlier turns) plus its
// new message. Nil outside conversations.
func (r *Request) Segments() []engine.Segment { return r.fields().segments }

// OutputKey names this request's generated tokens (0 = unique to it).
func (r *Request) OutputKey() uint64 { return r.fields().outputKey }

// ThinkNs is how long after its predecessor finished a closed-loop
// request is sent, ns (see ClosedLoop); 0 for others.
func (r *Request) ThinkNs() int64 { return r.fields().thinkNs }

// noTurn is the turn fields of a request that has none: all zero, never
// written (turnOf gives a request fields of its own).
var noTurn turnFields

// fields is r's turn fields, noTurn when it has none.
func (r *Request) fields() *turnFields {
	if r.turn == nil {
		return &noTurn
	}
	return r.turn
}

// turnOf is r's turn fields, new ones when it has none yet (building a
// plan: a request copied after that shares them, and they do not change
// once the plan is built).
func (r *Request) turnOf() *turnFields {
	if r.turn == nil {
		r.turn = new(turnFields)
	}
	return r.turn
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
	// Notes say what the plan changed to fit the deployment (a session's
	// oldest turns dropped for max_model_len), printed once.
	Notes []string
	// SessionLabels are a trace's session_id labels as written:
	// SessionLabels[n-1] is session n's (Request.Session); nil for other
	// datasets, whose sessions are numbers.
	SessionLabels []string
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
	return BuildFor(w, resolve, 0)
}

// BuildFor plans the workload w for a deployment whose max_model_len is
// maxModelLen tokens (0 = unlimited): sessions drop a turn's oldest turns
// when its prompt + output would exceed it, as a chat client cuts history
// rather than send what vLLM rejects.
func BuildFor(w *scenarios.Workload, resolve func(string) string, maxModelLen int) (*Plan, error) {
	rng := rand.New(rand.NewPCG(uint64(w.Seed), 0x5eed))
	switch w.Dataset {
	case "random":
		reqs := randomDataset(w.Random, rng)
		mixClasses(reqs, w)
		addRandomPrefix(reqs, w.Random.PrefixLen)
		plan, err := planArrivals(reqs, &w.Arrivals, rng)
		return withClasses(plan, w), err
	case "sessions":
		plan, err := sessionsPlan(w.Sessions, &w.Arrivals, rng, maxModelLen)
		if err == nil {
			sessionClasses(plan.Stages[0].Requests, w)
		}
		return withClasses(plan, w), err
	case "lengths":
		path := w.Lengths.Path
		if resolve != nil {
			path = resolve(path)
		}
		reqs, err := lengthsDataset(w.Lengths, path, rng)
		if err != nil {
			return nil, err
		}
		mixClasses(reqs, w)
		plan, err := planArrivals(reqs, &w.Arrivals, rng)
		return withClasses(plan, w), err
	case "shared_prefix":
		plan, err := sharedPrefix(w.SharedPrefix, &w.Arrivals, rng, func(prompts []Request) { mixClasses(prompts, w) })
		return withClasses(plan, w), err
	case "trace":
		reqs, labels, err := ReadTraceSessions(resolve(w.Trace.Path))
		if err != nil {
			return nil, err
		}
		plan := &Plan{Stages: []Stage{{Requests: reqs}}, SessionLabels: labels}
		if classes, note := traceClasses(reqs); note != "" {
			plan.Notes = append(plan.Notes, note)
		} else {
			plan.Classes = classes
		}
		return plan, nil
	}
	return nil, fmt.Errorf("workload.dataset: unknown %q", w.Dataset)
}

// randomDataset draws `vllm bench serve --dataset-name random` lengths:
// uniform integers in [⌊len·(1−r)⌋, ⌊len·(1+r)⌋] (RandomDataset.sample),
// each prompt distinct random tokens (after the shared prefix that
// addRandomPrefix puts before each, --random-prefix-len).
func randomDataset(r *scenarios.RandomData, rng *rand.Rand) []Request {
	reqs := make([]Request, r.NumPrompts)
	inLo, inHi := lengthRange(r.InputLen, r.RangeRatio)
	outLo, outHi := lengthRange(r.OutputLen, r.RangeRatio)
	for i := range reqs {
		reqs[i] = Request{
			ID:           int32(i),
			PromptTokens: int32(inLo + rng.IntN(inHi-inLo+1)),
			OutputTokens: int32(outLo + rng.IntN(outHi-outLo+1)),
			ContentKey:   uniqueKey(i),
			UniquePrompt: true,
		}
	}
	return reqs
}

// addRandomPrefix puts --random-prefix-len tokens of one shared random
// prefix before every prompt (the prompt grows by n).
func addRandomPrefix(reqs []Request, n int) {
	if n == 0 {
		return
	}
	for i := range reqs {
		reqs[i].PromptTokens += int32(n)
		reqs[i].PrefixKey, reqs[i].PrefixTokens = randomPrefixKey, int32(n)
	}
}

// randomPrefixKey names the random dataset's one shared prefix.
var randomPrefixKey = streamKey(keySystem, 1<<41, 0)

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
	keyKept               // a cut conversation's kept turns, from a run's first cut turn (sessions.go)
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
	at, err := sendTimes(len(reqs), a, rng, "request")
	if err != nil {
		return nil, err
	}
	for i := range reqs {
		if at != nil {
			reqs[i].At = at[i]
		}
	}
	return &Plan{Stages: []Stage{{Requests: reqs}}}, nil
}

// sendTimes draws n send offsets, ns, as `vllm bench serve` spaces
// requests: nil (all at t = 0) for rate inf, else gamma gaps with shape
// burstiness and mean 1/rate, the first at t = 0. what names the things
// sent, for the error.
func sendTimes(n int, a *scenarios.Arrivals, rng *rand.Rand, what string) ([]int64, error) {
	rate := float64(a.RequestRate)
	if math.IsInf(rate, 1) {
		return nil, nil
	}
	at := make([]int64, n)
	g := distuv.Gamma{Alpha: a.Burstiness, Beta: rate * a.Burstiness, Src: rng}
	t := 0.0
	for i := range at {
		if !(t < maxOffsetS) {
			return nil, fmt.Errorf("workload.arrivals.request_rate: %g %ss/s sends %s %d after %.3g s, beyond the simulated clock (%.3g s)", rate, what, what, i, t, maxOffsetS)
		}
		at[i] = int64(t * 1e9)
		t += g.Rand()
	}
	return at, nil
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
		// The gaps wait in the requests' At fields (their float64 bits)
		// until their sum gives the scale: a slice of their own was 8
		// bytes a request more, fresh pages (the codegen run's 72 KB).
		reqs := make([]Request, n)
		sum := 0.0
		for i := range reqs {
			g := rng.ExpFloat64()
			reqs[i].At = int64(math.Float64bits(g))
			sum += g
		}
		scale := st.DurationS / sum
		t := 0.0
		for i := range reqs {
			gap := math.Float64frombits(uint64(reqs[i].At))
			r := pool[id%len(pool)]
			r.ID, r.At = int32(id), int64(t*1e9)
			if r.ContentKey == 0 {
				r.ContentKey, r.UniquePrompt = uniqueKey(id), true
			}
			reqs[i] = r
			t += gap * scale
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
			PromptTokens: int32(promptLen),
			OutputTokens: int32(p.OutputLen),
			PrefixKey:    0x9e37_79b9_7f4a_7c15 ^ uint64(g+1)*0xbf58_476d_1ce4_e5b9,
			PrefixTokens: int32(p.SystemPromptLen),
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
		reqs[i].ID = int32(i)
	}
	return planArrivals(reqs, a, rng)
}
