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
