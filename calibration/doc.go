// Package calibration holds the ground truth the fidelity gate is judged
// against and the judging itself: readers for measured runs (inference-perf
// result folders under groundtruth/ and their per-request replay files,
// `vllm bench serve` result JSON), the gate's arithmetic (relative error,
// per-cell rows, per-request rows by arrival window, PASS/FAIL verdicts,
// the printed tables) as docs/GATE.md defines it, running the simulator on
// the gate scenarios (run.go), and the host-model fit (fit.go).
//
// Units are those of the source files and are kept, never converted
// silently: inference-perf distributions are in seconds (latencies) or tokens
// (lengths); replay files give send times in µs and latencies in seconds;
// `vllm bench serve` latencies are in milliseconds. Every field says which.
//
// It must not predict: step prices come from sim and predictor. Measured
// latencies are for judging (and, for the training cells only, fitting);
// nothing here feeds a cell's measured latencies to its simulation
// (docs/GATE.md, honesty rules). gate --replay takes send times and prompt
// lengths, which a user could know, never latencies.
package calibration
