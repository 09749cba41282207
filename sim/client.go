package sim

import (
	"unsafe"

	"frontier/internal/prefetch"
	"frontier/sim/workload"
)

// ClientConfig is how the client sends: concurrency cap and timeout.
type ClientConfig struct {
	MaxConcurrency int   // 0 = unlimited
	TimeoutNs      int64 // 0 = none
	// Together sends the requests planned for one instant in one event, so
	// that all of them reach the engine before it schedules (vLLM's LLM
	// class adds every prompt of a generate call, then steps). Without it
	// they are sent one event after another, and with no API-server time
	// the engine may start on the first ones.
	Together bool
}

// client sends the plan: stage by stage (each stage's requests at their
// offsets from the stage start; the next stage starts IntervalNs after the
// last request of this one finished or failed), holding requests while
// MaxConcurrency are in flight, and giving up on a request TimeoutNs after
// sending it.
type client struct {
	cfg         ClientConfig
	plan        *workload.Plan
	stage       int
	stageStart  int64
	nextSend    int // index of the stage's next request to send
	outstanding int
	inflight    int
	blocked     []*record
	n           int
	// deadlines holds sent requests in send order; with one timeout for
	// all, that is deadline order, so only the earliest sits in the event
	// queue (the queue stays a few events deep). It is a ring: deadN
	// entries from deadlines[deadHead] on, wrapping at its end.
	deadlines []timeout
	deadHead  int
	deadN     int
	// turns holds the closed-loop requests until their send time.
	turns pending
}

func (c *client) total() int {
	if c.n == 0 {
		c.n = c.plan.NumRequests()
	}
	return c.n
}

func (c *client) startStage(s *Sim, k int) {
	c.stage, c.stageStart, c.nextSend = k, s.now, 0
	if s.obs != nil {
		s.obs.StageStarted(k, s.now)
	}
	st := &c.plan.Stages[k]
	c.outstanding = len(st.Requests)
	if c.outstanding == 0 {
		c.next(s)
		return
	}
	c.pushNextArrival(s)
}

// pushNextArrival queues the stage's next open-loop request (requests are
// in arrival order; one arrival at a time sits in the event queue).
// Closed-loop requests are skipped: their predecessor sends them.
func (c *client) pushNextArrival(s *Sim) {
	st := &c.plan.Stages[c.stage]
	for c.nextSend < len(st.Requests) && st.Requests[c.nextSend].ClosedLoop {
		c.nextSend++
	}
	if c.nextSend < len(st.Requests) {
		p := &st.Requests[c.nextSend]
		c.nextSend++
		if c.nextSend < len(st.Requests) {
			// The next call reads the request after p when p arrives, a
			// few hundred engine steps on, by when its line would have
			// left the caches (perf: 85 % of this function's 3 % of
			// BenchmarkSimulateCodegen stalled on that load; 0.8 % in
			// all with the hint).
			prefetch.Line(unsafe.Pointer(&st.Requests[c.nextSend]))
		}
		s.prefetchOut(p.ID)
		s.queue.push(c.stageStart+p.At, clientSend{s.newRecord(p)})
	}
}

func (c *client) arrive(s *Sim, r *record) {
	if c.cfg.Together {
		st := &c.plan.Stages[c.stage]
		for c.nextSend < len(st.Requests) && !st.Requests[c.nextSend].ClosedLoop && st.Requests[c.nextSend].At == r.plan.At {
			c.admit(s, r)
			r = s.newRecord(&st.Requests[c.nextSend])
			c.nextSend++
		}
	}
	c.pushNextArrival(s)
	c.admit(s, r)
}

// admit sends r now, or holds it while MaxConcurrency requests are in
// flight.
func (c *client) admit(s *Sim, r *record) {
	if c.cfg.MaxConcurrency > 0 && c.inflight >= c.cfg.MaxConcurrency {
		c.blocked = append(c.blocked, r)
		return
	}
	c.send(s, r)
}

func (c *client) send(s *Sim, r *record) {
	c.inflight++
	r.out = s.newOut(r.plan, c.stage) // (a stage's requests are sent while it runs)
	r.out.SendNs = s.now
	s.peak.send(r)
	if n := int(r.plan.PromptTokens) + int(r.plan.OutputTokens); s.maxModelLen > 0 && n > s.maxModelLen {
		// vLLM's API server answers 400 ("This model's maximum context
		// length is …"); bench serve counts the request as failed.
		r.out.Rejected = true
		s.longestRejected = max(s.longestRejected, n)
		s.finish(r, true)
		return
	}
	// vLLM starts one API server per DP rank by default (api_server_count
	// = data_parallel_size, vllm/entrypoints/cli/serve.py); a request's
	// tokens stream back through the server that took it in.
	r.api = s.apiFor(r)
	in := r.api.serve(s.now, s.host.APIInServiceNs(int(r.plan.PromptTokens)))
	s.queue.push(in+int64(s.host.RequestOverheadNs), engineAdmit{r})
	if c.cfg.TimeoutNs > 0 {
		if c.deadN == len(c.deadlines) {
			c.growDeadlines()
		}
		c.putDeadline(timeout{r: r, at: s.now + c.cfg.TimeoutNs, gen: r.gen})
		if c.deadN == 1 {
			s.queue.push(s.now+c.cfg.TimeoutNs, deadlineDue{})
		}
	}
}

// putDeadline appends d to the deadlines ring, which has room
// (growDeadlines when full).
func (c *client) putDeadline(d timeout) {
	i := c.deadHead + c.deadN
	if i >= len(c.deadlines) {
		i -= len(c.deadlines)
	}
	c.deadlines[i] = d
	c.deadN++
}

// growDeadlines makes room in the full deadlines ring: twice its size, or
// at first room for 4,096 requests (the plan's, if fewer). A run of the
// default 300 s timeout keeps every request it sent in the last 300 s:
// 4,096 up to 13.6 requests/s (the codegen run, 10/s at most: ~3,000); a
// faster run doubles the ring, copying it once a doubling. Sized for the
// whole plan at first (up to 2^16 entries), the codegen run's 24-byte
// entries took 216 KB of fresh pages where 96 KB serve; grown from 16 by
// appending and dropping the head, it allocated 500 KB a run. Not
// inlined: the rare call stays out of send.
//
//go:noinline
func (c *client) growDeadlines() {
	ring := make([]timeout, max(2*len(c.deadlines), min(c.total(), 1<<12), 16))
	k := copy(ring, c.deadlines[c.deadHead:])
	copy(ring[k:], c.deadlines[:c.deadHead])
	c.deadlines, c.deadHead = ring, 0
}

// expired pops the earliest deadline and queues the next one. A
// deadline's request was sent TimeoutNs before it (its record may serve
// another request by then: the timeout then finds it completed).
func (c *client) expired(s *Sim) {
	c.deadlines[c.deadHead] = timeout{}
	c.deadHead++
	if c.deadHead == len(c.deadlines) {
		c.deadHead = 0
	}
	c.deadN--
	if c.deadN > 0 {
		// The deadlines are read in ring order, each long after it was
		// written (a request's send, TimeoutNs before): the one three
		// ahead is fetched now, the lines of those before it already
		// were (a deadline is 24 bytes). perf, BenchmarkSimulateCodegen:
		// 70 % of expired's samples stalled on the next deadline's load.
		if j := c.deadHead + 3; j < len(c.deadlines) {
			prefetch.Line(unsafe.Pointer(&c.deadlines[j]))
		}
		s.queue.push(c.deadlines[c.deadHead].at, deadlineDue{})
	}
}

// done is r's end (completed or failed): its closed-loop successor, if
// any, is sent ThinkNs after r's last token arrived (or r failed): the
// user reads the reply and types, or the agent's tool runs. A failed turn
// still ends its turn; the conversation goes on.
func (c *client) done(s *Sim, r *record) {
	if n := r.plan.Next; n > 0 {
		p := &c.plan.Stages[c.stage].Requests[n] // (r's: the stage ends when its requests have)
		next := s.newRecord(p)
		next.req.InheritHashes(&r.req, int(r.plan.ReusedTokens()))
		c.turns.add(s, r.out.FinishNs+p.ThinkNs(), next)
	}
	c.inflight--
	if len(c.blocked) > 0 {
		r := c.blocked[0]
		c.blocked = c.blocked[1:]
		c.send(s, r)
	}
	c.outstanding--
	if c.outstanding == 0 {
		c.next(s)
	}
}

func (c *client) next(s *Sim) {
	if c.stage+1 < len(c.plan.Stages) {
		s.queue.push(s.now+c.plan.Stages[c.stage].IntervalNs, stageStart{c.stage + 1})
	}
}
