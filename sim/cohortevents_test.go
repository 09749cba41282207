package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPastEventsTie: the k-step advance handles an idle client deadline
// inside a step and tells whether the step, ending at 100 ns, ends first:
// before the next deadline that one queued at 100 ns (as stepping one by
// one queues the step's end at its start, before it), and after an event
// at 100 ns queued before the step started.
func TestPastEventsTie(t *testing.T) {
	build := func(live bool) *Sim {
		s := &Sim{scrapeAt: math.MaxInt64}
		s.client.cfg.TimeoutNs = 50
		s.client.deadlines = []timeout{{r: &record{recordHead: recordHead{done: true}}, at: 50},
			{r: &record{recordHead: recordHead{done: !live}}, at: 100}, {}}
		s.client.deadN = 2
		s.queue.push(50, deadlineDue{})
		return s
	}
	// The first deadline (50 ns) is idle: popped, it queues the second
	// at 100 ns, during the step: the step ends first, live or not.
	for _, live := range []bool{false, true} {
		s := build(live)
		h, first := s.pastEvents(&Core{}, 0, 100, s.queue.next())
		require.Equal(t, int64(100), h)
		require.True(t, first)
		require.Equal(t, 1, s.client.deadHead)
		require.Equal(t, int64(1), s.kSeams.deadlines)
	}
	// An event at 100 ns queued before the step: it goes first.
	s := build(false)
	s.queue.push(100, kick{})
	h, first := s.pastEvents(&Core{}, 0, 100, s.queue.next())
	require.Equal(t, int64(100), h)
	require.False(t, first)
	// Ending at 99 ns, the step ends before the second deadline; at
	// 101 ns, after it: handled too when idle, else it ends the advance.
	s = build(true)
	_, first = s.pastEvents(&Core{}, 0, 99, s.queue.next())
	require.True(t, first)
	s = build(true)
	h, first = s.pastEvents(&Core{}, 0, 101, s.queue.next())
	require.Equal(t, int64(100), h)
	require.False(t, first)
	require.Equal(t, 1, s.client.deadHead)
	s = build(false)
	h, first = s.pastEvents(&Core{}, 0, 101, s.queue.next())
	require.Equal(t, int64(MaxClockNs+1), h)
	require.True(t, first)
	require.Equal(t, 2, s.client.deadHead)
	// A deadline that expires its request is not handled.
	s = build(true)
	s.client.deadlines[0].r.done = false
	h, first = s.pastEvents(&Core{}, 0, 100, s.queue.next())
	require.Equal(t, int64(50), h)
	require.False(t, first)
	require.Equal(t, 0, s.client.deadHead)
}

// TestPastEventsMarkTheStep: an event handled inside the step marks it
// with the queue's sequence number before, and an end queued by
// pushAfter at that mark goes after the events queued up to then and
// before the ones queued during the step, on a tie (stepping one by one,
// the step's end was queued when the step began).
func TestPastEventsMarkTheStep(t *testing.T) {
	s := &Sim{scrapeAt: math.MaxInt64}
	s.client.cfg.TimeoutNs = 50
	s.client.deadlines = []timeout{{r: &record{recordHead: recordHead{done: true}}, at: 50},
		{r: &record{recordHead: recordHead{done: true}}, at: 100}}
	s.client.deadN = 2
	s.queue.push(100, kick{c: &Core{ID: 1}}) // at the step's end, queued before it began
	s.queue.push(50, deadlineDue{})
	mark := s.queue.seq
	c := &Core{}
	_, first := s.pastEvents(c, 10, 100, s.queue.next()) // pops the deadline at 50, queues the next at 100
	require.False(t, first, "the kick at 100 ns was queued before the step: it goes first")
	require.True(t, c.marked)
	require.Equal(t, mark, c.endMark)
	require.Equal(t, [2]int64{10, 100}, [2]int64{c.markStart, c.markEnd})
	s.queue.pushAfter(100, stepEnd{c}, c.endMark)
	var order []string
	for s.queue.len() > 0 {
		switch ev := s.queue.pop().ev.(type) {
		case kick:
			order = append(order, "kick (queued before the step)")
		case stepEnd:
			order = append(order, "step end")
		case deadlineDue:
			order = append(order, "deadline (queued during the step)")
		default:
			t.Fatalf("unexpected %T", ev)
		}
	}
	require.Equal(t, []string{"kick (queued before the step)", "step end", "deadline (queued during the step)"}, order)
	// A step inside which nothing was handled is not marked.
	c2 := &Core{}
	s2 := &Sim{scrapeAt: math.MaxInt64}
	s2.queue.push(200, kick{})
	s2.pastEvents(c2, 10, 100, s2.queue.next())
	require.False(t, c2.marked)
}
