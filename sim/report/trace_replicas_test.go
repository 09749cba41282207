package report

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// newcomer2 G2: with replicas (or a pool of several instances) the trace
// named engines "engine 3 (DP rank 1, …)", and which vllm serve each
// belonged to was arithmetic. Each engine's process now says its replica
// (instance, in a disaggregated pool) when there are several.
func TestTraceNamesReplicasAndInstances(t *testing.T) {
	names := func(sc *scenarios.Scenario) []string {
		r := simulate(t, sc, 1e9, 0)
		var doc struct {
			TraceEvents []traceEvent `json:"traceEvents"`
		}
		require.NoError(t, json.Unmarshal(r.trace, &doc))
		var out []string
		for _, e := range doc.TraceEvents {
			if e.Name == "process_name" {
				out = append(out, e.Args["name"].(string))
			}
		}
		return out
	}
	sc := pressured(40)
	sc.Deployment.DataParallelSize = 2
	sc.Replicas = &scenarios.Replicas{Count: 2}
	assert.Equal(t, []string{
		"engine 0 (replica 0, DP rank 0, meta-llama/Llama-3.1-8B-Instruct)",
		"engine 1 (replica 0, DP rank 1, meta-llama/Llama-3.1-8B-Instruct)",
		"engine 2 (replica 1, DP rank 0, meta-llama/Llama-3.1-8B-Instruct)",
		"engine 3 (replica 1, DP rank 1, meta-llama/Llama-3.1-8B-Instruct)",
		"requests",
	}, names(sc))
	sc.Replicas = nil // one replica: unchanged
	assert.Equal(t, "engine 1 (DP rank 1, meta-llama/Llama-3.1-8B-Instruct)", names(sc)[1])

	dis, err := scenarios.Load("../../scenarios/examples/llama-3.1-70b-h200-2p1d.yaml")
	require.NoError(t, err)
	dis.Workload.Random.NumPrompts = 10
	assert.Equal(t, []string{
		"prefill engine 0 (instance 0, DP rank 0, meta-llama/Llama-3.1-70B-Instruct)",
		"prefill engine 1 (instance 1, DP rank 0, meta-llama/Llama-3.1-70B-Instruct)",
		"decode engine 2 (DP rank 0, meta-llama/Llama-3.1-70B-Instruct)",
		"requests",
	}, names(dis))
}
