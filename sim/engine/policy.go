package engine

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
)

// Policy is an engine core's scheduling policy (vLLM's
// --scheduling-policy): the order in which waiting requests are admitted,
// and which running request is preempted when a running request cannot
// get its KV blocks. Everything else is the scheduler's and the same for
// every policy (vllm/v1/core/sched/scheduler.py, Scheduler.schedule):
// running requests are scheduled first, in admission order; a waiting
// request never preempts a running one; waiting requests are admitted only
// in a step that preempted nothing, and admission stops at the first one
// that does not fit.
//
// A Policy holds no state of its own (one value serves every engine core);
// the state lives in the Queue it makes. Each policy is one file
// (policy_fcfs.go, policy_priority.go, policy_sjf.go) registered by name
// in an init function; docs/POLICIES.md walks through adding one.
type Policy interface {
	// NewQueue returns an empty waiting queue ordered by the policy.
	NewQueue() Queue
	// Victim returns the index, in running (admission order, never
	// empty), of the request to preempt by recompute. It may be the
	// request being scheduled itself, which then waits for the next step.
	Victim(running []*Request) int
}

// Queue is the waiting queue of one engine core (vLLM's RequestQueue,
// vllm/v1/core/sched/request_queue.py). Methods other than Len are called
// only with requests in the queue, or, for Peek and Pop, a non-empty queue.
type Queue interface {
	Len() int
	// Peek returns the request the scheduler tries to admit next.
	Peek() *Request
	// Pop removes Peek's request (it was admitted).
	Pop() *Request
	// Push adds a request that just arrived (add_request).
	Push(r *Request)
	// Prepend adds a request just preempted (prepend_request).
	Prepend(r *Request)
	// Remove deletes a request wherever it is (the client aborted it).
	Remove(r *Request)
}

var policies = map[string]Policy{}

// RegisterPolicy makes a policy available by name (--scheduling-policy,
// deployment.scheduling_policy). It panics on an empty or taken name: two
// policies under one name is a programming error.
func RegisterPolicy(name string, p Policy) {
	if name == "" || policies[name] != nil {
		panic(fmt.Sprintf("engine: scheduling policy %q registered twice (or unnamed)", name))
	}
	policies[name] = p
}

// LookupPolicy returns the policy registered under name, or an error
// listing the names allowed.
func LookupPolicy(name string) (Policy, error) {
	if p := policies[name]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("unknown scheduling policy %q (allowed: %s)", name, strings.Join(PolicyNames(), ", "))
}

// PolicyNames lists the registered policies, sorted.
func PolicyNames() []string {
	names := make([]string, 0, len(policies))
	for n := range policies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Less orders two requests for an ordered policy: true when a is served
// before b.
type Less func(a, b *Request) bool

// OrderedQueue returns a waiting queue that hands out requests in the
// order less, as vLLM's PriorityRequestQueue does with a binary heap
// (Push, Pop and Remove O(log n): each request keeps its heap index, where
// heapq's remove scans the heap, O(n), which made client timeouts over a
// long queue O(n²)). A preempted request goes back by the same order: an
// ordered queue has no front to put it at.
func OrderedQueue(less Less) Queue { return orderedQueue{&reqHeap{less: less}} }

// reqHeap is container/heap's view of an ordered queue.
type reqHeap struct {
	h    []*Request
	less Less
}

func (q *reqHeap) Len() int           { return len(q.h) }
func (q *reqHeap) Less(i, j int) bool { return q.less(q.h[i], q.h[j]) }
func (q *reqHeap) Swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].heapAt, q.h[j].heapAt = int32(i), int32(j)
}
func (q *reqHeap) Push(x any) {
	r := x.(*Request)
	r.heapAt = int32(len(q.h))
	q.h = append(q.h, r)
}
func (q *reqHeap) Pop() any {
	n := len(q.h) - 1
	r := q.h[n]
	q.h[n] = nil
	q.h = q.h[:n]
	r.heapAt = -1
	return r
}

// orderedQueue is the Queue over a reqHeap.
type orderedQueue struct{ q *reqHeap }

func (o orderedQueue) Len() int           { return len(o.q.h) }
func (o orderedQueue) Peek() *Request     { return o.q.h[0] }
func (o orderedQueue) Pop() *Request      { return heap.Pop(o.q).(*Request) }
func (o orderedQueue) Push(r *Request)    { heap.Push(o.q, r) }
func (o orderedQueue) Prepend(r *Request) { heap.Push(o.q, r) }
func (o orderedQueue) Remove(r *Request) {
	if i := int(r.heapAt); i >= 0 && i < len(o.q.h) && o.q.h[i] == r {
		heap.Remove(o.q, i)
	}
}

// LastBy returns the index of the request served last under less: the
// running request an ordered policy preempts (vLLM: max(self.running,
// key=...)). On ties the earliest index wins, as Python's max keeps the
// first maximum.
func LastBy(running []*Request, less Less) int {
	v := 0
	for i := 1; i < len(running); i++ {
		if less(running[v], running[i]) {
			v = i
		}
	}
	return v
}

// PriorityAware is implemented by a policy that reads Request.Priority.
// vLLM refuses a request with a nonzero priority unless the policy is
// priority; sim refuses such a workload under a policy that is not
// PriorityAware (UsesPriority).
type PriorityAware interface {
	// UsesPriority reports whether the policy orders by priority.
	UsesPriority() bool
}

// UsesPriority reports whether p orders by Request.Priority.
func UsesPriority(p Policy) bool {
	pa, ok := p.(PriorityAware)
	return ok && pa.UsesPriority()
}
