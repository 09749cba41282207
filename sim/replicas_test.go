package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
	"frontier/scenarios"
	"frontier/sim/engine"
	"frontier/sim/router"
	"frontier/sim/workload"
)

// twoReplicas is 2 replicas of one engine core each (10 KV blocks of 16
// tokens, 9 usable beside vLLM's null block; budget 256, steps of 10 ms,
// no front-end time, synchronous scheduling) behind policy, metrics
// refreshed every interval ns.
func twoReplicas(t *testing.T, policy string, interval int64, reqs []workload.Request) *Sim {
	t.Helper()
	var cores []*Core
	for i := 0; i < 2; i++ {
		cores = append(cores, &Core{ID: i, Pred: fixedPricer{},
			Sched: engine.NewScheduler(engine.Config{MaxNumSeqs: 8, MaxNumBatchedTokens: 256, MaxModelLen: 4096, BlockSize: 16, NumBlocks: 10})})
	}
	plan := &workload.Plan{Stages: []workload.Stage{{Requests: reqs}}}
	s := New(plan, cores, LeastLoaded{}, predictor.HostModel{}, ClientConfig{}, Options{})
	s.pools[0].apis = make([]apiServer, 2)
	p, err := router.New(policy, router.Config{Replicas: 2})
	require.NoError(t, err)
	s.replicas = newRouterView(p, 2, 1, 1, 10, interval, "least_loaded")
	if interval > 0 {
		s.scrapeAt = 0
	}
	return s
}

// The router reads reported metrics as of its last refresh, worked by
// hand with the kv-usage router: A (64-token prompt) arrives at 0 and
// goes to replica 0 (all idle; ties to the lower index); B (16 tokens) at
// 5 ms goes to replica 1 (usage still 0, 0; fewer in flight). A holds 5
// of its replica's 9 blocks from 10 ms (prompt 4, its 65th token a 5th),
// B 2 from 15 ms. C arrives at 95 ms:
//   - metrics read live, or refreshed every 50 ms (last at 50 ms): usage
//     5/9 and 2/9, C goes to replica 1;
//   - refreshed every 100 ms (last at 0, all idle): usage 0 and 0, in
//     flight 1 and 1, C goes to replica 0, the busier one.
func TestRouterSeesStaleMetrics(t *testing.T) {
	reqs := []workload.Request{
		{ID: 0, PromptTokens: 64, OutputTokens: 40, ContentKey: 1},
		{ID: 1, At: 5 * ms, PromptTokens: 16, OutputTokens: 40, ContentKey: 2},
		{ID: 2, At: 95 * ms, PromptTokens: 16, OutputTokens: 4, ContentKey: 3},
	}
	for _, c := range []struct {
		interval int64
		want     []int
	}{{0, []int{0, 1, 1}}, {50 * ms, []int{0, 1, 1}}, {100 * ms, []int{0, 1, 0}}} {
		res := twoReplicas(t, "kv-usage", c.interval, reqs).Run()
		var got []int
		for _, r := range res.Requests {
			got = append(got, int(r.Replica))
			assert.Equal(t, r.Replica, r.Engine, "one core per replica")
		}
		assert.Equal(t, c.want, got, "refresh every %d ms", c.interval/ms)
	}
}

// The router's own history is always current: least-requests counts a
// request in flight from its send to its last token. A and B at 0 go to
// replicas 0 and 1; A finishes at 20 ms (2 tokens), so C at 25 ms goes to
// replica 0, whatever the refresh interval.
func TestRouterHistoryIsCurrent(t *testing.T) {
	reqs := []workload.Request{
		{ID: 0, PromptTokens: 16, OutputTokens: 2, ContentKey: 1},
		{ID: 1, PromptTokens: 16, OutputTokens: 40, ContentKey: 2},
		{ID: 2, At: 25 * ms, PromptTokens: 16, OutputTokens: 2, ContentKey: 3},
	}
	res := twoReplicas(t, "least-requests", 1000*ms, reqs).Run()
	assert.Equal(t, int64(20*ms), res.Requests[0].FinishNs)
	assert.Equal(t, []int{0, 1, 0}, []int{int(res.Requests[0].Replica), int(res.Requests[1].Replica), int(res.Requests[2].Replica)})
}

// A replicated run of every router: 4 replicas × DP 2 of Llama-3.1-8B on
// the stress workload (preemption, timeouts). Every request ends completed
// with all its tokens or failed at the timeout; each ran on an engine of
// its replica; blocks all return; the same inputs give the same records.
func TestReplicaRunsKeepInvariants(t *testing.T) {
	for _, name := range []string{"round-robin", "least-requests", "prefix-cache", "kv-usage", "queue", "weighted"} {
		t.Run(name, func(t *testing.T) {
			run := func() ([]RequestRecord, *Sim) {
				sc := stressScenario()
				sc.Deployment.DataParallelSize = 2
				sc.Workload.Random.NumPrompts = 600
				sc.Workload.Arrivals.RequestRate = 60
				sc.Replicas = &scenarios.Replicas{Count: 4, Router: name}
				require.NoError(t, sc.Validate())
				s, _, err := Build(sc, Options{})
				require.NoError(t, err)
				return s.Run().Requests, s
			}
			recs, s := run()
			per := make([]int, 4)
			for _, r := range recs {
				per[r.Replica]++
				assert.Equal(t, r.Replica, r.Engine/2, "request %d ran on engine %d of replica %d", r.ID, r.Engine, r.Replica)
				if !r.Failed {
					assert.Positive(t, r.TTFTNs())
				}
			}
			for _, c := range s.cores {
				assert.Zero(t, c.Sched.Pool.NumUsed())
			}
			for i, n := range per {
				assert.Positive(t, n, "replica %d got no request", i)
			}
			again, _ := run()
			assert.Equal(t, recs, again)
		})
	}
}

// sessionTrace writes a chat trace: n sessions of turns turns, all
// sharing a 320-token system prompt; each turn's prompt is the
// conversation so far plus a 200-token message, replies of 100 tokens,
// 2 s of thinking; session i starts at 0.25·i s.
func sessionTrace(t *testing.T, n, turns int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("session_id,turn,think_s,arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n")
	for s := 1; s <= n; s++ {
		prompt := 520
		for k := 1; k <= turns; k++ {
			if k == 1 {
				fmt.Fprintf(&b, "s%d,1,,%g,%d,100,sys,320\n", s, 0.25*float64(s-1), prompt)
			} else {
				fmt.Fprintf(&b, "s%d,%d,2,,%d,100,,\n", s, k, prompt)
			}
			prompt += 100 + 200
		}
	}
	path := filepath.Join(t.TempDir(), "chat.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// On multi-turn chat (40 conversations × 4 turns sharing a system prompt,
// 4 replicas of 1,200 KV blocks, a light load): session affinity keeps a
// conversation on one replica and hits the prefix cache far more than
// round-robin, which sends each turn elsewhere. Pure prefix-cache routing
// sends every conversation to the replica that first saw the system
// prompt (the longest match is always there): one replica does all the
// work and its cache thrashes. When written: hit rates round-robin 0.500,
// session 0.779, prefix-cache 0.454 (160 of 160 requests on replica 0);
// the weighted router (llm-d's default profile) put 152 on replica 0 and
// hit 0.488: with empty queues its queue scorer rates every replica 1,
// and its KV scorer does not outweigh the system prompt's 5 of 8 blocks.
func TestSessionRoutersFollowTheConversation(t *testing.T) {
	trace := sessionTrace(t, 40, 4)
	hit := map[string]float64{}
	perReplica := map[string][]int{}
	for _, name := range []string{"round-robin", "session", "prefix-cache", "weighted"} {
		sc := stressScenario()
		sc.Workload = scenarios.Workload{Dataset: "trace", Trace: &scenarios.TraceData{Path: trace}, Arrivals: scenarios.DefaultArrivals()}
		sc.Replicas = &scenarios.Replicas{Count: 4, Router: name}
		require.NoError(t, sc.Validate())
		s, _, err := Build(sc, Options{})
		require.NoError(t, err)
		res := s.Run()
		where := map[int]map[int]bool{}
		var cached, prompt int
		per := make([]int, 4)
		for _, r := range res.Requests {
			require.False(t, r.Failed)
			if where[int(r.Session)] == nil {
				where[int(r.Session)] = map[int]bool{}
			}
			where[int(r.Session)][int(r.Replica)] = true
			cached += int(r.CachedTokens)
			prompt += int(r.PromptTokens)
			per[r.Replica]++
		}
		hit[name], perReplica[name] = float64(cached)/float64(prompt), per
		if name == "session" {
			for sess, reps := range where {
				assert.Len(t, reps, 1, "session %d ran on replicas %v", sess, reps)
			}
		}
	}
	t.Logf("prefix cache hit rate %v; requests per replica %v", hit, perReplica)
	assert.Greater(t, hit["session"], hit["round-robin"]+0.2)
	assert.Equal(t, []int{160, 0, 0, 0}, perReplica["prefix-cache"])
	assert.Equal(t, []int{40, 40, 40, 40}, perReplica["round-robin"])
}

// BenchmarkReplicas32 simulates 32 replicas of Llama-3.1-8B on H200
// serving 10^5 random requests (512 in / 128 out) at 600 req/s behind
// each router: what routing adds to a run is the difference from
// round-robin.
func BenchmarkReplicas32(b *testing.B) {
	for _, name := range router.Names() {
		if name == "session" {
			continue // needs a session workload
		}
		b.Run(name, func(b *testing.B) {
			d := scenarios.DefaultDeployment()
			d.Model = "meta-llama/Llama-3.1-8B-Instruct"
			a := scenarios.DefaultArrivals()
			a.RequestRate = 600
			sc := &scenarios.Scenario{Hardware: "h200-sxm", Deployment: &d, Replicas: &scenarios.Replicas{Count: 32, Router: name},
				Workload: scenarios.Workload{Dataset: "random", Arrivals: a,
					Random: &scenarios.RandomData{NumPrompts: 100_000, InputLen: 512, OutputLen: 128}}}
			benchRuns(b, sc, 100_000)
		})
	}
}

// Each replica is its own vllm serve: a MoE model's DP ranks step in
// lockstep within their replica only. 2 replicas of Qwen3-30B-A3B at DP 2
// with expert parallelism make two lockstep groups of two engines.
func TestReplicasHaveTheirOwnLockstepGroups(t *testing.T) {
	sc, err := scenarios.Load("../scenarios/examples/qwen3-30b-a3b-h200-dp8-ep.yaml")
	require.NoError(t, err)
	sc.Deployment.DataParallelSize = 2
	sc.Workload.Random.NumPrompts = 40
	sc.Replicas = &scenarios.Replicas{Count: 2}
	require.NoError(t, sc.Validate())
	s, _, err := Build(sc, Options{})
	require.NoError(t, err)
	require.Len(t, s.cores, 4)
	assert.NotNil(t, s.cores[0].group)
	assert.Same(t, s.cores[0].group, s.cores[1].group)
	assert.Same(t, s.cores[2].group, s.cores[3].group)
	assert.NotSame(t, s.cores[0].group, s.cores[2].group)
	for _, r := range s.Run().Requests {
		assert.False(t, r.Failed)
		assert.Equal(t, r.Replica, r.Engine/2)
	}
}

// The replicas' metrics are refreshed only for a router that reads them
// (router.ReadsMetrics): on main a round-robin or prefix-cache router
// still scraped every engine at every refresh boundary, or at every
// request when live.
func TestNoScrapesForARouterBlindToMetrics(t *testing.T) {
	for name, reads := range map[string]bool{"round-robin": false, "prefix-cache": false, "least-requests": false, "queue": true, "weighted": true} {
		sc := defaultOn("h200-sxm")
		sc.Workload.Random.NumPrompts = 8
		sc.Replicas = &scenarios.Replicas{Count: 2, Router: name}
		s, _, err := Build(sc, Options{})
		require.NoError(t, err)
		assert.Equal(t, reads, s.replicas.metrics, name)
		if reads {
			assert.Zero(t, s.scrapeAt, name)
		} else {
			assert.Equal(t, int64(math.MaxInt64), s.scrapeAt, name)
		}
		s.Run()
	}
}

// Each replica's API servers share its requests whatever the router
// does: with round-robin over 2 replicas of 2 API servers each, replica r
// gets the requests with IDs ≡ r mod 2, which by ID alone all went to one
// of its two servers (attack13: --api-server-count 2 then changed
// nothing). Every server of both replicas takes requests in now.
func TestReplicaAPIServersShareItsRequests(t *testing.T) {
	sc, err := scenarios.Load("../scenarios/examples/llama-3.1-8b-h200-random.yaml")
	require.NoError(t, err)
	sc.Workload.Random.NumPrompts = 40
	two := 2
	sc.Deployment.APIServerCount = &two
	sc.Replicas = &scenarios.Replicas{Count: 2, Router: "round-robin"}
	require.NoError(t, sc.Validate())
	s, _, err := Build(sc, Options{})
	require.NoError(t, err)
	require.Len(t, s.pools[0].apis, 4)
	for _, r := range s.Run().Requests {
		assert.False(t, r.Failed)
		assert.Equal(t, r.ID%2, r.Replica, "round-robin")
	}
	for i, a := range s.pools[0].apis {
		assert.Positive(t, a.free, "API server %d (replica %d) took no request", i, i/2)
	}
}
