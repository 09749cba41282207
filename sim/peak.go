package sim

// peakTokens computes bench serve's "Peak output token throughput
// (tok/s)", max_output_tokens_per_s, as vllm/benchmarks/serve.py
// (calculate_metrics) does: over the successful requests only, every
// streamed chunk's arrival time (start + TTFT, then + each ITL) falls in
// the one-second bucket int(t − min_start_time), where min_start_time is
// the earliest start among successful requests; the peak is the fullest
// bucket. A chunk counts once whatever tokens it carries (bench serve
// counts chunk times), so merged SSE chunks lower the peak as they do in
// bench serve.
//
// Memory stays O(requests in flight): a request's chunks live on its
// record while it runs and go into the buckets when it completes, or are
// dropped when it fails. Bucketing needs min_start_time, known once a
// request has completed and every request sent before it has ended
// (sends come in time order, so a FIFO of the unresolved sends tells);
// until then a request keeps each chunk's time (chunks) and completed
// requests wait in pending. A request whose first token comes once
// min_start_time is known keeps its chunks counted per second instead
// (runs: one entry per second it streamed in).
type peakTokens struct {
	origin  int64     // min_start_time, ns; valid when final
	final   bool      // origin is known
	cand    int64     // earliest start among completed requests so far
	hasCand bool      // a request has completed
	sent    []*record // sends in time order not yet known to be resolved, until final
	head    int
	pending []*record       // completed before final: times kept until origin is known
	buckets []int32         // chunks per second since origin, the first denseSeconds
	sparse  map[int64]int32 // later seconds (runs beyond 48 simulated days)
	free    [][]int64       // spare time slices, reused by the next requests
	freeRun [][]chunkRun    // spare run slices
}

// chunkRun counts a request's chunks in one second since origin.
type chunkRun struct {
	sec int64
	n   int64
}

// start readies r's chunk list at its first token: per-second runs once
// origin is known, else times.
func (p *peakTokens) start(r *record) {
	if !p.final {
		r.chunks = p.slice()
		return
	}
	if n := len(p.freeRun); n > 0 {
		r.runs = p.freeRun[n-1][:0]
		p.freeRun = p.freeRun[:n-1]
	} else {
		r.runs = make([]chunkRun, 0, 8)
	}
	r.runEnd, r.runN = -1<<63, 0 // no run yet
}

// chunk notes one streamed chunk of r arriving at at, ns.
func (p *peakTokens) chunk(r *record, at int64) {
	if uint64(r.runEnd-1-at) < 1e9 { // in r's current second (runs only)
		r.runN++
	} else {
		p.chunkSlow(r, at)
	}
}

//go:noinline
func (p *peakTokens) chunkSlow(r *record, at int64) {
	if r.runs == nil {
		r.chunks = append(r.chunks, at)
	} else {
		p.newRun(r, at)
	}
}

// newRun starts r's run for the second holding at (a completed request's
// chunks all come after origin), closing the current one.
func (p *peakTokens) newRun(r *record, at int64) {
	if r.runN > 0 {
		r.runs = append(r.runs, chunkRun{sec: (r.runEnd-p.origin)/1e9 - 1, n: r.runN})
	}
	b := (at - p.origin) / 1e9
	r.runEnd, r.runN = p.origin+(b+1)*1e9, 1
}

// send notes a request sent at its SendNs.
func (p *peakTokens) send(r *record) {
	if !p.final {
		p.sent = append(p.sent, r)
	}
}

// slice hands out an empty slice for a request's chunk times.
func (p *peakTokens) slice() []int64 {
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return s[:0]
	}
	return make([]int64, 0, 16)
}

// end takes a finished request: a completed one's chunk times count (now,
// or once origin is known); a failed one's do not.
func (p *peakTokens) end(r *record, failed bool) {
	if !p.final {
		p.endEarly(r, failed)
	} else if failed {
		p.recycle(r)
	} else {
		p.add(r)
	}
}

// endEarly is end before origin is known: a completed request waits in
// pending, and origin is fixed once no earlier send can still complete.
// (Out of line: once origin is known, nearly every end, it is not run.)
//
//go:noinline
func (p *peakTokens) endEarly(r *record, failed bool) {
	if failed {
		p.recycle(r)
	} else {
		if !p.hasCand || r.out.SendNs < p.cand {
			p.cand, p.hasCand = r.out.SendNs, true
		}
		p.pending = append(p.pending, r)
	}
	if !p.hasCand {
		return
	}
	for p.head < len(p.sent) && p.sent[p.head].done {
		p.sent[p.head] = nil
		p.head++
	}
	if p.head < len(p.sent) && p.sent[p.head].out.SendNs < p.cand {
		return // an earlier send may still complete
	}
	p.settle()
}

// settle fixes origin at the earliest completed start and buckets the
// pending requests.
func (p *peakTokens) settle() {
	p.origin, p.final = p.cand, true
	for _, r := range p.pending {
		p.add(r)
	}
	p.pending, p.sent = nil, nil
}

// add buckets a completed request's chunks and recycles its slice.
func (p *peakTokens) add(r *record) {
	for _, run := range r.runs {
		p.bucket(run.sec, int32(run.n))
	}
	if r.runN > 0 {
		p.bucket((r.runEnd-p.origin)/1e9-1, int32(r.runN))
	}
	if len(r.chunks) > 0 {
		p.addTimes(r.chunks)
	}
	p.recycle(r)
}

// addTimes buckets a request's chunk times, kept when its first token
// came before origin was known (few requests: out of line).
//
//go:noinline
func (p *peakTokens) addTimes(ch []int64) {
	// A request's chunk times ascend: count each second's run at once,
	// working out the bucket only where a second ends.
	for i := 0; i < len(ch); {
		b := (ch[i] - p.origin) / 1e9
		end, k := p.origin+(b+1)*1e9, i+1
		for k < len(ch) && ch[k] < end && ch[k] >= ch[k-1] {
			k++
		}
		p.bucket(b, int32(k-i))
		i = k
	}
}

// bucket counts n chunks in second b since origin: in place when the
// bucket exists (nearly always), else by bucketNew.
func (p *peakTokens) bucket(b int64, n int32) {
	if uint64(b) < uint64(len(p.buckets)) {
		p.buckets[b] += n
		return
	}
	p.bucketNew(b, n)
}

// bucketNew is bucket for a second past the buckets so far: the slice
// grows to it, or a second from denseSeconds on goes in the map.
//
//go:noinline
func (p *peakTokens) bucketNew(b int64, n int32) {
	if b >= denseSeconds {
		if p.sparse == nil {
			p.sparse = map[int64]int32{}
		}
		p.sparse[b] += n
		return
	}
	for int64(len(p.buckets)) <= b {
		p.buckets = append(p.buckets, 0)
	}
	p.buckets[b] += n
}

// denseSeconds bounds the bucket slice (16 MiB); a run whose clock goes
// further keeps its later seconds in a map, so memory follows the seconds
// that hold chunks, not the clock.
const denseSeconds = 1 << 22

func (p *peakTokens) recycle(r *record) {
	if r.chunks != nil {
		p.free = append(p.free, r.chunks)
		r.chunks = nil
	}
	if r.runs != nil {
		p.freeRun = append(p.freeRun, r.runs)
		r.runs, r.runN, r.runEnd = nil, 0, 0
	}
}

// peak is max_output_tokens_per_s at the end of the run: 0 without a
// completed request.
func (p *peakTokens) peak() float64 {
	if !p.final && p.hasCand {
		p.settle()
	}
	best := int32(0)
	for _, n := range p.buckets {
		best = max(best, n)
	}
	for _, n := range p.sparse {
		best = max(best, n)
	}
	return float64(best)
}
