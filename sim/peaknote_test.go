package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"frontier/predictor"
)

// PeakNote fires when bench serve's peak output token throughput is within
// 5 % of what the streaming API server processes can send: one chunk per
// api_token_ns each (the committed fit: 132,037.8 ns, 7,573.6 chunks/s).
func TestPeakNote(t *testing.T) {
	host := predictor.HostModel{APITokenNs: 132037.8095693518}
	setup := func(servers, instances int) *Setup {
		return &Setup{Deployment: &Deployment{APIServers: servers, Instances: instances}, Host: host}
	}
	one := "peak output token throughput (7574 tok/s) is the API server's ceiling: 1 API server process streams one SSE chunk per 0.132 ms (~7574 chunks/s) " +
		"and bench serve's peak counts chunks, not tokens, so it shows the front end, not the engine; --api-server-count raises the ceiling (vLLM's default: the DP size)"
	tests := []struct {
		name               string
		servers, instances int
		peak               float64
		want               string
	}{
		{"at one process's limit", 1, 1, 7574, one},
		// 0.95 × 7573.6 = 7194.9 chunks/s: the lowest peak that counts.
		{"just within 5 %", 1, 1, 7195, "peak output token throughput (7195 tok/s) is the API server's ceiling: 1 API server process streams one SSE chunk per 0.132 ms (~7574 chunks/s) " +
			"and bench serve's peak counts chunks, not tokens, so it shows the front end, not the engine; --api-server-count raises the ceiling (vLLM's default: the DP size)"},
		{"below 95 %", 1, 1, 7194, ""},
		{"two processes: twice the limit", 2, 1, 7574, ""},
		// 4 replicas (instances) of one process each: 30,294 chunks/s.
		{"four replicas at their limit", 1, 4, 30295, "peak output token throughput (30295 tok/s) is the API servers' ceiling: 4 API server processes each stream one SSE chunk per 0.132 ms (~7574 chunks/s) " +
			"and bench serve's peak counts chunks, not tokens, so it shows the front end, not the engine; --api-server-count raises the ceiling (vLLM's default: the DP size)"},
		{"four replicas at one process's limit", 1, 4, 7574, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PeakNote(setup(tc.servers, tc.instances), &Result{MaxOutputTokensPerS: tc.peak}))
		})
	}
	assert.Empty(t, PeakNote(&Setup{Deployment: &Deployment{APIServers: 1, Instances: 1}}, &Result{MaxOutputTokensPerS: 1e9}), "no host model, no ceiling")
}
