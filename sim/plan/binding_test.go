package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
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

// A saturated API server binds when the engines have room or the failing
// SLO is ITL (merged SSE chunks stretch it); with the engines busy and
// TPOT failing, compute binds and the API server is named beside it
// (newcomer11: the default deployment's capacity under
// ttft:p99<=500ms,tpot:mean<=50ms was 59.16 req/s with one API server
// and 59.15 with two, and the report named the API server).
func TestBindingLimitAPIServerOnlyWhenItBinds(t *testing.T) {
	probe := func(slo string, busy, merged float64) *Capacity {
		sg := Signals{Busy: map[string]float64{"": busy}, MergedChunks: merged}
		return &Capacity{X: 59.16, Above: &Probe{X: 60.02, Why: slo + " over", FailedSLO: slo, Signals: sg}}
	}
	assert.Equal(t, "compute (engines busy 100 % of the run; the API server also merged 32 % of output tokens into SSE chunks, which stretches ITL); above capacity (60.02): tpot:mean over",
		bindingLimit(probe("tpot:mean", 1.0, 0.32)))
	assert.Equal(t, "API server (32 % of output tokens in merged SSE chunks); above capacity (60.02): itl:p99 over",
		bindingLimit(probe("itl:p99", 1.0, 0.32)))
	assert.Equal(t, "API server (32 % of output tokens in merged SSE chunks); above capacity (60.02): tpot:mean over",
		bindingLimit(probe("tpot:mean", 0.6, 0.32)))
	assert.Equal(t, "compute (engines busy 95 % of the run); above capacity (60.02): ttft:p99 over",
		bindingLimit(probe("ttft:p99", 0.95, 0.05)))
	assert.Equal(t, "latency: the SLOs bind before the engines fill (busy 60 %); above capacity (60.02): ttft:p99 over",
		bindingLimit(probe("ttft:p99", 0.6, 0.05)))
}
