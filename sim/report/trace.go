package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"frontier/sim"
	"frontier/sim/engine"
)

// Trace streams a run as a Chrome trace (the JSON trace event format that
// Perfetto and chrome://tracing load): a process per engine core with a
// thread per pipeline stage, each step a complete event ("X") with its
// batch in args, counter tracks ("C") for KV cache usage and the request
// queues, and a "requests" process in which each traced request is an
// async slice ("b"/"e", id = request ID) from its send to its last token
// received, holding its phases in order: queued, prefill (one slice per
// chunk), decode, KV transfer (disaggregated), streamed (from the last
// token leaving the engine to the client receiving it); a preempted
// request goes back to "queued (preempted)" and recomputes.
//
// Memory is bounded: events are written as they happen; only traced
// requests still in flight are held. Timestamps are µs.
type Trace struct {
	w       *bufio.Writer
	every   int // trace request IDs divisible by every
	traced  int
	total   int
	max     int
	reqs    map[int]*traceReq
	reqPid  int
	n       int // events written
	engines []traceEngine
	buf     []byte // scratch for one event
	// pending are requests closed since the last step was applied: a
	// request a step completes closes before the step's StepDone, which
	// still adds its last phases.
	pending []pendingClose
}

type pendingClose struct {
	rec sim.RequestRecord
	ns  int64
}

type traceEngine struct {
	stepStart        int64
	running, waiting int
	held             int
	countersSet      bool
	pool             string
}

// traceReq is a traced request in flight: its closed phases and the open
// one.
type traceReq struct {
	phases   []span
	open     string
	openAt   int64
	send     int64
	queuedOn int // engines it was queued on
}

type span struct {
	name       string
	start, end int64
	args       string // JSON object body, may be empty
}

// NewTrace returns a trace writing to w. maxRequests > 0 traces at most
// that many of the run's totalRequests: every k-th request ID (k the
// smallest that fits), so the traced requests spread over the whole run
// and the same run traces the same requests; 0 traces all.
func NewTrace(w io.Writer, maxRequests, totalRequests int) *Trace {
	t := &Trace{w: bufio.NewWriterSize(w, 1<<16), every: 1, total: totalRequests, max: maxRequests, reqs: map[int]*traceReq{}}
	if maxRequests > 0 && totalRequests > maxRequests {
		t.every = (totalRequests + maxRequests - 1) / maxRequests
	}
	return t
}

// Note says which requests the trace holds, or "" when it holds all.
func (t *Trace) Note() string {
	if t.every == 1 {
		return ""
	}
	return fmt.Sprintf("trace: %d of %d requests traced (every %s request ID, --trace-max-requests %d); every step is in it",
		(t.total+t.every-1)/t.every, t.total, ordinal(t.every), t.max)
}

// ordinal writes k ≥ 1 as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinal(k int) string {
	suffix := "th"
	if k%100 < 11 || k%100 > 13 {
		switch k % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(k) + suffix
}

func (t *Trace) sampled(id int) bool { return id%t.every == 0 }

// ts formats ns as µs with three decimals (exact).
func ts(ns int64) string { return strconv.FormatInt(ns/1000, 10) + "." + fmt.Sprintf("%03d", ns%1000) }

func (t *Trace) event(s string) {
	if t.n == 0 {
		t.w.WriteString("{\"traceEvents\":[\n")
	} else {
		t.w.WriteString(",\n")
	}
	t.n++
	t.w.WriteString(s)
}

func (t *Trace) begin(engines []sim.EngineSpec, model string) {
	t.engines = make([]traceEngine, len(engines))
	for i, e := range engines {
		pid := e.ID + 1
		name := fmt.Sprintf("engine %d", e.ID)
		if e.Pool != "" {
			name = fmt.Sprintf("%s engine %d", e.Pool, e.ID)
		}
		which := ""
		if e.Instances > 1 { // several vllm serve: say which this engine belongs to
			which = fmt.Sprintf("replica %d, ", e.Instance)
			if e.Pool != "" {
				which = fmt.Sprintf("instance %d, ", e.Instance)
			}
		}
		name += fmt.Sprintf(" (%sDP rank %d, %s)", which, e.DPRank, model)
		t.engines[i].pool = e.Pool
		t.event(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"args":{"name":%q}}`, pid, name))
		t.event(fmt.Sprintf(`{"name":"process_sort_index","ph":"M","pid":%d,"args":{"sort_index":%d}}`, pid, pid))
		for k := 0; k < e.PP; k++ {
			tn := "steps"
			if e.PP > 1 {
				tn = fmt.Sprintf("PP stage %d", k)
			}
			t.event(fmt.Sprintf(`{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":%q}}`, pid, k, tn))
		}
	}
	t.reqPid = len(engines) + 1
	name := "requests"
	if t.every > 1 {
		name = fmt.Sprintf("requests (every %s)", ordinal(t.every))
	}
	t.event(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"args":{"name":%q}}`, t.reqPid, name))
	t.event(fmt.Sprintf(`{"name":"process_sort_index","ph":"M","pid":%d,"args":{"sort_index":%d}}`, t.reqPid, t.reqPid))
}

func (t *Trace) stage(k int, ns int64) {
	t.event(fmt.Sprintf(`{"name":"stage %d","cat":"stage","ph":"i","s":"g","pid":%d,"tid":0,"ts":%s}`, k, t.reqPid, ts(ns)))
}

// step writes one step record as a complete event.
func (t *Trace) step(r *sim.StepRecord) {
	stage := max(r.PPStage, 0)
	if stage == 0 {
		t.engines[r.Engine].stepStart = r.StartNs
	}
	name := "mixed"
	switch {
	case r.Dummy:
		name = "dummy"
	case r.PrefillTokens == 0:
		name = "decode"
	case r.DecodeTokens == 0:
		name = "prefill"
	}
	// Appended by hand: one event per step is the trace's hot path.
	b := append(t.start(), `{"name":"`...)
	b = append(b, name...)
	b = append(b, `","cat":"step","ph":"X","pid":`...)
	b = strconv.AppendInt(b, int64(r.Engine+1), 10)
	b = appendInt(b, "tid", stage)
	b = appendTs(append(b, `,"ts":`...), r.StartNs)
	b = appendTs(append(b, `,"dur":`...), r.DurationNs)
	b = append(b, `,"args":{"prefill_tokens":`...)
	b = strconv.AppendInt(b, int64(r.PrefillTokens), 10)
	b = appendInt(b, "decode_tokens", r.DecodeTokens)
	b = appendInt(b, "padded_tokens", r.PaddedTokens)
	b = strconv.AppendBool(append(b, `,"cuda_graph":`...), r.Graph)
	b = appendInt(b, "running", r.Running)
	b = appendInt(b, "waiting", r.Waiting)
	b = appendInt(b, "kv_blocks", r.KVBlocksUsed)
	b = appendInt(b, "preempted", r.Preempted)
	b = append(b, "}}"...)
	t.end(b)
}

// appendInt appends ,"key":v.
func appendInt(b []byte, key string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}

// appendTs appends ns as µs with three decimals (exact).
func appendTs(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// start begins an event in the writer's free buffer (no copy when it
// fits); end writes it.
func (t *Trace) start() []byte {
	if t.w.Available() < 512 {
		t.w.Flush()
	}
	b := t.w.AvailableBuffer()
	if t.n == 0 {
		b = append(b, "{\"traceEvents\":[\n"...)
	} else {
		b = append(b, ",\n"...)
	}
	t.n++
	return b
}

func (t *Trace) end(b []byte) { t.w.Write(b) }

// stepDone writes the engine's counters when they changed and advances
// the traced requests of the step.
func (t *Trace) stepDone(engineID int, after sim.EngineState, ns int64) {
	e := &t.engines[engineID]
	if e.countersSet && e.held == after.KVBlocksHeld && e.running == after.Running && e.waiting == after.Waiting {
		return
	}
	// One counter event per change, one track per arg: KV cache usage in
	// % with two decimals (integer arithmetic: a float formatted per step
	// would be the trace's largest cost), running and waiting requests.
	b := append(t.start(), `{"name":"scheduler","ph":"C","pid":`...)
	b = strconv.AppendInt(b, int64(engineID+1), 10)
	b = appendTs(append(b, `,"ts":`...), ns)
	b = append(b, `,"args":{"KV cache usage (%)":`...)
	if usable := int64(after.KVBlocks - 1); usable > 0 {
		bp := (int64(after.KVBlocksHeld)*10000 + usable/2) / usable // basis points
		b = strconv.AppendInt(b, bp/100, 10)
		b = append(b, '.', byte('0'+bp%100/10), byte('0'+bp%10))
	} else {
		b = append(b, '0')
	}
	b = append(b, `,"running":`...)
	b = strconv.AppendInt(b, int64(after.Running), 10)
	b = append(b, `,"waiting":`...)
	b = strconv.AppendInt(b, int64(after.Waiting), 10)
	t.end(append(b, "}}"...))
	e.countersSet, e.held, e.running, e.waiting = true, after.KVBlocksHeld, after.Running, after.Waiting
}

// item advances a traced request by its share of a step that ended at ns
// on engine (called by the recorder for traced requests only).
func (t *Trace) item(r *traceReq, engineID int, st *engine.Step, it *engine.Scheduled, ns int64) {
	q := it.Req
	if r.open == "queued" || r.open == "queued (preempted)" {
		r.close(st.ScheduledNs)
	}
	e := &t.engines[engineID]
	if !it.Decode {
		r.phases = append(r.phases, span{"prefill", e.stepStart, ns,
			fmt.Sprintf(`"tokens":%d,"computed_before":%d,"engine":%d`, it.NumNew, it.Computed, engineID)})
	}
	if !it.Samples || (q.Status != engine.Running && q.Status != engine.Finished) {
		return
	}
	switch {
	case q.Status == engine.Finished && e.pool == "prefill":
		r.close(ns)
		r.openPhase("KV transfer", ns)
	case q.Status == engine.Finished:
		r.close(ns)
		r.openPhase("streamed", ns)
	case r.open == "":
		r.openPhase("decode", ns)
	}
	t.flush()
}

func (r *traceReq) close(ns int64) {
	if r.open != "" {
		r.phases = append(r.phases, span{name: r.open, start: r.openAt, end: max(ns, r.openAt)})
		r.open = ""
	}
}

func (r *traceReq) openPhase(name string, ns int64) { r.open, r.openAt = name, ns }

// queued returns the request's trace state, nil when it is not traced.
func (t *Trace) queued(engineID int, rec *sim.RequestRecord, ns int64) *traceReq {
	id := int(rec.ID)
	if !t.sampled(id) {
		return nil
	}
	r := t.reqs[id]
	if r == nil {
		r = &traceReq{send: rec.SendNs}
		t.reqs[id] = r
		r.openPhase("queued", rec.SendNs)
	} else {
		r.close(ns)
		r.openPhase("queued", ns)
	}
	r.queuedOn++
	return r
}

func (t *Trace) preempted(_ int, id int, ns int64) {
	if r := t.reqs[id]; r != nil {
		r.close(ns)
		r.openPhase("queued (preempted)", ns)
	}
}

func (t *Trace) aborted(_ int, id int, ns int64) {
	if r := t.reqs[id]; r != nil {
		r.close(ns)
	}
}

// closed queues a traced request's slices for writing after the step.
func (t *Trace) closed(rec *sim.RequestRecord, ns int64) {
	if t.sampled(int(rec.ID)) {
		t.pending = append(t.pending, pendingClose{*rec, ns})
	}
}

// flush writes the requests closed so far.
func (t *Trace) flush() {
	for i := range t.pending {
		t.write(&t.pending[i].rec)
	}
	t.pending = t.pending[:0]
}

// write writes a closed request's slices.
func (t *Trace) write(rec *sim.RequestRecord) {
	id := int(rec.ID)
	r := t.reqs[id]
	delete(t.reqs, id)
	if r == nil { // refused before any engine (max_model_len)
		r = &traceReq{send: rec.SendNs}
	}
	end := max(rec.FinishNs, rec.SendNs)
	r.close(end)
	t.traced++
	args := fmt.Sprintf(`"prompt_tokens":%d,"cached_tokens":%d,"output_tokens":%d,"preemptions":%d,"failed":%t,"engine":%d`,
		rec.PromptTokens, rec.CachedTokens, rec.OutputTokens, rec.Preemptions, rec.Failed, rec.Engine)
	if ttft := rec.TTFTNs(); ttft >= 0 {
		args += fmt.Sprintf(`,"ttft_ms":%.3f`, float64(ttft)/1e6)
	}
	args += fmt.Sprintf(`,"e2e_ms":%.3f`, float64(end-rec.SendNs)/1e6)
	name := fmt.Sprintf("request %d", rec.ID)
	t.async("b", name, id, rec.SendNs, args)
	for _, p := range r.phases {
		t.async("b", p.name, id, p.start, p.args)
		t.async("e", p.name, id, p.end, "")
	}
	t.async("e", name, id, end, "")
}

func (t *Trace) async(ph, name string, id int, ns int64, args string) {
	b := append(t.start(), `{"name":"`...)
	b = append(b, name...) // names are ours: no character needs escaping
	b = append(b, `","cat":"request","ph":"`...)
	b = append(b, ph...)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, int64(t.reqPid), 10)
	b = append(b, `,"tid":0,"id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = appendTs(append(b, `,"ts":`...), ns)
	if args != "" {
		b = append(append(append(b, `,"args":{`...), args...), '}')
	}
	t.end(append(b, '}'))
}

// finish closes the JSON document (a note in otherData says which
// requests were traced) and flushes.
func (t *Trace) finish(endNs int64) error {
	t.flush()
	if t.n == 0 {
		t.w.WriteString("{\"traceEvents\":[\n")
	}
	note := t.Note()
	if note == "" {
		note = "every request and step traced"
	}
	fmt.Fprintf(t.w, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"frontier (simulated vLLM %s metrics)\",\"note\":%q,\"end_us\":%s}}\n",
		VLLMVersion, note, ts(endNs))
	return t.w.Flush()
}
