// Package predictor prices one engine step: a batch description in, device
// time and host time out, composed from per-operator predictions (GEMM,
// prefill and decode attention, fused MoE, collectives, memory-bound
// elementwise operators) read from the profiles' tables, plus the host
// (CPU) overhead model and vLLM's memory plan (weights, activation peak,
// KV capacity).
//
// It knows nothing of scheduling: sim decides what runs in a step.
package predictor
