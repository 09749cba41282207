package sim

// pending holds the closed-loop requests waiting for their send time
// (users thinking, tools running), earliest first (then in the order they
// were added). Only the earliest has an event in the queue (turnDue), so
// the event queue stays a few events deep however many users think at
// once, and every step's event costs what it costs without sessions.
type pending struct {
	h       []pendingSend
	seq     uint64
	armedAt int64 // the time of the one live turnDue event; -1 = none
}

type pendingSend struct {
	at  int64
	seq uint64
	r   *record
}

func (p *pending) less(i, j int) bool {
	a, b := &p.h[i], &p.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// add holds r until at, arming a turnDue event when r is now the earliest.
func (p *pending) add(s *Sim, at int64, r *record) {
	p.seq++
	p.h = append(p.h, pendingSend{at, p.seq, r})
	for i := len(p.h) - 1; i > 0; {
		up := (i - 1) / 2
		if !p.less(i, up) {
			break
		}
		p.h[i], p.h[up] = p.h[up], p.h[i]
		i = up
	}
	if p.armedAt < 0 || at < p.armedAt {
		p.armedAt = at // an armed later event becomes stale: due ignores it
		s.queue.push(at, turnDue{at})
	}
}

// pop removes the earliest request.
func (p *pending) pop() *record {
	top := p.h[0].r
	n := len(p.h) - 1
	p.h[0] = p.h[n]
	p.h[n] = pendingSend{}
	p.h = p.h[:n]
	for i := 0; ; {
		l, rt, m := 2*i+1, 2*i+2, i
		if l < n && p.less(l, m) {
			m = l
		}
		if rt < n && p.less(rt, m) {
			m = rt
		}
		if m == i {
			break
		}
		p.h[i], p.h[m] = p.h[m], p.h[i]
		i = m
	}
	return top
}

// due is the turnDue event armed for time at: every request due by now is
// sent, in order, and the next earliest armed. A stale event (superseded
// by an earlier one) does nothing.
func (p *pending) due(s *Sim, at int64) {
	if at != p.armedAt {
		return
	}
	for len(p.h) > 0 && p.h[0].at <= s.now {
		s.client.admit(s, p.pop())
	}
	p.armedAt = -1
	if len(p.h) > 0 {
		p.armedAt = p.h[0].at
		s.queue.push(p.armedAt, turnDue{p.armedAt})
	}
}
