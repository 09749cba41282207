package sim

import (
	"fmt"

	"frontier/sim/engine"
)

// pool is a set of engine cores serving one role: every request
// (co-located), or the prefill or decode half of a disaggregated
// deployment. A request goes to one core of the pool, chosen by the
// router.
type pool struct {
	name   string
	cores  []*Core
	router Router
	dep    *Deployment
	apis   []apiServer // API server processes in front of the pool's engines
}

// apiFor is the API server a request talks to: connections spread evenly
// over the servers (SO_REUSEPORT), so request i goes to server i mod n.
func (p *pool) apiFor(id int) *apiServer { return &p.apis[id%len(p.apis)] }

// NewSim assembles a fresh simulation of the setup (engines start empty).
// A deployment with DP ranks gets one engine core per rank; a MoE model's
// DP ranks step together (lockstep group); a disaggregated deployment gets
// one core per instance in each pool.
func (st *Setup) NewSim(opt Options) (*Sim, error) {
	var pools []*pool
	var all []*Core
	for _, d := range st.Pools {
		p := &pool{name: d.Pool, dep: d, router: newRouter(st.Router), apis: make([]apiServer, max(1, d.APIServers)*d.Instances)}
		n := d.DP * d.Instances
		var group *dpGroup
		for i := 0; i < n; i++ {
			if d.Lockstep && i%d.DP == 0 {
				group = &dpGroup{} // each instance's DP ranks step together, apart from the others'
			}
			pred, err := d.tmpl.New(d.Pred)
			if err != nil {
				return nil, err
			}
			c := &Core{
				ID: len(all), DPRank: i % d.DP, Pool: d.Pool,
				Sched: engine.NewScheduler(st.engineConfig(d)), Pred: pred, Pad: engine.NewPadTable(d.Capture),
				Async: d.Async, PP: d.PP, group: group,
			}
			if group != nil {
				group.cores = append(group.cores, c)
			}
			p.cores = append(p.cores, c)
			all = append(all, c)
		}
		pools = append(pools, p)
	}
	s := New(st.Plan, all, nil, st.Host, st.Client, opt)
	s.pools = pools
	if st.Replicas.Count > 1 && st.Disagg == nil {
		var err error
		if s.replicas, err = newReplicaSet(st); err != nil {
			return nil, err
		}
		if s.replicas.interval > 0 && s.replicas.metrics { // else nothing reads them
			s.scrapeAt = 0
		}
	}
	for _, d := range st.Pools {
		if s.maxModelLen == 0 || d.Engine.MaxModelLen < s.maxModelLen {
			s.maxModelLen = d.Engine.MaxModelLen
		}
	}
	if st.Disagg != nil {
		pre, dec := st.Pools[0], st.Pools[1]
		s.disagg = &disagg{
			link:     *st.Disagg,
			layers:   pre.Model.NumLayers,
			kvPerTok: float64(pre.Model.KVBytesPerTokenPerLayer(kvBytes(pre.Pred.KVDtype))) * float64(pre.Model.NumLayers),
			ranks:    pre.Pred.TP * pre.PP,
			decode:   dec,
		}
	}
	return s, nil
}

func kvBytes(dtype string) int {
	if dtype == "fp8" {
		return 1
	}
	return 2
}

func newRouter(name string) Router {
	if name == "round_robin" {
		return &RoundRobin{}
	}
	return LeastLoaded{}
}

// RoundRobin routes requests to cores in turn.
type RoundRobin struct{ next int }

// Route implements Router.
func (r *RoundRobin) Route(cores []*Core, _ *record) int {
	i := r.next % len(cores)
	r.next++
	return i
}

// disagg is the proxy flow of a disaggregated deployment: a request is
// first prefilled on a prefill instance with max_tokens = 1 (its output is
// discarded), its prompt's KV crosses the KV connector, then the decode
// instance admits it with that KV in place, computes the last prompt
// token, and generates every output token (the first one is the client's
// first token).
type disagg struct {
	link     Disagg
	layers   int
	kvPerTok float64 // KV bytes per token over all layers (whole model)
	ranks    int     // prefill ranks sending in parallel (TP × PP)
	decode   *Deployment
}

// transferNs prices moving the KV of prompt tokens: bytes per sending rank
// over the link bandwidth, plus one message latency per layer (vLLM's
// connectors send layer by layer).
func (d *disagg) transferNs(prompt int) int64 {
	bytes := float64(prompt) * d.kvPerTok / float64(d.ranks)
	return int64(bytes/d.link.BandwidthBytes*1e9) + int64(d.layers)*d.link.LatencyNs
}

// kvTransferDone is the end of a request's KV transfer.
type kvTransferDone struct{ r *record }

func (e kvTransferDone) handle(s *Sim) { s.startDecode(e.r) }

// prefillDone is called when a request's prefill instance has sampled its
// (discarded) token: the KV transfer starts; the prefill instance keeps
// the blocks until it ends.
func (s *Sim) prefillDone(r *record) {
	s.queue.push(s.now+s.disagg.transferNs(int(r.plan.PromptTokens)), kvTransferDone{r})
}

// startDecode frees the prefill copy of the KV and hands the request to a
// decode instance with its prompt's KV already computed there.
func (s *Sim) startDecode(r *record) {
	if r.core != nil {
		r.core.Sched.Release(&r.req)
	}
	if r.done {
		return
	}
	r.phase = phaseDecode
	r.out.TransferDoneNs = s.now
	r.api = s.pools[1].apiFor(int(r.plan.ID)) // the decode side's API server streams
	setEngineRequest(&r.req, r.plan)
	setEngineTurn(&r.req, r.plan)
	r.req.ExternalTokens, r.req.Data = int(r.plan.PromptTokens)-1, r
	s.route(s.pools[1], r)
}

// String names the pool for messages.
func (p *pool) String() string { return fmt.Sprintf("pool %q (%d cores)", p.name, len(p.cores)) }

// engineConfig is d's engine configuration, its block pool's first
// allocation sized to the plan (ExpectBlocks: every request's tokens in
// whole blocks; unknown, 0, for a Setup not built by Resolve).
func (st *Setup) engineConfig(d *Deployment) engine.Config {
	cfg := d.Engine
	if st.planRequests > 0 && cfg.BlockSize > 0 {
		cfg.ExpectBlocks = int(min(st.planTokens/int64(cfg.BlockSize)+st.planRequests, int64(cfg.NumBlocks)))
	}
	return cfg
}
