// Package plan runs many simulations: sweeps over `simulate` flags and
// whole deployments, sharding and merging of sweeps, the SLO capacity
// search, the enumeration of deployments on N GPUs with their Pareto
// front, and the `vllm serve` / `vllm bench serve` launch lines of a
// deployment.
//
// It calls sim as a library and knows nothing of cobra: the CLI hands it a
// Builder that turns a point's flag assignments into a scenario (through
// simulate's own flag set), so every flag simulate gains is a sweep key
// without a change here. Every output is a function of the sweep's
// definition alone: points are numbered once, run in parallel, and
// reported in point order, never in completion order.
package plan
