// Package prefetch asks the CPU to start loading a cache line that the
// caller will read soon: a hint, with no effect on any result.
//
// The simulator's per-request data (a planned request, 64 bytes; its
// record; the engine's request) is read once every few hundred engine
// steps, by which time it has left the CPU's caches, and the load that
// first reads it stalls the core (on BenchmarkSimulateCodegen, perf put
// 85 % of client.pushNextArrival's 3 % of the run on its load of the next
// planned request). Go has no prefetch intrinsic a program can call, so
// Line is a few lines of assembly on amd64 (PREFETCHT0) and does nothing
// elsewhere.
package prefetch
