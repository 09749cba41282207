package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newcomer2 G1: vLLM 0.11's /metrics has three more per-request
// histograms that its Grafana dashboard reads (the "Max Generation Token
// in Sequence Group" panel, request params): observed, like the token
// counts, once per finished request (OutputProcessor
// _update_stats_from_finished; ParentRequest.observe_finished_request
// with n = 1). bench serve sends max_tokens = the output length with
// ignore_eos, so a finished request's max_tokens and its generated tokens
// are equal; n is 1.
func TestMetricsRequestParams(t *testing.T) {
	r := simulate(t, pressured(600), 1e9, 0)
	fams := families(t, r.rec)
	var completed, completedOut uint64
	for _, q := range r.res.Requests {
		if !q.Failed {
			completed++
			completedOut += uint64(q.OutputTokens)
		}
	}
	require.Positive(t, completed)
	require.Less(t, completed, uint64(len(r.res.Requests)), "some requests time out: they are not observed")
	bounds := func(name string) []float64 {
		var b []float64
		for _, x := range fams[name].Metric[0].GetHistogram().GetBucket() {
			b = append(b, x.GetUpperBound())
		}
		return b
	}
	for _, name := range []string{MetricRequestParamsMaxTokens, MetricRequestMaxNumGenerationTokens} {
		require.Contains(t, fams, name)
		h := fams[name].Metric[0].GetHistogram()
		assert.Equal(t, completed, h.GetSampleCount(), name)
		assert.Equal(t, float64(completedOut), h.GetSampleSum(), name)
		assert.Equal(t, append(Buckets125(4096), math.Inf(1)), bounds(name), name)
		assert.Equal(t, help[name], fams[name].GetHelp())
	}
	n := fams[MetricRequestParamsN].Metric[0].GetHistogram()
	assert.Equal(t, completed, n.GetSampleCount())
	assert.Equal(t, float64(completed), n.GetSampleSum(), "n = 1 for every request")
	assert.Equal(t, []float64{1, 2, 5, 10, 20, math.Inf(1)}, bounds(MetricRequestParamsN))
	for _, b := range n.GetBucket() {
		assert.Equal(t, completed, b.GetCumulativeCount(), "every observation is 1")
	}
	assert.Equal(t, "Histogram of the n request parameter.", fams[MetricRequestParamsN].GetHelp())
	assert.Equal(t, "Histogram of the max_tokens request parameter.", fams[MetricRequestParamsMaxTokens].GetHelp())
	assert.Equal(t, "Histogram of maximum number of requested generation tokens.", fams[MetricRequestMaxNumGenerationTokens].GetHelp())
}
