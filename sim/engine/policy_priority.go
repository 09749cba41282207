package engine

// Priority is vLLM's "priority" scheduling policy: a lower priority value
// is served first, ties by arrival (vllm/v1/request.py Request.__lt__:
// priority, then arrival_time). Waiting requests are admitted in that
// order (request_queue.py PriorityRequestQueue, a heap; a preempted
// request re-enters by the same order, not at the front), and when a
// running request cannot get its KV blocks the victim is the running
// request with the largest (priority, arrival), which may be the request
// itself (scheduler.py: max(self.running, key=lambda r: (r.priority,
// r.arrival_time))). A victim already scheduled in this step gives its
// tokens back to the budget (Scheduler.makeRoom).
var Priority Policy = priority{}

type priority struct{}

func init() { RegisterPolicy("priority", Priority) }

// byPriority is Request.__lt__ without the request-id tie: Arrival is
// unique per engine core.
func byPriority(a, b *Request) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	return a.Arrival < b.Arrival
}

// NewQueue implements Policy: a heap by (priority, arrival).
func (priority) NewQueue() Queue { return OrderedQueue(byPriority) }

// Victim implements Policy: the largest (priority, arrival).
func (priority) Victim(running []*Request) int { return LastBy(running, byPriority) }

// UsesPriority implements PriorityAware.
func (priority) UsesPriority() bool { return true }
