package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A request sent but neither finished nor failed when the run ended is
// stuck in an engine whose KV cache cannot hold it (a max_model_len
// request on a cache of exactly ⌈max_model_len ÷ 16⌉ blocks, one of which
// is vLLM's null block: the memory plan accepts it as vLLM does, the
// request runs until it needs its last block, is preempted and can never
// be rescheduled). On main the summary counted it failed and the note
// said "0 refused …, 0 given up at the client timeout", naming no cause.
func TestDiagnoseStuckRequests(t *testing.T) {
	res := &Result{ITL: NewHistogram(), Requests: []RequestRecord{
		{ID: 0, SendNs: 0, FirstTokenNs: 5e8, FinishNs: -1, OutputTokens: 57},
		{ID: 1, SendNs: 1e8, FirstTokenNs: 6e8, FinishNs: 9e8, OutputTokens: 2},
		{ID: 2, SendNs: -1, FirstTokenNs: -1, FinishNs: -1}, // never sent
	}}
	notes := Diagnose(res, false)
	assert.Contains(t, notes, "1 request sent never finished nor timed out: the run ended with it waiting in an engine whose KV cache cannot hold it "+
		"(a request needs ⌈(prompt + output tokens) ÷ block_size⌉ blocks and vLLM keeps one of num_gpu_blocks as its null block); vLLM would keep it waiting forever")
}
