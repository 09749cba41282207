package router

import (
	"fmt"
	"sort"
	"strings"
)

// Request is what a router reads from one request: what the HTTP request
// carries.
type Request struct {
	ID int
	// Session is the session id the client sends (a header or body field
	// of a multi-turn conversation), 0 = none.
	Session int
	// Blocks are the chained hashes of the prompt's first full blocks of
	// BlockTokens tokens (at most MaxPrefixBlocks), as a prefix-aware
	// router hashes the prompt. Two prompts share router block k exactly
	// when they share their first (k+1)·BlockTokens tokens, as the
	// replicas' prefix caches see them.
	Blocks []uint64
}

// Replica is what a router knows of one replica.
type Replica struct {
	// InFlight counts the requests this router sent to the replica whose
	// response has not ended (completed, failed or aborted by the client):
	// the router's own history, always current.
	InFlight int
	// The replica's reported metrics, as of the last scrape (up to one
	// refresh interval old): vllm:num_requests_waiting,
	// vllm:num_requests_running and vllm:kv_cache_usage_perc (a fraction
	// of the KV blocks in use, [0, 1]), summed (waiting, running) or
	// pooled (KV usage) over the replica's DP engines.
	Waiting, Running int
	KVUsage          float64
	// KVBlocks is the replica's KV cache size in blocks over its engines
	// (vLLM's cache_config_info num_gpu_blocks), known at start.
	KVBlocks int
}

// Policy picks the replica for each request.
type Policy interface {
	// Pick returns the index in reps of the replica r goes to. reps holds
	// every replica (never empty); InFlight does not count r yet.
	Pick(r *Request, reps []Replica) int
}

// The hooks a policy implements when it keeps state of its own; sim calls
// them after the change they name, with reps already updated.
type (
	// RoutedHook: r was sent to replica rep (its InFlight counts r).
	RoutedHook interface {
		Routed(r *Request, rep int, reps []Replica)
	}
	// FinishedHook: r's response from replica rep ended.
	FinishedHook interface {
		Finished(r *Request, rep int, reps []Replica)
	}
	// ScrapedHook: the reported metrics were refreshed.
	ScrapedHook interface{ Scraped(reps []Replica) }
	// SessionRouter: the policy needs session ids on the workload (sim
	// refuses a workload without them).
	SessionRouter interface{ NeedsSessions() bool }
)

// Scorer rates every replica for a request, as llm-d's scorer plugins
// do: scores[i] in [0, 1], higher is better. A scorer may implement the
// hooks above too.
type Scorer interface {
	Score(r *Request, reps []Replica, scores []float64)
}

// Config is what building a policy may use.
type Config struct {
	Replicas int
	// Weights are the weighted policy's scorers and their weights (llm-d's
	// schedulingProfiles plugin weights); nil = DefaultWeights.
	Weights map[string]float64
}

var (
	policies = map[string]func(Config) (Policy, error){}
	scorers  = map[string]func(Config) Scorer{}
)

// Register makes a policy available by name (--router, replicas.router).
// It panics on an empty or taken name.
func Register(name string, build func(Config) (Policy, error)) {
	if name == "" || policies[name] != nil {
		panic(fmt.Sprintf("router: policy %q registered twice (or unnamed)", name))
	}
	policies[name] = build
}

// RegisterScorer makes a scorer available to the weighted policy by name
// (--router-weights NAME=WEIGHT). It panics on an empty or taken name.
func RegisterScorer(name string, build func(Config) Scorer) {
	if name == "" || scorers[name] != nil {
		panic(fmt.Sprintf("router: scorer %q registered twice (or unnamed)", name))
	}
	scorers[name] = build
}

// New builds the policy registered under name; the error lists the names
// allowed.
func New(name string, cfg Config) (Policy, error) {
	build := policies[name]
	if build == nil {
		return nil, fmt.Errorf("unknown router policy %q (allowed: %s)", name, strings.Join(Names(), ", "))
	}
	return build(cfg)
}

// Names lists the registered policies, sorted.
func Names() []string { return sortedKeys(policies) }

// ScorerNames lists the registered scorers, sorted.
func ScorerNames() []string { return sortedKeys(scorers) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NeedsSessions reports whether p routes by session id.
func NeedsSessions(p Policy) bool {
	s, ok := p.(SessionRouter)
	return ok && s.NeedsSessions()
}

// fewerInFlight is the tie-break every policy shares: fewer requests in
// flight from this router, then the lower index (llm-d's max-score picker
// breaks ties at random; a simulator must not).
func fewerInFlight(reps []Replica, a, b int) bool {
	if reps[a].InFlight != reps[b].InFlight {
		return reps[a].InFlight < reps[b].InFlight
	}
	return a < b
}

// MetricsReader: whether a policy (or a scorer) reads the replicas'
// reported metrics (Replica.Waiting, Running, KVUsage). sim never
// refreshes them for one that does not (it reads its own history, the
// session id or the prompt), so it costs per request what its own work
// costs, even when metrics are read live. A policy without the method is
// taken to read them.
type MetricsReader interface{ ReadsMetrics() bool }

// ReadsMetrics reports whether p, a Policy or a Scorer, reads the
// replicas' reported metrics.
func ReadsMetrics(p any) bool {
	m, ok := p.(MetricsReader)
	return !ok || m.ReadsMetrics()
}

// BlockRouter: the policy reads Request.Blocks (sim hashes the prompt
// only for such a policy).
type BlockRouter interface{ NeedsBlocks() bool }

// NeedsBlocks reports whether p reads the prompt's block hashes.
func NeedsBlocks(p Policy) bool {
	b, ok := p.(BlockRouter)
	return ok && b.NeedsBlocks()
}
