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
// Memory stays O(tokens in flight): a request's chunk times live on its
// record while it runs (one append per streamed chunk in Sim.tokens) and
// go into the buckets when it completes, or are dropped when it fails.
// Bucketing needs min_start_time, known once a request has completed and
// every request sent before it has ended (sends come in time order, so a
// FIFO of the unresolved sends tells); until then completed requests'
// times wait in pending.
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
	if failed {
		p.recycle(r)
	} else if p.final {
		p.add(r)
	} else {
		if !p.hasCand || r.out.SendNs < p.cand {
			p.cand, p.hasCand = r.out.SendNs, true
		}
		p.pending = append(p.pending, r)
	}
	if p.final || !p.hasCand {
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

// add buckets a completed request's chunk times and recycles its slice.
func (p *peakTokens) add(r *record) {
	// A request's chunk times ascend: count each second's run at once,
	// working out the bucket only where a second ends.
	ch := r.chunks
	for i := 0; i < len(ch); {
		b := (ch[i] - p.origin) / 1e9
		end, k := p.origin+(b+1)*1e9, i+1
		for k < len(ch) && ch[k] < end && ch[k] >= ch[k-1] {
			k++
		}
		n := int32(k - i)
		i = k
		if b >= denseSeconds {
			if p.sparse == nil {
				p.sparse = map[int64]int32{}
			}
			p.sparse[b] += n
			continue
		}
		for int64(len(p.buckets)) <= b {
			p.buckets = append(p.buckets, 0)
		}
		p.buckets[b] += n
	}
	p.recycle(r)
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
