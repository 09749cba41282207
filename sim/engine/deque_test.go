package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dequeOf(n int) (*deque, []*Request) {
	d := &deque{}
	rs := make([]*Request, n)
	for i := range rs {
		rs[i] = &Request{ID: i}
		d.Push(rs[i])
	}
	return d, rs
}

func (d *deque) ids() []int {
	var out []int
	for i := 0; i < d.n; i++ {
		out = append(out, d.buf[(d.head+i)%len(d.buf)].ID)
	}
	return out
}

// Removing a request keeps the others' order, wherever it is, and the
// ring wraps: requests 0–9 pushed into a ring of 16, two prepended (at
// slots 15 and 14), then removed at the front, in the middle and at the
// back.
func TestDequeRemoveKeepsOrder(t *testing.T) {
	d, rs := dequeOf(10)
	a, b := &Request{ID: 100}, &Request{ID: 101}
	d.Prepend(a)
	d.Prepend(b)
	assert.Equal(t, []int{101, 100, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, d.ids())
	d.Remove(rs[3])
	assert.Equal(t, []int{101, 100, 0, 1, 2, 4, 5, 6, 7, 8, 9}, d.ids())
	d.Remove(b)
	d.Remove(rs[8])
	assert.Equal(t, []int{100, 0, 1, 2, 4, 5, 6, 7, 9}, d.ids())
	d.Remove(rs[9])
	d.Remove(a)
	assert.Equal(t, []int{0, 1, 2, 4, 5, 6, 7}, d.ids())
	assert.Equal(t, 7, d.Len())
	for _, r := range []*Request{rs[0], rs[1], rs[2], rs[4], rs[5], rs[6], rs[7]} {
		assert.Same(t, r, d.Pop())
	}
	assert.Zero(t, d.Len())
	for _, p := range d.buf {
		assert.Nil(t, p, "no request stays referenced")
	}
}

// A client timeout aborts the longest-waiting requests, at the front of
// the waiting queue: removing one there moves the head, not the requests
// behind it. On main every removal shifted the whole queue, so a run
// whose waiting queue held 40,000 requests that timed out one by one took
// O(n²) (100,000 requests at 2,000 req/s with --timeout 20 on a small
// cache: 16.5 s, against 0.3 s under priority).
func TestDequeRemoveAtTheFrontMovesTheHead(t *testing.T) {
	d, rs := dequeOf(1000)
	slot := func(r *Request) int {
		for i, p := range d.buf {
			if p == r {
				return i
			}
		}
		return -1
	}
	before := slot(rs[999])
	d.Remove(rs[0])
	d.Remove(rs[2])
	assert.Equal(t, before, slot(rs[999]), "the requests behind stay where they are")
	assert.Equal(t, 998, d.Len())
	assert.Same(t, rs[1], d.Peek())
}

// BenchmarkWaitingQueueTimeouts is a waiting queue of 40,000 requests
// under client timeouts, per policy: each iteration a new request
// arrives and the longest-waiting one is aborted (Remove). Under priority
// the requests alternate between two priorities, so the aborted one sits
// deep in the heap half the time.
func BenchmarkWaitingQueueTimeouts(b *testing.B) {
	for _, name := range []string{"fcfs", "priority", "sjf"} {
		b.Run(name, func(b *testing.B) {
			p, _ := LookupPolicy(name)
			q := p.NewQueue()
			const n = 40_000
			rs := make([]*Request, 0, n+b.N)
			add := func() {
				i := len(rs)
				r := &Request{ID: i, Arrival: int64(i), Priority: i % 2, PromptTokens: 100 + i%7}
				rs = append(rs, r)
				q.Push(r)
			}
			for range n {
				add()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				add()
				q.Remove(rs[i])
			}
		})
	}
}

// An ordered queue (priority, sjf) under random pushes, pops and removes
// hands out requests in its order, as a sorted list does, and each
// waiting request knows its heap index (Remove is O(log n); on main it
// scanned the heap, O(n) per client timeout).
func TestOrderedQueueRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := Priority.NewQueue()
	heapOf := q.(orderedQueue).q
	var ref []*Request // in order
	for i := 0; i < 5000; i++ {
		switch op := rng.IntN(4); {
		case op < 2 || len(ref) == 0:
			r := &Request{ID: i, Arrival: int64(i), Priority: rng.IntN(5)}
			q.Push(r)
			at, _ := slices.BinarySearchFunc(ref, r, func(a, b *Request) int {
				if byPriority(a, b) {
					return -1
				}
				return 1
			})
			ref = slices.Insert(ref, at, r)
		case op == 2:
			assert.Same(t, ref[0], q.Pop())
			ref = ref[1:]
		default:
			k := rng.IntN(len(ref))
			q.Remove(ref[k])
			ref = slices.Delete(ref, k, k+1)
		}
		require.Equal(t, len(ref), q.Len())
		if len(ref) > 0 {
			require.Same(t, ref[0], q.Peek())
		}
	}
	for i, r := range heapOf.h {
		assert.Equal(t, int32(i), r.heapAt)
	}
}
