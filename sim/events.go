package sim

import "math"

// event is something that happens at a time; handle applies it and may
// schedule further events.
type event interface {
	handle(s *Sim)
}

type item struct {
	at  int64
	seq uint64
	ev  event
}

// queue is a binary min-heap of events ordered by (time, insertion
// order), with one event kept beside it (hot): a push that goes first
// takes the hot place, and a pop takes the hot event when it goes first.
// The event of an engine's next step end is pushed at the step's start,
// and is usually the next one popped, so most steps never reach the heap.
type queue struct {
	h   []item
	seq uint64
	hot item
	has bool // hot holds an event
}

func (q *queue) less(i, j int) bool { return before(&q.h[i], &q.h[j]) }

// before reports whether a goes before b: earlier, or as early and queued
// first.
func before(a, b *item) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// len is the number of queued events.
func (q *queue) len() int {
	if q.has {
		return len(q.h) + 1
	}
	return len(q.h)
}

func (q *queue) push(at int64, ev event) {
	q.seq += 2 // (even: pushAfter takes the odd ones between)
	q.insert(item{at, q.seq, ev})
}

// pushAfter queues ev at at, ns, as if it had been queued right after the
// event whose sequence number is mark (a value of q.seq read earlier): on
// a tie it goes after the events queued up to then and before every
// event queued since.
func (q *queue) pushAfter(at int64, ev event, mark uint64) {
	q.insert(item{at, mark + 1, ev})
}

func (q *queue) insert(it item) {
	if !q.has {
		q.hot, q.has = it, true
		return
	}
	if before(&it, &q.hot) {
		it, q.hot = q.hot, it
	}
	q.heapPush(it)
}

func (q *queue) heapPush(it item) {
	q.h = append(q.h, it)
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

// next is the time of the earliest event, or MaxInt64 when none is queued.
func (q *queue) next() int64 {
	t := int64(math.MaxInt64)
	if len(q.h) > 0 {
		t = q.h[0].at
	}
	if q.has {
		t = min(t, q.hot.at)
	}
	return t
}

// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (q *queue) pop() item {
	if q.has && (len(q.h) == 0 || before(&q.hot, &q.h[0])) {
		top := q.hot
		q.hot, q.has = item{}, false
		return top
	}
	return q.heapPop()
}

func (q *queue) heapPop() item {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h[n] = item{}
	q.h = q.h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

// The event kinds.
type (
	stageStart  struct{ stage int }
	clientSend  struct{ r *record }
	turnDue     struct{ at int64 } // the earliest closed-loop send (pending.go)
	engineAdmit struct{ r *record }
	stepEnd     struct{ c *Core }
	// timeout is a deadline the client keeps (client.deadlines): at at,
	// ns, it gives up on r if r still serves the request it served when
	// sent (gen). The entry carries its time: reading it from the
	// request's RequestRecord (Sim.out, sent TimeoutNs before) was an LL
	// miss a request. Not an event itself: see deadlineDue.
	timeout struct {
		r   *record
		at  int64
		gen uint32
	}
	// deadlineDue: the client's earliest deadline (deadlines[deadHead])
	// is due. Only that one is ever queued, so the event carries nothing:
	// an empty struct goes into the event interface without an
	// allocation, where a timeout (three words) cost one per request
	// (runtime.convT: 2.65 M of BenchmarkSimulateCodegen's 310 M
	// instructions).
	deadlineDue struct{}
	kick        struct{ c *Core }
)

func (e stageStart) handle(s *Sim)  { s.client.startStage(s, e.stage) }
func (e clientSend) handle(s *Sim)  { s.client.arrive(s, e.r) }
func (e turnDue) handle(s *Sim)     { s.client.turns.due(s, e.at) }
func (e engineAdmit) handle(s *Sim) { s.admit(e.r) }
func (e stepEnd) handle(s *Sim)     { e.c.endStep(s) }
func (deadlineDue) handle(s *Sim) {
	d := s.client.deadlines[s.client.deadHead]
	s.client.expired(s)
	s.expire(d.r, d.gen)
}
func (e kick) handle(s *Sim) { e.c.kick(s) }
