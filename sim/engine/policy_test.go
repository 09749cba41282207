package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withPolicy(c Config, p Policy) Config {
	c.Policy = p
	return c
}

// steps schedules and applies n synchronous steps, returning each step's
// (ID, tokens) items and preemption count.
func steps(s *Scheduler, n int) ([][][2]int, []int) {
	var items [][][2]int
	var pre []int
	var st Step
	for i := 0; i < n; i++ {
		s.Schedule(&st)
		items = append(items, stepTokens(&st))
		pre = append(pre, st.NumPreempted)
		s.Update(&st, nil)
	}
	return items, pre
}

// Priority order, worked by hand: max_num_seqs 2, 16-token prompts, 2
// outputs each, all four added before the first step in the order A
// (priority 2), B (0), C (1), D (0). Priority admits the lowest value
// first, ties by arrival: B and D, which finish after 2 steps, then C and
// A. FCFS admits in arrival order: A and B, then C and D.
func TestPriorityAdmissionOrder(t *testing.T) {
	for _, c := range []struct {
		policy Policy
		want   [][][2]int
	}{
		{Priority, [][][2]int{{{1, 16}, {3, 16}}, {{1, 1}, {3, 1}}, {{2, 16}, {0, 16}}, {{2, 1}, {0, 1}}}},
		{FCFS, [][][2]int{{{0, 16}, {1, 16}}, {{0, 1}, {1, 1}}, {{2, 16}, {3, 16}}, {{2, 1}, {3, 1}}}},
	} {
		s := NewScheduler(withPolicy(cfg(100, 2, 100, false), c.policy))
		for id, prio := range []int{2, 0, 1, 0} {
			s.Add(&Request{ID: id, PromptTokens: 16, MaxTokens: 2, Priority: prio})
		}
		items, _ := steps(s, 4)
		assert.Equal(t, c.want, items, "%T", c.policy)
		assert.False(t, s.HasWork())
	}
}

// Priority preemption, worked by hand: 6 KV blocks of 16 tokens, no
// prefix caching, budget 100, 40 outputs each (none finishes here).
//
//	step 1: C (priority 2, 16-token prompt) alone: 1 block.
//	then B (priority 1) and A (priority 0) arrive, 31-token prompts.
//	step 2: C decodes its 17th token (2nd block); A is admitted before B
//	        (lower value first) though B arrived first: 2 blocks each,
//	        0 free. Running order: C, A, B.
//	step 3: everyone decodes inside its blocks (C 18, A and B 32 tokens).
//	step 4: C decodes (19 tokens). A's 33rd token needs a 3rd block, none
//	        is free: the victim is the running request with the largest
//	        (priority, arrival), C, already scheduled in this step: C
//	        leaves the step (its token back to the budget) and frees 2
//	        blocks; A takes one, B's 33rd token the other.
//	then D (priority 0, 16-token prompt) arrives.
//	step 5: A and B decode. Waiting: D and C. D is first but no block is
//	        free; a waiting request never preempts a running one, so
//	        nothing is admitted.
//	steps 6–19: A and B decode until their 3 blocks are full (48
//	        computed tokens each).
//	step 20: A's 49th token needs a 4th block: the victim is B (priority 1
//	        > 0), not yet scheduled in this step; its 3 blocks are freed
//	        and A takes one. Nothing is admitted in a step that preempted.
//	step 21: A decodes; admission by priority: D (priority 0) takes 1
//	        block; B next (priority 1, arrived before C) needs 4 blocks
//	        to recompute its 49 tokens (31 + 18 sampled) with 1 free:
//	        admission stops. C, which
//	        arrived first of all, waits behind both.
func TestPriorityPreemption(t *testing.T) {
	s := NewScheduler(withPolicy(cfg(100, 4, 7, false), Priority)) // 6 usable + the null block
	a := &Request{ID: 0, PromptTokens: 31, MaxTokens: 40, Priority: 0}
	b := &Request{ID: 1, PromptTokens: 31, MaxTokens: 40, Priority: 1}
	c := &Request{ID: 2, PromptTokens: 16, MaxTokens: 40, Priority: 2}
	d := &Request{ID: 3, PromptTokens: 16, MaxTokens: 40, Priority: 0}
	s.Add(c)
	items, pre := steps(s, 1)
	assert.Equal(t, [][][2]int{{{2, 16}}}, items)
	s.Add(b)
	s.Add(a)
	items, pre = steps(s, 3)
	assert.Equal(t, [][][2]int{
		{{2, 1}, {0, 31}, {1, 31}},
		{{2, 1}, {0, 1}, {1, 1}},
		{{0, 1}, {1, 1}},
	}, items)
	assert.Equal(t, []int{0, 0, 1}, pre)
	assert.Equal(t, Preempted, c.Status)
	assert.Equal(t, 0, c.NumComputed)
	assert.Equal(t, 3, c.NumOutput, "C keeps its 3 sampled tokens (recomputed later)")
	assert.Equal(t, 0, s.Pool.NumFree())

	s.Add(d)
	items, pre = steps(s, 15) // steps 5–19
	for i := range items {
		assert.Equal(t, [][2]int{{0, 1}, {1, 1}}, items[i], "step %d", i+5)
	}
	assert.Equal(t, 48, a.NumComputed)
	assert.Equal(t, 2, s.NumWaiting(), "D and C wait: no preemption for a waiting request")
	assert.Zero(t, sum(pre))

	items, pre = steps(s, 2) // steps 20, 21
	assert.Equal(t, [][][2]int{{{0, 1}}, {{0, 1}, {3, 16}}}, items)
	assert.Equal(t, []int{1, 0}, pre)
	assert.Equal(t, Preempted, b.Status)
	assert.Equal(t, 1, b.Preemptions)
	assert.Equal(t, Running, d.Status)
	assert.Equal(t, Preempted, c.Status)
	assert.Equal(t, 1, s.Pool.NumFree())
}

// The victim may be the request being scheduled, worked by hand: 4
// blocks, B (priority 1) admitted alone with a 31-token prompt (2
// blocks), then A (priority 0, 31 tokens) takes the other 2. At step 3,
// B, first in the running order, needs a 3rd block for its 33rd token
// and none is free: the largest (priority, arrival) running request is B
// itself, so B preempts itself and the running loop stops (vLLM breaks
// out of it). vLLM then runs that empty step and schedules again at once,
// so the step that executes holds A's decode, with the preemption
// counted. Step 4: A's 33rd token takes one of B's freed blocks; B (33
// tokens to recompute, 3 blocks) does not fit the 1 left.
func TestPriorityVictimCanBeItself(t *testing.T) {
	s := NewScheduler(withPolicy(cfg(100, 4, 5, false), Priority)) // 4 usable + the null block
	b := &Request{ID: 1, PromptTokens: 31, MaxTokens: 10, Priority: 1}
	a := &Request{ID: 0, PromptTokens: 31, MaxTokens: 10, Priority: 0}
	s.Add(b)
	items, _ := steps(s, 1)
	require.Equal(t, [][][2]int{{{1, 31}}}, items)
	s.Add(a)
	items, pre := steps(s, 3)
	assert.Equal(t, [][][2]int{{{1, 1}, {0, 31}}, {{0, 1}}, {{0, 1}}}, items)
	assert.Equal(t, []int{0, 1, 0}, pre)
	assert.Equal(t, Preempted, b.Status)
	assert.Equal(t, 1, s.NumWaiting())
	assert.Equal(t, 1, s.Pool.NumFree())
}

// FCFS in the same situation preempts the last running request, A,
// whatever the priorities (sim refuses nonzero priorities under fcfs, as
// vLLM does): B takes one of A's freed blocks.
func TestFCFSVictimIsLastRunning(t *testing.T) {
	s := NewScheduler(cfg(100, 4, 5, false)) // 4 usable + the null block
	b := &Request{ID: 1, PromptTokens: 31, MaxTokens: 10}
	a := &Request{ID: 0, PromptTokens: 31, MaxTokens: 10}
	s.Add(b)
	steps(s, 1)
	s.Add(a)
	items, pre := steps(s, 2)
	assert.Equal(t, [][][2]int{{{1, 1}, {0, 31}}, {{1, 1}}}, items)
	assert.Equal(t, []int{0, 1}, pre)
	assert.Equal(t, Preempted, a.Status)
}

func TestPolicyRegistry(t *testing.T) {
	p, err := LookupPolicy("priority")
	require.NoError(t, err)
	assert.Equal(t, Priority, p)
	_, err = LookupPolicy("lifo")
	assert.EqualError(t, err, `unknown scheduling policy "lifo" (allowed: fcfs, priority, sjf)`)
	assert.Panics(t, func() { RegisterPolicy("fcfs", FCFS) })
}

// An aborted request leaves an ordered queue, which keeps its order.
func TestOrderedQueueRemove(t *testing.T) {
	q := OrderedQueue(byPriority)
	reqs := []*Request{{ID: 0, Priority: 3}, {ID: 1, Priority: 1, Arrival: 1}, {ID: 2, Priority: 2, Arrival: 2}, {ID: 3, Priority: 1, Arrival: 3}}
	for _, r := range reqs {
		q.Push(r)
	}
	q.Remove(reqs[1])
	var ids []int
	for q.Len() > 0 {
		ids = append(ids, q.Pop().ID)
	}
	assert.Equal(t, []int{3, 2, 0}, ids)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func TestUsesPriority(t *testing.T) {
	assert.True(t, UsesPriority(Priority))
	assert.False(t, UsesPriority(FCFS))
	assert.False(t, UsesPriority(SJF))
}

// A priority victim before the request asking that was skipped in this
// step (here in flight, as under pipeline parallelism) leaves the running
// list without moving vLLM's loop index, so the request after the one
// asking is skipped for the step (scheduler.py: req_index -= 1 only for a
// victim in scheduled_running_reqs). Worked by hand, 5 usable blocks: X
// (priority 2, 31 tokens) runs first, then A (priority 0, 31) and B
// (priority 1, 15) fill the pool. At step 4 X is in flight; A's 33rd
// token needs a block, the victim is X (largest priority) before A and
// not scheduled: A takes one of X's 2 blocks, and B is skipped. With A
// last in the list (no B, 4 usable blocks), the loop simply ends after A.
func TestPriorityVictimSkippedBeforeTheAsker(t *testing.T) {
	for _, withB := range []bool{true, false} {
		blocks := 5 // 4 usable + the null block: X and A fill them
		if withB {
			blocks = 6 // 5 usable: X, A and B fill them
		}
		s := NewScheduler(withPolicy(cfg(100, 4, blocks, false), Priority))
		x := &Request{ID: 2, PromptTokens: 31, MaxTokens: 10, Priority: 2}
		a := &Request{ID: 0, PromptTokens: 31, MaxTokens: 10, Priority: 0}
		b := &Request{ID: 1, PromptTokens: 15, MaxTokens: 10, Priority: 1}
		s.Add(x)
		steps(s, 1)
		s.Add(a)
		want := [][][2]int{{{2, 1}, {0, 31}}, {{0, 1}}, {{0, 1}}}
		if withB {
			s.Add(b)
			want = [][][2]int{{{2, 1}, {0, 31}, {1, 15}}, {{0, 1}, {1, 1}}, {{0, 1}}}
		}
		items, _ := steps(s, 1)
		x.InFlight = true
		more, pre := steps(s, 2)
		assert.Equal(t, want, append(items, more...), "with B: %v", withB)
		assert.Equal(t, []int{0, 1}, pre)
		assert.Equal(t, Preempted, x.Status)
	}
}
