// Package profiles holds what the predictor prices steps from: operator
// latency tables (GEMM, prefill and decode attention, fused MoE, collectives),
// model specs read from HuggingFace config.json files, and hardware specs.
//
// It loads and describes data; it never predicts a step (that is the
// predictor's job) and never schedules (that is sim's job).
package profiles
