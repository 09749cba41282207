package sim

import (
	"fmt"
	"math"

	"frontier/scenarios"
	"frontier/sim/router"
)

// Replicas is how a co-located deployment is replicated behind an
// external router (scenario key replicas, --replicas): Count copies of
// the deployment, each a separate `vllm serve` with its own engines (DP
// ranks), API servers and prefix cache.
type Replicas struct {
	Count   int
	Router  string             // the routing policy's registered name
	Weights map[string]float64 // the weighted router's scorers (nil = llm-d's default)
	// MetricsIntervalNs is how often the router refreshes each replica's
	// reported metrics; 0 = it reads them live at every request.
	MetricsIntervalNs int64
}

// resolveReplicas reads the scenario's replicas block (nil = one
// replica) and checks the router's name and weights.
func (st *Setup) resolveReplicas(sc *scenarios.Scenario) error {
	st.Replicas = Replicas{Count: 1, Router: "round-robin", MetricsIntervalNs: int64(scenarios.DefaultMetricsIntervalMs * 1e6)}
	r := sc.Replicas
	if r == nil {
		return nil
	}
	st.Replicas.Count, st.Replicas.Weights = r.Count, r.Weights
	if r.Router != "" {
		st.Replicas.Router = r.Router
	}
	if r.MetricsIntervalMs != nil {
		st.Replicas.MetricsIntervalNs = int64(math.Round(*r.MetricsIntervalMs * 1e6))
	}
	if len(r.Weights) > 0 && st.Replicas.Router != "weighted" {
		return fmt.Errorf("replicas.weights (--router-weights): only for the weighted router, the router is %s", st.Replicas.Router)
	}
	if _, err := st.newPolicy(); err != nil {
		return err
	}
	if sc.Deployment != nil {
		st.Pools[0].Instances = r.Count
	}
	if note := oneReplicaRouterNote(sc); note != "" {
		st.Notes = append(st.Notes, note)
	}
	return nil
}

// oneReplicaRouterNote says that a router given for one replica routes
// nothing (and what spreads a deployment's DP ranks instead), when router
// flags were given without a replica count (scenarios.Replicas.
// CountImplied: `--replicas 1 --router X`, e.g. a sweep's first point, is
// the single deployment byte for byte); "" otherwise.
func oneReplicaRouterNote(sc *scenarios.Scenario) string {
	r := sc.Replicas
	if r.Count != 1 || !r.CountImplied || (r.Router == "" && len(r.Weights) == 0 && r.MetricsIntervalMs == nil) || sc.Deployment == nil {
		return ""
	}
	name := r.Router
	if name == "" {
		name = "weighted"
		if len(r.Weights) == 0 {
			name = "round-robin"
		}
	}
	note := fmt.Sprintf("replicas.router (--router) %s routes requests between replicas (replicas.count, --replicas), and this deployment has one, so it routes nothing", name)
	if dp := sc.Deployment.DataParallelSize; dp > 1 {
		top := sc.Router
		if top == "" {
			top = "least_loaded"
		}
		note += fmt.Sprintf("; the %d data-parallel ranks of a vllm serve are balanced by vLLM's own DP balancer (the scenario's top-level router key: %s)", dp, top)
	}
	return note
}

// newPolicy builds the replicas' routing policy.
func (st *Setup) newPolicy() (router.Policy, error) {
	p, err := router.New(st.Replicas.Router, router.Config{Replicas: st.Replicas.Count, Weights: st.Replicas.Weights})
	if err != nil {
		key := "replicas.router (--router)"
		if st.Replicas.Router == "weighted" {
			key = "replicas.weights (--router-weights)"
		}
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return p, nil
}

// checkSessions refuses a router that routes by session id on a workload
// without sessions.
func (st *Setup) checkSessions() error {
	p, _ := st.newPolicy()
	if st.Replicas.Count < 2 || !router.NeedsSessions(p) {
		return nil
	}
	for _, stage := range st.Plan.Stages {
		for _, r := range stage.Requests {
			if r.Session() != 0 {
				return nil
			}
		}
	}
	what := "router " + st.Replicas.Router
	if st.Replicas.Router == "weighted" {
		what = "the weighted router's session scorer"
	}
	return fmt.Errorf("replicas.router (--router): %s routes by session id, and no request of the workload has one (sessions come from dataset: sessions, --dataset-name sessions, or a trace's session_id column)", what)
}

// replicaSet is the external router in front of the replicas of the
// co-located pool, and what it knows (router.Replica): its own routing
// history, kept current, and each replica's reported metrics, refreshed
// every MetricsIntervalNs.
type replicaSet struct {
	policy   router.Policy
	routed   router.RoutedHook
	finished router.FinishedHook
	scraped  router.ScrapedHook
	blocks   bool // the policy reads prompt block hashes
	metrics  bool // the policy reads the replicas' reported metrics
	view     []router.Replica
	dp, apis int      // engine cores and API servers per replica
	dpRouter []Router // each replica's own DP load balancer
	// taken counts the requests each replica's API servers have taken in:
	// its k-th goes to its server k mod apis.
	taken    []int
	interval int64
	req      router.Request
}

func newReplicaSet(st *Setup) (*replicaSet, error) {
	pol, err := st.newPolicy()
	if err != nil {
		return nil, err
	}
	d := st.Pools[0]
	return newRouterView(pol, st.Replicas.Count, d.DP, max(1, d.APIServers), d.Engine.NumBlocks*d.DP, st.Replicas.MetricsIntervalNs, st.Router), nil
}

// newRouterView is the router state of n replicas of dp engine cores and
// apis API servers each, kvBlocks KV blocks each, under policy pol with
// metrics refreshed every interval ns (0 = live); dpRouter names each
// replica's DP load balancer.
func newRouterView(pol router.Policy, n, dp, apis, kvBlocks int, interval int64, dpRouter string) *replicaSet {
	rs := &replicaSet{policy: pol, view: make([]router.Replica, n), dp: dp, apis: apis, interval: interval, taken: make([]int, n)}
	rs.routed, _ = pol.(router.RoutedHook)
	rs.finished, _ = pol.(router.FinishedHook)
	rs.scraped, _ = pol.(router.ScrapedHook)
	rs.blocks = router.NeedsBlocks(pol)
	rs.metrics = router.ReadsMetrics(pol)
	for i := range rs.view {
		rs.view[i].KVBlocks = kvBlocks
		rs.dpRouter = append(rs.dpRouter, newRouter(dpRouter))
	}
	return rs
}

// live reports whether routing a send reads the engines' state as it is
// now (a policy that reads the replicas' metrics, refreshed at every
// request: MetricsIntervalNs 0); false for a nil set (no replicas).
func (rs *replicaSet) live() bool { return rs != nil && rs.interval == 0 && rs.metrics }

// pick routes r to a replica when the client sends it: the router is a
// proxy in front of the replicas' API servers.
func (rs *replicaSet) pick(s *Sim, r *record) int {
	if rs.live() {
		rs.scrape(s)
	}
	q := &rs.req
	q.ID, q.Session, q.Blocks = int(r.plan.ID), int(r.plan.Session()), q.Blocks[:0]
	if rs.blocks {
		bs := s.pools[0].dep.Engine.BlockSize
		q.Blocks = r.req.PromptBlockHashes(bs, router.BlockTokens(bs)/bs, router.MaxPrefixBlocks, q.Blocks)
	}
	rep := rs.policy.Pick(q, rs.view)
	rs.view[rep].InFlight++
	if rs.routed != nil {
		rs.routed.Routed(q, rep, rs.view)
	}
	return rep
}

// done is the end of r's response (completed, failed or aborted). The
// router counts it when the engine finishes r, not when the last SSE
// chunk leaves the replica's API server: earlier by that server's queue
// and the streaming delay (sub-millisecond unless the server saturates).
func (rs *replicaSet) done(r *record) {
	rs.view[r.replica].InFlight--
	if rs.finished != nil {
		q := &rs.req
		q.ID, q.Session, q.Blocks = int(r.plan.ID), int(r.plan.Session()), q.Blocks[:0]
		rs.finished.Finished(q, r.replica, rs.view)
	}
}

// scrape refreshes every replica's reported metrics from its engines:
// vllm:num_requests_waiting and _running summed over its DP ranks, and
// vllm:kv_cache_usage_perc pooled over them (each engine's is
// BlockPool.Usage, vLLM's get_usage: used ÷ (num_gpu_blocks − 1)).
func (rs *replicaSet) scrape(s *Sim) {
	cores := s.pools[0].cores
	for i := range rs.view {
		v := &rs.view[i]
		v.Waiting, v.Running = 0, 0
		used, total := 0, 0
		for _, c := range cores[i*rs.dp : (i+1)*rs.dp] {
			v.Waiting += c.Sched.NumWaiting()
			v.Running += c.Sched.NumRunning()
			used += c.Sched.Pool.NumUsed()
			total += c.Sched.Pool.NumBlocks() - 1 // the null block
		}
		v.KVUsage = float64(used) / float64(max(total, 1))
	}
	if rs.scraped != nil {
		rs.scraped.Scraped(rs.view)
	}
}

// scrapeAt is called by the event loop before an event at time at ≥
// s.scrapeAt, the next refresh: nothing changed since the last event, so
// the state now is the state at that refresh (and at any other refresh
// before at). The next refresh is the first multiple of the interval
// after at.
func (rs *replicaSet) scrapeAt(s *Sim, at int64) {
	rs.scrape(s)
	s.scrapeAt = (at/rs.interval + 1) * rs.interval
}

// cores is replica rep's engine cores in pool p and its DP load balancer.
func (rs *replicaSet) cores(p *pool, rep int) ([]*Core, Router) {
	return p.cores[rep*rs.dp : (rep+1)*rs.dp], rs.dpRouter[rep]
}

// apiFor is the API server that takes r in. With replicas, the router
// picks r's replica first (it is the proxy in front of their API
// servers), then connections spread over that replica's servers as over
// one deployment's: the replica's k-th request to its server k mod n.
// (By the request's ID, a round-robin router sending IDs ≡ r mod 2 to
// replica r used one of its two servers: attack13.)
func (s *Sim) apiFor(r *record) *apiServer {
	p := s.pools[0]
	if s.replicas == nil {
		return p.apiFor(int(r.plan.ID))
	}
	r.replica, r.routed = s.replicas.pick(s, r), true
	r.out.Replica = int32(r.replica)
	a, k := s.replicas.apis, &s.replicas.taken[r.replica]
	*k++
	return &p.apis[r.replica*a+(*k-1)%a]
}
