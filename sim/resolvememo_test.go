package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// A deployment resolved again from the memo is the one resolved afresh,
// field for field, with the same notes in the same order; each Resolve
// gets its own copy (Resolve sets a disaggregated pool's name and
// instances on it); a deployment read from a file is not kept.
func TestDeploymentMemoIsResolve(t *testing.T) {
	ds := scenarios.DefaultDeployment()
	ds.Model, ds.TensorParallelSize, ds.PipelineParallelSize = "deepseek-ai/DeepSeek-V2-Lite", 2, 2
	pre, dec := scenarios.DefaultDeployment(), scenarios.DefaultDeployment()
	pre.Model, dec.Model, dec.KVCacheDtype = "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "fp8"
	disagg := millionScenario(50)
	disagg.Deployment = nil
	disagg.Disaggregation = &scenarios.Disaggregation{Prefill: scenarios.Pool{Instances: 1, Deployment: pre}, Decode: scenarios.Pool{Instances: 2, Deployment: dec}}
	moe := millionScenario(50)
	moe.Deployment = &ds
	local := millionScenario(50)
	ld := *local.Deployment
	ld.Model = "../profiles/models/llama-3.1-8b-instruct/config.json"
	local.Deployment = &ld
	for _, sc := range []*scenarios.Scenario{millionScenario(50), moe, disagg, local} {
		deploymentMemo.mu.Lock()
		deploymentMemo.m = map[deploymentKey]*resolvedDeployment{}
		deploymentMemo.mu.Unlock()
		fresh, err := Resolve(sc)
		require.NoError(t, err)
		kept := len(deploymentMemo.m)
		again, err := Resolve(sc)
		require.NoError(t, err)
		if sc == local {
			assert.Zero(t, kept, "a model read from a file is resolved afresh")
			continue
		}
		assert.Equal(t, len(fresh.Pools), kept, "one entry a pool")
		assert.Equal(t, fresh.Notes, again.Notes)
		require.Len(t, again.Pools, len(fresh.Pools))
		for i := range fresh.Pools {
			assert.NotSame(t, fresh.Pools[i], again.Pools[i], "each Resolve its own copy")
			assert.Equal(t, *fresh.Pools[i], *again.Pools[i])
		}
		assert.Equal(t, *fresh.Deployment, *again.Deployment)
	}
	assert.Equal(t, 2, deploymentMemoInstances(t, disagg), "the decode pool's instances, set on its copy")
}

// deploymentMemoInstances resolves sc from the memo after another
// Resolve from the memo changed the pools it was handed.
func deploymentMemoInstances(t *testing.T, sc *scenarios.Scenario) int {
	_, err := Resolve(sc) // kept
	require.NoError(t, err)
	st, err := Resolve(sc)
	require.NoError(t, err)
	st.Pools[1].Instances = 99
	st.Pools[1].Engine.NumBlocks = 1
	st, err = Resolve(sc)
	require.NoError(t, err)
	assert.Greater(t, st.Pools[1].Engine.NumBlocks, 1)
	return st.Pools[1].Instances
}
