package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// A router given without replicas routes nothing; it used to be ignored
// without a word (newcomer2 H1: `simulate --router prefix-cache`, also
// with --data-parallel-size 4, whose ranks vLLM's own balancer spreads).
// The CLI marks such a block CountImplied; a count given (--replicas 1,
// replicas: {count: 1}) is the single deployment, byte for byte.
func TestRouterWithOneReplicaIsNoted(t *testing.T) {
	const note = "replicas.router (--router) prefix-cache routes requests between replicas (replicas.count, --replicas), and this deployment has one, so it routes nothing; the 4 data-parallel ranks of a vllm serve are balanced by vLLM's own DP balancer (the scenario's top-level router key: least_loaded)"
	sc := defaultOn("h200-sxm")
	sc.Deployment.DataParallelSize = 4
	sc.Replicas = &scenarios.Replicas{Count: 1, Router: "prefix-cache", CountImplied: true}
	st, err := Resolve(sc)
	require.NoError(t, err)
	assert.Contains(t, st.Notes, note)

	sc.Deployment.DataParallelSize = 1
	st, err = Resolve(sc)
	require.NoError(t, err)
	assert.Contains(t, st.Notes, "replicas.router (--router) prefix-cache routes requests between replicas (replicas.count, --replicas), and this deployment has one, so it routes nothing")

	// a count given: no note; nor with two replicas
	for _, r := range []*scenarios.Replicas{{Count: 1}, {Count: 1, Router: "prefix-cache"}, {Count: 2, Router: "prefix-cache", CountImplied: true}} {
		sc.Replicas = r
		st, err = Resolve(sc)
		require.NoError(t, err)
		for _, n := range st.Notes {
			assert.NotContains(t, n, "routes nothing")
		}
	}
}
