package engine

// deque is the waiting queue: FCFS at the back, preempted requests at the
// front. A ring buffer keeps both ends O(1).
type deque struct {
	buf  []*Request
	head int
	n    int
}

func (d *deque) len() int { return d.n }

func (d *deque) grow() {
	nb := make([]*Request, max(16, 2*len(d.buf)))
	for i := 0; i < d.n; i++ {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(r *Request) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.n)%len(d.buf)] = r
	d.n++
}

func (d *deque) pushFront(r *Request) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = r
	d.n++
}

func (d *deque) front() *Request { return d.buf[d.head] }

func (d *deque) popFront() *Request {
	r := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	return r
}

// remove deletes r wherever it is, keeping the order of the others.
func (d *deque) remove(r *Request) {
	for i := 0; i < d.n; i++ {
		if d.buf[(d.head+i)%len(d.buf)] == r {
			for j := i; j < d.n-1; j++ {
				d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j+1)%len(d.buf)]
			}
			d.buf[(d.head+d.n-1)%len(d.buf)] = nil
			d.n--
			return
		}
	}
}
