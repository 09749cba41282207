// Package scenarios reads and validates scenario files: one deployment and
// one workload in YAML, following the contract of docs/SCENARIO.md
// (key names are vLLM's own, in snake_case). The folder also holds the gate
// cells (gate/) and examples users copy (examples/).
//
// It only describes what to simulate; it never simulates.
package scenarios
