// Package engine is one vLLM V1 engine core's scheduling state: requests,
// the KV block pool with its prefix cache, the scheduler (token budget,
// max_num_seqs, running-first, chunked prefill, preemption by recompute) and
// CUDA-graph capture sizes. Its behaviour follows vllm/v1/core/sched/scheduler.py,
// vllm/v1/core/kv_cache_manager.py and vllm/v1/core/block_pool.py.
//
// It knows nothing of time or prices: sim drives it step by step and the
// predictor prices the steps it produces.
package engine
