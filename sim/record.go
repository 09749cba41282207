package sim

import (
	"unsafe"

	"frontier/internal/prefetch"
	"frontier/sim/engine"
	"frontier/sim/workload"
)

// RequestRecord is what the client saw of one request. Times are ns from
// the start of the run, -1 when the event never happened. Counts and
// indices are int32: the scenario's bounds (scenarios.MaxRequests requests,
// scenarios.MaxTokens tokens per length) and a trace's (10,000,000 tokens)
// keep them far below 2³¹, and a million requests' records take 104 MB,
// not 152.
type RequestRecord struct {
	ID    int32
	Stage int32
	// Session and Turn copy the planned request's (workload.Request):
	// sessions numbered from 1, turns from 1; both 0 outside sessions.
	Session      int32
	Turn         int32
	SendNs       int64 // client sent it (bench serve's start of latency)
	FirstTokenNs int64 // client received the first token
	FinishNs     int64 // client received the last token, or gave up
	// ITLSumNs is the sum of inter-token gaps (FinishNs − FirstTokenNs
	// for completed requests).
	ITLSumNs int64
	// TransferDoneNs is when a disaggregated request's KV arrived at its
	// decode instance (-1 co-located); PrefillEngine is the prefill core.
	TransferDoneNs int64
	// Priority is the request's priority (scenarios.MaxPriority bounds
	// it beyond int32) and Class its index in Result.Classes (0 when the
	// workload has no classes).
	Priority      int64
	Engine        int32
	PrefillEngine int32
	PromptTokens  int32
	CachedTokens  int32 // prefix-cache hit at admission
	OutputTokens  int32 // tokens received
	Preemptions   int32
	Class         int32
	// Replica is the replica the router sent it to (0 with one).
	Replica int32
	Failed  bool // client timeout expired first (request aborted), or rejected
	// Rejected: prompt + output tokens exceed max_model_len; the API server
	// refused it (HTTP 400) and it never reached an engine.
	Rejected bool
}

// TTFTNs is time to first token, ns (-1 if none).
func (r *RequestRecord) TTFTNs() int64 {
	if r.FirstTokenNs < 0 {
		return -1
	}
	return r.FirstTokenNs - r.SendNs
}

// E2ENs is end-to-end latency, ns.
func (r *RequestRecord) E2ENs() int64 { return r.FinishNs - r.SendNs }

// TPOTNs is (E2E − TTFT) / (output tokens − 1), ns; 0 for one token.
func (r *RequestRecord) TPOTNs() float64 {
	if r.OutputTokens < 2 {
		return 0
	}
	return float64(r.FinishNs-r.FirstTokenNs) / float64(r.OutputTokens-1)
}

// record is a request in flight: the plan entry, its engine state and
// a pointer to what the client has seen (its entry of the run's
// RequestRecords, from its send on: nil before). Once a request completes, its record (with the engine
// request's block and hash buffers) serves the next request to be sent:
// memory stays O(requests in flight). gen counts those reuses, so that an
// event queued for an earlier request (a client timeout) can tell.
type record struct {
	recordHead
	req engine.Request
	recordTail
}

// recordHead and recordTail are a record's fields around its engine
// request, in two parts so that newRecord resets them without copying
// the engine request (with its buffers) out and back in: rewriting the
// whole record was 243 instructions of newRecord's ~525 a request
// (BenchmarkSimulateCodegen).
type recordHead struct {
	// Per-token fields first, then out (which token also updates) and
	// the engine request, so one token touches few cache lines.
	done    bool
	phase   phase
	api     *apiServer // the API server streaming its tokens
	chunkAt int64      // when its latest SSE chunk leaves the API server, ns
	lastTok int64
	// The streamed chunks while in flight (peakTokens): their arrival
	// times, ns, or their counts per second: runs, then runN in the
	// second ending at runEnd, ns.
	chunks []int64
	runs   []chunkRun
	runEnd int64
	runN   int64
	// coFrom is the first decode-cohort cycle whose token is not yet in
	// its counts (cohort.go), 0 when not streaming as a member; merges
	// counts those tokens that merged into a queued chunk.
	coFrom, merges int
	out            *RequestRecord
	gen            uint32
}

// recordTail is the record's fields after its engine request.
type recordTail struct {
	// plan is the planned request, in the plan (held whole for the run
	// and never changed during it): a pointer, not a copy of its 120
	// bytes at every send.
	plan    *workload.Request
	core    *Core
	replica int  // the replica the router picked
	routed  bool // counted in the router's view until it ends
}

// phase is where a disaggregated request is.
type phase uint8

const (
	phaseColocated phase = iota
	phasePrefill
	phaseDecode
)

// StepRecord is one engine step. Times are ns.
type StepRecord struct {
	Engine        int
	DPRank        int
	PPStage       int    // pipeline stage of this record, -1 without PP
	Pool          string // "" co-located | prefill | decode
	Dummy         bool   // a DP dummy pass (this rank had no work)
	StartNs       int64
	DurationNs    int64
	PrefillTokens int
	DecodeTokens  int
	PaddedTokens  int
	Graph         bool
	Running       int
	Waiting       int
	KVBlocksUsed  int
	Preempted     int
	DeviceNs      int64
	HostNs        int64
	// ScheduledNs is when the engine core scheduled the step (with async
	// scheduling, during the previous step). PrefixQueries and PrefixHits
	// are the prefix-cache lookups of that schedule call, tokens
	// (engine.Step).
	ScheduledNs   int64
	PrefixQueries int
	PrefixHits    int
}

// unsent is the RequestRecord of a request before it is sent but for the
// plan's fields (setOut): every time -1 (nothing happened yet).
var unsent = RequestRecord{FirstTokenNs: -1, FinishNs: -1, SendNs: -1, TransferDoneNs: -1}

// setOut makes *o the RequestRecord of planned request p of stage k
// before it is sent: unsent with the plan's fields. Written field by
// field over a copy of unsent, not as a composite value: the compiler
// built that in a stack temporary with 4-byte stores and copied it out
// with 16-byte loads, which cannot forward from them (perf,
// BenchmarkSimulateCodegen: a third of newOut's 0.7 % of the run
// stalled on the first such load).
func setOut(o *RequestRecord, p *workload.Request, k int) {
	*o = unsent
	o.ID, o.Stage, o.Session, o.Turn = p.ID, int32(k), p.Session(), p.Turn()
	o.PromptTokens, o.Priority, o.Class = p.PromptTokens, int64(p.Priority), int32(p.Class)
}

// newOut writes the entry of p, a request of stage stage, in the run's
// records (Sim.out) as it is before the request is sent and returns it: the client sends the request next
// (client.send). Written then, not for every request when the run
// starts, its cache lines are fetched once, where filling all of them
// up front (936 KB for the 9,000-request codegen run) fetched every line
// twice and read the whole plan once more (cachegrind, 1 MiB LL:
// ~25,000 of ~81,000 LL misses a run).
func (s *Sim) newOut(p *workload.Request, stage int) *RequestRecord {
	o := &s.out[p.ID]
	setOut(o, p, stage)
	s.outMade.set(int(p.ID))
	return o
}

// prefetchOut asks the CPU to fetch the lines of request id's entry in
// the run's records (Sim.out), which newOut writes when the client sends
// it: at least one interarrival time later, when the arrival is queued
// (client.pushNextArrival). A hint only: nothing changes. perf,
// BenchmarkSimulateCodegen: newOut's first store into the entry held a
// quarter of its 0.7 % of the run.
func (s *Sim) prefetchOut(id int32) {
	if uint(id) < uint(len(s.out)) {
		prefetch.Span(unsafe.Pointer(&s.out[id]), unsafe.Sizeof(RequestRecord{}))
	}
}

// fillUnsent writes the entries of the requests the client never planned
// to send (a run stopped early, or a stage that never started because an
// earlier one never finished).
//
//go:noinline
func (s *Sim) fillUnsent() {
	for k, st := range s.client.plan.Stages {
		for i := range st.Requests {
			if p := &st.Requests[i]; !s.outMade.has(int(p.ID)) {
				setOut(&s.out[p.ID], p, k)
			}
		}
	}
}

// bitset is a set of small non-negative integers (request IDs) and its
// size.
type bitset struct {
	words []uint64
	n     int
}

func newBitset(n int) bitset { return bitset{words: make([]uint64, (n+63)/64)} }

// set adds i.
func (b *bitset) set(i int) {
	w, m := &b.words[i>>6], uint64(1)<<(i&63)
	if *w&m == 0 {
		*w |= m
		b.n++
	}
}

func (b *bitset) has(i int) bool { return b.words[i>>6]&(1<<(i&63)) != 0 }
