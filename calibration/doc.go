// Package calibration holds the ground truth the fidelity gate is judged
// against and the judging itself: readers for measured runs (inference-perf
// result folders under groundtruth/, `vllm bench serve` result JSON), and the
// gate's arithmetic (relative error, per-cell rows, PASS/FAIL verdicts, the
// printed table) as docs/GATE.md defines it.
//
// Units are those of the source files and are kept, never converted
// silently: inference-perf distributions are in seconds (latencies) or tokens
// (lengths); `vllm bench serve` latencies are in milliseconds. Every field
// says which.
//
// It must not simulate, predict, or fit anything: it never runs the
// simulator and never reads simulator internals. The caller hands it what the
// simulator reported for a stage (SimStage) and gets rows back. Measured
// latencies are for judging only; nothing here feeds them to the simulator
// (docs/GATE.md, honesty rules).
package calibration
