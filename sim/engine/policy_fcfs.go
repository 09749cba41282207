package engine

// FCFS is vLLM's default scheduling policy, "fcfs": waiting requests are
// admitted in arrival order, a preempted request goes back to the front
// of the waiting queue, and the request preempted when KV blocks run out
// is the last running one, the most recently admitted
// (vllm/v1/core/sched/scheduler.py: self.running.pop();
// request_queue.py: FCFSRequestQueue).
var FCFS Policy = fcfs{}

type fcfs struct{}

func init() { RegisterPolicy("fcfs", FCFS) }

// NewQueue implements Policy: a deque.
func (fcfs) NewQueue() Queue { return &deque{} }

// Victim implements Policy: the last running request.
func (fcfs) Victim(running []*Request) int { return len(running) - 1 }
