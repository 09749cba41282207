package router

// replicaHeap keeps replica indices in a binary min-heap by less, with
// each replica's position, so a change to one replica's key is fixed in
// O(log replicas) and the best replica is read in O(1).
type replicaHeap struct {
	h    []int // replica indices
	pos  []int // pos[replica] = its index in h
	less func(a, b int) bool
}

func newReplicaHeap(n int, less func(a, b int) bool) *replicaHeap {
	q := &replicaHeap{h: make([]int, n), pos: make([]int, n), less: less}
	for i := range q.h {
		q.h[i], q.pos[i] = i, i
	}
	for i := n/2 - 1; i >= 0; i-- {
		q.down(i)
	}
	return q
}

// top is the best replica.
func (q *replicaHeap) top() int { return q.h[0] }

// fix restores the order after replica rep's key changed.
func (q *replicaHeap) fix(rep int) {
	i := q.pos[rep]
	if !q.up(i) {
		q.down(i)
	}
}

// all restores the order after every key changed (a scrape).
func (q *replicaHeap) all() {
	for i := len(q.h)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

func (q *replicaHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.pos[q.h[i]], q.pos[q.h[j]] = i, j
}

func (q *replicaHeap) up(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(q.h[i], q.h[p]) {
			break
		}
		q.swap(i, p)
		i, moved = p, true
	}
	return moved
}

func (q *replicaHeap) down(i int) {
	n := len(q.h)
	for {
		l, m := 2*i+1, i
		if l < n && q.less(q.h[l], q.h[m]) {
			m = l
		}
		if r := l + 1; r < n && q.less(q.h[r], q.h[m]) {
			m = r
		}
		if m == i {
			return
		}
		q.swap(i, m)
		i = m
	}
}
