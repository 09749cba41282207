// Package report turns a simulated run into what people look at when
// they operate vLLM: a timeline of vLLM's Prometheus metrics per interval
// (CSV), the end-of-run /metrics exposition (Prometheus text format), a
// Chrome/Perfetto trace of steps and requests (JSON), and plots
// (gonum/plot, PNG and SVG).
//
// It reads the run through sim.Observer and the run's records; it
// simulates nothing and changes nothing it is shown. Names, labels,
// buckets and counting rules are vLLM 0.11.0's (vllm.go).
package report
