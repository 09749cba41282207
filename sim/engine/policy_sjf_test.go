package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Worked by hand: max_num_seqs 2, budget 100, one output each; A (64
// prompt tokens), B (16), C (48), D (16) arrive together in that order.
// SJF admits the two shortest prompts, B and D (ties by arrival); they
// finish in that step, then C (48) and the budget's remaining 52 tokens
// go to A (64), whose last 12 prompt tokens run in the third step.
func TestSJFAdmitsShortestPromptFirst(t *testing.T) {
	s := NewScheduler(withPolicy(cfg(100, 2, 100, false), SJF))
	for id, prompt := range []int{64, 16, 48, 16} {
		s.Add(&Request{ID: id, PromptTokens: prompt, MaxTokens: 1})
	}
	items, _ := steps(s, 3)
	assert.Equal(t, [][][2]int{{{1, 16}, {3, 16}}, {{2, 48}, {0, 52}}, {{0, 12}}}, items)
	assert.False(t, s.HasWork())
}

// When KV blocks run out, SJF preempts the longest prompt: 5 usable blocks, A
// (40 prompt tokens, 3 blocks) and B (31 tokens, 2 blocks) arrive in that
// order and fill the pool (SJF admits B first). At step 3 B's 33rd token
// needs a block and the victim is A, the longest prompt. (FCFS would
// have admitted A first and preempted B, the last running request.)
func TestSJFPreemptsLongestPrompt(t *testing.T) {
	s := NewScheduler(withPolicy(cfg(100, 2, 6, false), SJF)) // 5 usable + the null block
	a := &Request{ID: 0, PromptTokens: 40, MaxTokens: 20}
	b := &Request{ID: 1, PromptTokens: 31, MaxTokens: 20}
	s.Add(a)
	s.Add(b)
	items, pre := steps(s, 3)
	assert.Equal(t, [][][2]int{{{1, 31}, {0, 40}}, {{1, 1}, {0, 1}}, {{1, 1}}}, items)
	assert.Equal(t, []int{0, 0, 1}, pre)
	assert.Equal(t, Preempted, a.Status)
}
