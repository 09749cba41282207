package report

import (
	"errors"
	"fmt"
	"strconv"

	"frontier/sim"
	"frontier/sim/engine"
)

// Recorder is a sim.Observer that keeps vLLM's metrics per engine core as
// vLLM 0.11.0 counts them (vllm.go), the timeline of those metrics per
// interval, and, when a trace is attached, streams the trace. Create it
// with NewRecorder, pass it as sim.Options.Observer, call Begin with the
// simulation's engines before Run and Finish after.
//
// Times: vLLM stamps a request's events with engine-core timestamps; here
// they are the simulated times of the engine core (a token's time is the
// end of the step that sampled it). TTFT and E2E are measured from the
// request's arrival at the API server (its send time; for the decode
// instance of a disaggregated deployment, the end of its prefill, when the
// proxy hands it over), to the step that produced the token: the API
// server's output processing after the engine is not in them.
//
// Memory: per engine O(1) histograms, the timeline O(run duration ÷
// interval × engines), and per request only while it is in flight.
type Recorder struct {
	interval int64 // ns; 0 = no timeline
	engines  []*engineAcc
	total    *engineAcc // timeline total (no histograms)
	reqs     requestStates
	rows     []Row
	open     int64 // end of the open timeline interval, ns
	openK    int64 // its index
	stages   []int64
	trace    *Trace
	endNs    int64
	lastNs   int64
	// maxRows bounds the timeline (MaxTimelineRows); past it no row is
	// kept (full) and Finish returns ErrTimelineTooLong.
	maxRows int
	full    bool
}

// MaxTimelineRows bounds the timeline's rows (engines and total over all
// intervals, 144 bytes each: 144 MB of rows, 0.53 GB resident at the
// limit, measured) so memory stays bounded whatever the interval and the
// run's length. Before the bound, a 1 ms interval over a 1,672 s run kept
// 3.3 M rows at 1.8 GB resident.
const MaxTimelineRows = 1_000_000

// ErrTimelineTooLong is Finish's error when the run needed more timeline
// rows than the recorder keeps; the message says the smallest interval
// that fits.
var ErrTimelineTooLong = errors.New("timeline too long")

// NewRecorder returns a recorder with a timeline of interval ns (0: no
// timeline) and an optional trace (nil: none).
func NewRecorder(interval int64, trace *Trace) *Recorder {
	return &Recorder{interval: interval, trace: trace, maxRows: MaxTimelineRows}
}

// Attach streams the run into trace too; call it before Begin.
func (r *Recorder) Attach(trace *Trace) { r.trace = trace }

// Begin names the engine cores of the run (sim.Sim.EngineSpecs) and the
// served model name (model_name label); call it before the run.
func (r *Recorder) Begin(engines []sim.EngineSpec, model string) {
	for _, e := range engines {
		r.engines = append(r.engines, newEngineAcc(e, model))
	}
	r.total = &engineAcc{spec: sim.EngineSpec{ID: -1}}
	r.open, r.openK = r.interval, 0
	if r.trace != nil {
		r.trace.begin(engines, model)
	}
}

// engineAcc is one engine core's metrics.
type engineAcc struct {
	spec  sim.EngineSpec
	model string
	cum   counters // since the start
	prev  counters // at the last timeline boundary
	// snap is the scheduler state after the engine's latest step, with the
	// request counts at that instant (what a scrape sees).
	snap    sim.EngineState
	snapCnt counters
	snapNs  int64
	h       histograms
}

// counters are the monotone counts of one engine (tokens, requests).
type counters struct {
	prompt, generation, preemptions, prefixQueries, prefixHits, success int64
	// arrived (QUEUED), finished (by the engine) and aborted (by the
	// client while in the engine): requests, for conservation checks.
	arrived, finished, aborted int64
}

func (c *counters) add(o counters) {
	c.prompt += o.prompt
	c.generation += o.generation
	c.preemptions += o.preemptions
	c.prefixQueries += o.prefixQueries
	c.prefixHits += o.prefixHits
	c.success += o.success
	c.arrived += o.arrived
	c.finished += o.finished
	c.aborted += o.aborted
}

func (c counters) minus(o counters) counters {
	o.prompt, o.generation, o.preemptions = c.prompt-o.prompt, c.generation-o.generation, c.preemptions-o.preemptions
	o.prefixQueries, o.prefixHits, o.success = c.prefixQueries-o.prefixQueries, c.prefixHits-o.prefixHits, c.success-o.success
	o.arrived, o.finished, o.aborted = c.arrived-o.arrived, c.finished-o.finished, c.aborted-o.aborted
	return o
}

// histograms are an engine's vLLM histograms.
type histograms struct {
	ttft, itl, e2e, queue, inference, prefill, decode *Histogram
	promptTokens, generationTokens, iterationTokens   *Histogram
}

func newEngineAcc(e sim.EngineSpec, model string) *engineAcc {
	tok := Buckets125(e.MaxModelLen)
	const ns = 1e-9 // times are observed in ns, exposed in seconds
	return &engineAcc{spec: e, model: model, h: histograms{
		ttft: NewHistogram(BucketsTTFT, ns), itl: NewHistogram(BucketsITL, ns),
		e2e: NewHistogram(BucketsRequestLatency, ns), queue: NewHistogram(BucketsRequestLatency, ns),
		inference: NewHistogram(BucketsRequestLatency, ns), prefill: NewHistogram(BucketsRequestLatency, ns),
		decode: NewHistogram(BucketsRequestLatency, ns), promptTokens: NewHistogram(tok, 1),
		generationTokens: NewHistogram(tok, 1), iterationTokens: NewHistogram(BucketsIterationTokens, 1),
	}, snap: sim.EngineState{KVBlocks: e.KVBlocks}}
}

// at moves the clock to ns, closing timeline intervals that end before it.
func (r *Recorder) at(ns int64) {
	r.lastNs = ns
	for r.interval > 0 && ns > r.open && !r.full {
		r.closeInterval(r.open)
		r.openK++
		r.open += r.interval
	}
}

// StageStarted implements sim.Observer.
func (r *Recorder) StageStarted(k int, ns int64) {
	r.at(ns)
	r.stages = append(r.stages, ns)
	if r.trace != nil {
		r.trace.stage(k, ns)
	}
}

// Queued implements sim.Observer.
func (r *Recorder) Queued(engine int, rec *sim.RequestRecord, ns int64) {
	r.at(ns)
	e := r.engines[engine]
	e.cum.arrived++
	st := r.reqs.get(int(rec.ID))
	if e.spec.Pool == "decode" {
		// The proxy hands the request to the decode instance when its
		// prefill ends (st.last on the prefill engine).
		st.arrival = st.last
		if st.arrival <= 0 {
			st.arrival = ns
		}
	} else {
		st.arrival = rec.SendNs
	}
	st.queued, st.scheduled, st.first, st.last = ns, -1, -1, -1
	if r.trace != nil {
		st.traced = r.trace.queued(engine, rec, ns)
	}
}

// Preempted implements sim.Observer. vLLM counts the preemption in
// vllm:num_preemptions_total only when the request next emits output: its
// PREEMPTED event travels with that EngineCoreOutput (scheduler.py
// update_from_output: events=request.take_events(), for requests with new
// tokens only; stats.py update_from_events: num_preempted_reqs += 1). A
// request aborted before its next token never reports it.
func (r *Recorder) Preempted(engine, id int, ns int64) {
	r.at(ns)
	r.reqs.get(id).preempted++
	if r.trace != nil {
		r.trace.preempted(engine, id, ns)
	}
}

// StepRecord implements sim.Observer.
func (r *Recorder) StepRecord(rec *sim.StepRecord) {
	r.at(rec.StartNs + rec.DurationNs)
	e := r.engines[rec.Engine]
	if rec.PPStage <= 0 { // once per step (the first stage's record under PP)
		e.cum.prefixQueries += int64(rec.PrefixQueries)
		e.cum.prefixHits += int64(rec.PrefixHits)
	}
	if r.trace != nil {
		r.trace.step(rec)
	}
}

// StepDone implements sim.Observer: tokens, first tokens, finished
// requests and the engine's state after the step.
func (r *Recorder) StepDone(engine int, st *engine.Step, after sim.EngineState, ns int64) {
	r.at(ns)
	e := r.engines[engine]
	var prompt, generated int64
	for i := range st.Items {
		it := &st.Items[i]
		q := it.Req
		s := r.reqs.get(q.ID)
		if s.scheduled < 0 {
			s.scheduled = st.ScheduledNs
		}
		if s.traced != nil {
			r.trace.item(s.traced, engine, st, it, ns)
		}
		if !it.Samples || (q.Status != engineRunning && q.Status != engineFinished) {
			continue
		}
		generated++
		e.cum.preemptions += int64(s.preempted) // events ride on the output
		s.preempted = 0
		if q.NumOutput == 1 { // the first token: is_prefilling
			prompt += int64(q.PromptTokens)
			s.first = ns
			e.h.ttft.Observe(ns - s.arrival)
		} else {
			e.h.itl.Observe(ns - s.last)
		}
		s.last = ns
		if q.Status == engineFinished {
			e.cum.finished++
			e.cum.success++
			e.h.e2e.Observe(ns - s.arrival)
			e.h.queue.Observe(s.scheduled - s.queued)
			e.h.prefill.Observe(s.first - s.scheduled)
			e.h.decode.Observe(s.last - s.first)
			e.h.inference.Observe(s.last - s.scheduled)
			e.h.promptTokens.Observe(int64(q.PromptTokens))
			e.h.generationTokens.Observe(int64(q.NumOutput))
		}
	}
	e.cum.prompt += prompt
	e.cum.generation += generated
	if generated > 0 {
		e.h.iterationTokens.Observe(prompt + generated)
	}
	e.snap, e.snapCnt, e.snapNs = after, e.cum, ns
	if r.trace != nil {
		r.trace.stepDone(engine, after, ns)
		r.trace.flush()
	}
	r.reqs.drop()
}

// Aborted implements sim.Observer.
func (r *Recorder) Aborted(engine, id int, ns int64) {
	r.at(ns)
	if engine >= 0 {
		r.engines[engine].cum.aborted++
	}
	if r.trace != nil {
		r.trace.aborted(engine, id, ns)
	}
}

// Closed implements sim.Observer.
func (r *Recorder) Closed(rec *sim.RequestRecord, ns int64) {
	r.reqs.closed(int(rec.ID))
	if r.trace != nil {
		r.trace.closed(rec, ns)
	}
}

// Finish closes the timeline at endNs (the run's end) and the trace.
func (r *Recorder) Finish(endNs int64) error {
	r.at(max(endNs, r.lastNs))
	r.endNs = max(endNs, r.lastNs)
	if r.interval > 0 && (len(r.rows) == 0 || r.rows[len(r.rows)-1].EndNs < r.endNs) {
		r.closeInterval(r.endNs)
	}
	r.reqs.drop()
	var err error
	if r.full {
		per := len(r.engines) + 1
		n := (r.endNs + r.interval - 1) / r.interval
		fits := int64(max(1, r.maxRows/per)) // intervals that fit
		fit := (r.endNs + fits - 1) / fits   // ns
		err = fmt.Errorf("%w: %d intervals of %s s × %d rows (engines and total) over the run's %.1f s; at most %d rows are kept: use an interval ≥ %s s",
			ErrTimelineTooLong, n, fmtS(r.interval), per, sec(r.endNs), r.maxRows, fmtS(roundUp(fit)))
	}
	if r.trace != nil {
		if terr := r.trace.finish(r.endNs); err == nil {
			err = terr
		}
	}
	return err
}

// fmtS formats ns as seconds, shortest form.
func fmtS(ns int64) string { return strconv.FormatFloat(sec(ns), 'g', -1, 64) }

// roundUp rounds ns up to 1, 2 or 5 times a power of ten (an interval a
// user would type).
func roundUp(ns int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= ns {
				return m * p
			}
		}
	}
}

// sec converts ns to seconds.
func sec(ns int64) float64 { return float64(ns) / 1e9 }

// Status values the recorder reads.
const (
	engineRunning  = engine.Running
	engineFinished = engine.Finished
)

// requestStates keeps per-request times while requests are in flight, in
// pages of request IDs (IDs are dense and roughly in send order), and
// drops a page once every request of it closed.
type requestStates struct {
	pages []*statePage
	done  []int // pages to drop at the next drop()
}

const pageSize = 1024

type statePage struct {
	s      [pageSize]reqState
	closed int
}

// reqState is one request's engine-core times on its current engine, ns
// (-1: not yet), and its preemptions not yet reported (Preempted).
type reqState struct {
	arrival, queued, scheduled, first, last int64
	preempted                               int32
	traced                                  *traceReq // in the trace
}

func (q *requestStates) get(id int) *reqState {
	p := id / pageSize
	if p < len(q.pages) && q.pages[p] != nil {
		return &q.pages[p].s[id%pageSize]
	}
	for len(q.pages) <= p {
		q.pages = append(q.pages, nil)
	}
	if q.pages[p] == nil {
		q.pages[p] = &statePage{}
	}
	return &q.pages[p].s[id%pageSize]
}

func (q *requestStates) closed(id int) {
	p := id / pageSize
	for len(q.pages) <= p {
		q.pages = append(q.pages, nil)
	}
	if q.pages[p] == nil {
		q.pages[p] = &statePage{}
	}
	q.pages[p].closed++
	if q.pages[p].closed == pageSize {
		q.done = append(q.done, p)
	}
}

// drop frees the pages whose requests all closed. It runs after a step
// was applied: a request that completed in a step closes before the
// step's StepDone, which still reads its times.
func (q *requestStates) drop() {
	for _, p := range q.done {
		q.pages[p] = nil
	}
	q.done = q.done[:0]
}
