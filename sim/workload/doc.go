// Package workload turns a scenario's workload block into the requests a
// client sends: `vllm bench serve`'s random dataset, inference-perf's
// shared_prefix dataset with its load stages, and trace replay from CSV.
//
// It only plans requests (lengths, prompt identities, arrival offsets);
// sim sends them, applies max_concurrency and the client timeout.
package workload
