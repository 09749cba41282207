package engine

// SJF, shortest job first, admits the waiting request with the shortest
// prompt first (ties by arrival) and, when KV blocks run out, preempts
// the running request with the longest prompt (ties: the latest arrival).
// A server cannot know how many tokens a request will generate, so the
// job length it can act on is the prompt.
//
// SJF is not a vLLM policy (vLLM 0.10–0.15 offers fcfs and priority): it is
// the worked example of docs/POLICIES.md, which walks through this file
// and its test.
var SJF Policy = sjf{}

type sjf struct{}

func init() { RegisterPolicy("sjf", SJF) }

// shorterPrompt orders requests by prompt tokens, then arrival.
func shorterPrompt(a, b *Request) bool {
	if a.PromptTokens != b.PromptTokens {
		return a.PromptTokens < b.PromptTokens
	}
	return a.Arrival < b.Arrival
}

// NewQueue implements Policy: a heap by (prompt tokens, arrival).
func (sjf) NewQueue() Queue { return OrderedQueue(shorterPrompt) }

// Victim implements Policy: the longest prompt, latest arrival on ties.
func (sjf) Victim(running []*Request) int { return LastBy(running, shorterPrompt) }
