package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeadlinesRing: the client's deadlines ring keeps send order through
// wrapping and growing (the ring full while its head is past its start),
// and each expiry queues the next deadline at the time its entry carries.
func TestDeadlinesRing(t *testing.T) {
	const n, timeoutNs = 100, 1000
	s := &Sim{}
	s.client.cfg.TimeoutNs = timeoutNs
	s.client.n = 3 // a small plan: the ring starts at 16 entries
	recs := make([]record, n)
	next, popped := 0, 0
	add := func(k int) {
		for ; k > 0; k-- {
			recs[next].gen = uint32(next)
			if s.client.deadN == len(s.client.deadlines) { // (as send)
				s.client.growDeadlines()
			}
			s.client.putDeadline(timeout{r: &recs[next], at: int64(10*next + timeoutNs), gen: uint32(next)})
			next++
		}
	}
	pop := func(k int) {
		for ; k > 0; k-- {
			d := s.client.deadlines[s.client.deadHead]
			require.Equal(t, int64(10*popped+timeoutNs), d.at)
			require.Same(t, &recs[popped], d.r)
			require.Equal(t, uint32(popped), d.gen)
			s.client.expired(s)
			popped++
			if popped < next {
				it := s.queue.pop()
				require.Equal(t, int64(10*popped+timeoutNs), it.at)
			}
		}
	}
	add(10)
	require.Len(t, s.client.deadlines, 16)
	pop(8)  // head at 8
	add(14) // 16 in the ring, wrapped: entries 16..21 at the start
	require.Len(t, s.client.deadlines, 16)
	require.Equal(t, 8, s.client.deadHead)
	add(5) // full while wrapped: grows to 32, in order
	require.Len(t, s.client.deadlines, 32)
	pop(20)
	add(n - next) // 72 in flight: 64, then 128
	require.Len(t, s.client.deadlines, 128)
	pop(next - popped)
	require.Equal(t, 0, s.client.deadN)
	require.Equal(t, n, next)
}
