// Package router is the external router in front of several replicas
// (independent `vllm serve` instances, each with its own engines, API
// servers and prefix cache), as llm-d's inference scheduler, vLLM's
// production-stack router or SGLang's router: it picks a replica for each
// request. It is not vLLM's DP load balancer, which spreads requests over
// the DP ranks inside one `vllm serve` (sim's LeastLoaded and RoundRobin).
//
// A policy sees only what a real router sees: the request as sent (its
// session id and prompt, which it may hash), its own routing history
// (which replica it sent each request to, and which responses have
// ended), and each replica's reported metrics as of the last scrape of
// its /metrics endpoint (vLLM's Prometheus names; sim refreshes them every
// refresh interval). Never the simulator's internal state. Each policy
// says what it reads in its doc comment.
//
// Each policy is one file, registered by name in an init function, behind
// two small interfaces (Policy and Scorer); docs/POLICIES.md walks through
// adding one. It knows nothing of time or of sim: sim calls Pick, then the
// optional hooks, and refreshes the metrics.
package router
