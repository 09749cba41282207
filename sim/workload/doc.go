// Package workload turns a scenario's workload block into the requests a
// client sends: `vllm bench serve`'s random dataset (with its shared
// random prefix), inference-perf's shared_prefix dataset with its load
// stages, trace replay from CSV, multi-turn chat and agent sessions, and
// prompt/output lengths drawn from a file.
//
// It only plans requests (lengths, prompt content as streams of tokens,
// arrival offsets, and which request a finished one triggers, after how
// long, for closed-loop sessions); sim sends them, applies
// max_concurrency and the client timeout.
package workload
