package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
	"frontier/sim"
)

// A disaggregated deployment's binding pool is the one its failing SLO
// measures: TTFT is the prefill pool's queue, prefill and KV transfer;
// TPOT and ITL are decode steps. A decode engine steps whenever it holds a
// request, so its busy share is near 100 % long before it limits anything
// (newcomer2 B1: 2P1D Llama-3.1-70B on H200 at 2.56 req/s failed ttft:p99
// with prefill 63 % busy and TPOT 15 ms of a 30 ms SLO, and the report
// named the decode pool).
func TestBindingLimitDisaggregatedNamesThePoolOfTheFailingSLO(t *testing.T) {
	busy := Signals{Busy: map[string]float64{"prefill": 0.63, "decode": 1.0}}
	above := func(slo, why string) *Capacity {
		return &Capacity{X: 2.53, Above: &Probe{X: 2.56, Why: why, FailedSLO: slo, Signals: busy}}
	}
	assert.Equal(t, "prefill pool (ttft:p99 fails: TTFT is the prefill pool's queue, prefill and KV transfer; busy: prefill 63 %, decode 100 %, and a decode engine steps whenever it holds a request); above capacity (2.56): ttft:p99 2016.96 ms > 2000 ms",
		bindingLimit(above("ttft:p99", "ttft:p99 2016.96 ms > 2000 ms")))
	assert.Equal(t, "decode pool (tpot:mean fails: TPOT is the decode pool's steps; busy: prefill 63 %, decode 100 %, and a decode engine steps whenever it holds a request); above capacity (2.56): tpot:mean 31.00 ms > 30 ms",
		bindingLimit(above("tpot:mean", "tpot:mean 31.00 ms > 30 ms")))
	assert.Contains(t, bindingLimit(above("itl:p99", "itl:p99 90.00 ms > 80 ms")), "decode pool (itl:p99 fails: ITL is the decode pool's steps;")
	// no SLO failed (the queue kept growing) or E2E (both pools): the
	// prefill pool when its engines are nearly always busy (its busy
	// share is a utilisation: a prefill engine idles without prompts),
	// else the decode pool
	growing := above("", "still growing after 4000 requests: …")
	growing.Above.Signals = Signals{Busy: map[string]float64{"prefill": 0.97, "decode": 1.0}}
	assert.Equal(t, "prefill pool (busy: prefill 97 %, decode 100 %, and a decode engine steps whenever it holds a request); above capacity (2.56): still growing after 4000 requests: …", bindingLimit(growing))
	e2e := above("e2el:p99", "e2el:p99 9000.00 ms > 8000 ms")
	assert.Equal(t, "decode pool (busy: prefill 63 %, decode 100 %, and a decode engine steps whenever it holds a request); above capacity (2.56): e2el:p99 9000.00 ms > 8000 ms", bindingLimit(e2e))
}

// The API server binds when the failing load, probed again with twice
// its processes, holds; when it still fails, the other limit is named
// and a loaded API server beside it; without that probe (or when it was
// refused) the merged-chunk signal decides as before. Signals alone
// named the wrong limit both ways (newcomer11: the default capacity was
// 59.16 req/s with one or two API servers, and it said API server;
// attack12: b200 Llama-2-7b under ttft:p99<=40ms rose 14 % with two, and
// it said compute).
func TestBindingLimitAPIServerByCounterfactual(t *testing.T) {
	capacity := func(slo string, busy, merged, api float64, more *Probe) *Capacity {
		sg := Signals{Busy: map[string]float64{"": busy}, MergedChunks: merged, APIBusy: api}
		return &Capacity{X: 59.16, Above: &Probe{X: 60.02, Why: slo + " over", FailedSLO: slo, Signals: sg}, MoreAPI: more}
	}
	held := &Probe{X: 60.02, Held: true}
	failed := &Probe{X: 60.02, Why: "tpot:mean 51.98 ms > 50 ms"}
	assert.Equal(t, "API server (busy 87 % of the run, 9 % of output tokens in merged SSE chunks; with twice its processes 60.02 holds); above capacity (60.02): ttft:p99 over",
		bindingLimit(capacity("ttft:p99", 1.0, 0.09, 0.87, held)))
	assert.Equal(t, "compute (engines busy 100 % of the run; the API server is loaded too (busy 66 % of the run, 32 % of output tokens in merged SSE chunks), "+
		"but with twice its processes 60.02 still fails: tpot:mean 51.98 ms > 50 ms); above capacity (60.02): tpot:mean over",
		bindingLimit(capacity("tpot:mean", 1.0, 0.32, 0.66, failed)))
	assert.Equal(t, "compute (engines busy 100 % of the run); above capacity (60.02): tpot:mean over",
		bindingLimit(capacity("tpot:mean", 1.0, 0.05, 0.3, failed)), "an unloaded API server is not named")
	assert.Equal(t, "latency: the SLOs bind before the engines fill (busy 79 %; the API server is loaded too (busy 93 % of the run, 29 % of output tokens in merged SSE chunks), "+
		"but with twice its processes 60.02 still fails: tpot:mean 51.98 ms > 50 ms); above capacity (60.02): itl:p99 over",
		bindingLimit(capacity("itl:p99", 0.79, 0.29, 0.93, failed)))
	for _, more := range []*Probe{nil, {X: 60.02, Refused: "api_server_count 64 is at the most allowed"}} {
		assert.Equal(t, "API server (32 % of output tokens in merged SSE chunks); above capacity (60.02): tpot:mean over",
			bindingLimit(capacity("tpot:mean", 1.0, 0.32, 0.66, more)), "no counterfactual: the signal decides")
	}
}

// The search probes its lowest failing load again with MoreAPI, once,
// as long as that probe ran, when its API server was loaded: the
// synthetic deployment (40 req/s by construction, its API server marked
// 90 % busy) fails 40.5 req/s with either prober, so compute binds; with
// its API server idle there is no such probe.
func TestSearchProbesMoreAPIAtTheFailingLoad(t *testing.T) {
	slo, err := ParseSLO("ttft:p99<=100ms")
	require.NoError(t, err)
	synthetic := syntheticProber(t)
	loaded := func(x float64, seed int64, n int) *Outcome {
		o := synthetic(x, seed, n)
		o.Signals.APIBusy = 0.9
		return o
	}
	type ask struct {
		x float64
		n int
	}
	var asked []ask
	more := func(x float64, seed int64, n int) *Outcome {
		asked = append(asked, ask{x, n})
		return loaded(x, seed, n)
	}
	s := &Search{Probe: loaded, SLOs: []SLO{slo}, Precision: 0.02, Seeds: []int64{0}, Requests: 500, Lengthen: 2, Jobs: 1, MoreAPI: more}
	c := s.Run()
	require.NotNil(t, c.Above)
	require.NotNil(t, c.MoreAPI)
	require.NotEmpty(t, asked)
	assert.Equal(t, ask{c.Above.X, c.Above.Requests}, asked[0], "the failing load, as long as it ran")
	for _, a := range asked {
		assert.Equal(t, c.Above.X, a.x)
	}
	assert.False(t, c.MoreAPI.Held)
	assert.True(t, strings.HasPrefix(c.Limit, "compute (engines busy"), c.Limit)
	assert.Contains(t, c.Limit, "the API server is loaded too (busy 90 % of the run")

	asked = nil
	s.Probe = synthetic
	c = s.Run()
	assert.Nil(t, c.MoreAPI, "an idle API server is not tested")
	assert.Empty(t, asked)
}

// apiBusy by hand: one API server over 1 ms; request 0 sent with a
// 50-token prompt (intake 1,000 + 50 × 10 ns) and streamed 4 chunks
// (its first token and 3 gaps; a token merged into a chunk costs
// nothing), request 1 refused and request 2 never sent (no work):
// (1,500 + 4 × 100) / 1,000,000 = 0.0019.
func TestAPIBusyByHand(t *testing.T) {
	itl := sim.NewHistogram()
	itl.AddN(5e3, 3)
	res := &sim.Result{APIServers: 1, EndNs: 1e6, ITL: itl, Requests: []sim.RequestRecord{
		{SendNs: 0, FirstTokenNs: 10, PromptTokens: 50, OutputTokens: 6},
		{SendNs: 0, FirstTokenNs: -1, PromptTokens: 9000, Rejected: true},
		{SendNs: -1, FirstTokenNs: -1, PromptTokens: 70},
	}}
	host := predictor.HostModel{APIRequestNs: 1000, TokenizePerTokenNs: 10, APITokenNs: 100}
	assert.InDelta(t, 0.0019, apiBusy(res, host), 1e-15)
	res.APIServers = 2
	assert.InDelta(t, 0.00095, apiBusy(res, host), 1e-15)
}
