package engine

// deque is FCFS's waiting queue (vLLM's FCFSRequestQueue, a
// collections.deque): new requests at the back, preempted requests at the
// front. A ring buffer keeps both ends O(1).
type deque struct {
	buf  []*Request
	head int
	n    int
}

// Len implements Queue.
func (d *deque) Len() int { return d.n }

func (d *deque) grow() {
	nb := make([]*Request, max(16, 2*len(d.buf)))
	for i := 0; i < d.n; i++ {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

// Push implements Queue: a new request at the back.
func (d *deque) Push(r *Request) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.n)%len(d.buf)] = r
	d.n++
}

// Prepend implements Queue: a preempted request at the front.
func (d *deque) Prepend(r *Request) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = r
	d.n++
}

// Peek implements Queue.
func (d *deque) Peek() *Request { return d.buf[d.head] }

// Pop implements Queue.
func (d *deque) Pop() *Request {
	r := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	return r
}

// Remove implements Queue: deletes r wherever it is, keeping the order of
// the others, by shifting the shorter side of the ring into the hole: a
// request near the front (the longest waiting, which a client timeout
// aborts first) costs O(its position), not O(queue length).
func (d *deque) Remove(r *Request) {
	at := func(i int) *(*Request) { return &d.buf[(d.head+i)%len(d.buf)] }
	for i := 0; i < d.n; i++ {
		if *at(i) != r {
			continue
		}
		if i < d.n/2 {
			for j := i; j > 0; j-- {
				*at(j) = *at(j - 1)
			}
			*at(0) = nil
			d.head = (d.head + 1) % len(d.buf)
		} else {
			for j := i; j < d.n-1; j++ {
				*at(j) = *at(j + 1)
			}
			*at(d.n - 1) = nil
		}
		d.n--
		return
	}
}
