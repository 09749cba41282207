package sim

// Events inside the k-step advance (cohortrun.go). A queued event ends
// the advance before the step it falls in ends, but two kinds leave the
// cohort's cycles alone, so the advance handles them where Sim.Run
// would, between the steps' ends, and goes on:
//
//   - a client deadline that finds its request completed (at the 300 s
//     default timeout, every deadline of a serving run): it only queues
//     the next deadline (deadlineDue.handle: client.expired; Sim.expire
//     returns at once);
//   - a client send (clientSend: the request reaches the API server,
//     which takes it in, and the engine gets it later, an engineAdmit
//     event): it touches the API server's free time, which the
//     advance's streaming then reads. Not when the replicas' router
//     reads live metrics (replicas.metrics_interval_ms 0): its scrape
//     reads every core's KV blocks in use, which the bulk advance
//     allocates only at its end (Scheduler.AdvanceCohort);
//   - an engine's admission (engineAdmit: the request joins an engine's
//     waiting queue). When it is this core's and the next schedule would
//     admit it (Scheduler.CohortWhole no longer holds), the advance ends
//     the step it falls in and stops there (Core.admitted), the next
//     schedule a full one.
//
// Order on a tie. Sim.Run pops events in (time, queue order). Stepping
// one by one, a step's end is queued when the step starts, so an event
// at the same instant as the step's end goes first when it was queued
// before the step started, after it when queued during the step (by an
// event handled inside it). The advance queues no step ends; pastEvents
// tells its caller which of the two the earliest event is.

// pastEvents handles the events queued before end, ns (the end of the
// step begun at start that the advance would take next; horizon ≤ end is
// the earliest queued event or replica scrape) that the advance may handle, as Sim.Run would,
// and returns the horizon after them, and whether the step ends first:
// before every queued event and the next scrape, or at the same instant
// as the earliest event, which an event handled here queued. It stops at
// any other event, a deadline that expires a request, and a replica
// scrape. When it handled one, it marks the step (Core.endMark): should
// the step end on the general path, launch queues its end before the
// events queued during the step, as stepping one by one would have. The
// caller's API server state must be as the events find it (its free time
// written back), and it reads it again after.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Sim) pastEvents(c *Core, start, end, horizon int64) (int64, bool) {
	mark := s.queue.seq // events queued after this were queued during the step
	for horizon < end && horizon < s.scrapeAt && !c.admitted {
		it, ok := s.queue.peek()
		if !ok || it.at != horizon {
			break
		}
		switch ev := it.ev.(type) {
		case deadlineDue:
			cl := &s.client
			if d := cl.deadlines[cl.deadHead]; !d.r.done && d.r.gen == d.gen {
				return horizon, false // it expires its request
			}
			s.queue.pop()
			cl.expired(s)
			s.kSeams.deadlines++
		case clientSend, engineAdmit:
			if _, send := ev.(clientSend); send && s.replicas.live() {
				return horizon, false // its route reads the cores' KV blocks
			}
			s.queue.pop()
			if len(s.retired) > 0 {
				s.reuseOut() // (as Sim.Run after the event before)
			}
			s.now = it.at
			ev.handle(s)
			if a, ok := ev.(engineAdmit); !ok {
				s.kSeams.sends++
			} else if s.kSeams.admits++; a.r.core == c && !c.Sched.CohortWhole() {
				// The schedule after this step's end admits it: the
				// advance ends this step and stops.
				c.admitted = true
			}
		default:
			return horizon, false
		}
		c.marked, c.endMark, c.markStart, c.markEnd = true, mark, start, end
		horizon = min(s.queue.next(), s.scrapeAt, MaxClockNs+1)
	}
	if end < horizon {
		return horizon, true
	}
	if end > horizon || horizon >= s.scrapeAt {
		return horizon, false
	}
	it, ok := s.queue.peek()
	return horizon, ok && it.at == end && it.seq > mark
}

// reuseOut is reuse out of line, for the k-step advance's callers, where
// records rarely wait for it (issue 10: its inline copies took their
// instruction-cache lines).
//
//go:noinline
func (s *Sim) reuseOut() { s.reuse() }

// peek returns the earliest queued event, false when none is.
func (q *queue) peek() (item, bool) {
	if q.has && (len(q.h) == 0 || before(&q.hot, &q.h[0])) {
		return q.hot, true
	}
	if len(q.h) == 0 {
		return item{}, false
	}
	return q.h[0], true
}
