package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
	"frontier/sim"
)

// pressured is a random run on a small KV cache with a client timeout, so
// that chunked prefill, preemption and aborts all happen.
func pressured(n int) *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model = "meta-llama/Llama-3.1-8B-Instruct"
	d.MaxNumSeqs = 64
	d.MaxNumBatchedTokens = 512
	d.MaxModelLen = 4096
	blocks := 900
	d.NumGPUBlocksOverride = &blocks
	timeout := 20.0
	return &scenarios.Scenario{
		Name: "pressured", Hardware: "h100-sxm", Deployment: &d,
		Workload: scenarios.Workload{
			Seed: 3, Dataset: "random",
			Random:   &scenarios.RandomData{NumPrompts: n, InputLen: 800, OutputLen: 300, RangeRatio: 0.5},
			Arrivals: scenarios.Arrivals{RequestRate: 40, Burstiness: 1, TimeoutS: &timeout},
		},
	}
}

type run struct {
	rec   *Recorder
	res   *sim.Result
	setup *sim.Setup
	trace []byte
}

// simulate runs sc with a recorder (interval ns) and a trace of at most
// traceMax requests.
func simulate(t testing.TB, sc *scenarios.Scenario, interval int64, traceMax int) run {
	t.Helper()
	require.NoError(t, sc.Validate())
	rec := NewRecorder(interval, nil)
	s, st, err := sim.Build(sc, sim.Options{Observer: rec})
	require.NoError(t, err)
	var buf bytes.Buffer
	rec.Attach(NewTrace(&buf, traceMax, st.Plan.NumRequests()))
	rec.Begin(s.EngineSpecs(), st.Model.ID)
	res := s.Run()
	require.NoError(t, rec.Finish(res.EndNs))
	return run{rec, res, st, buf.Bytes()}
}

// Per-interval increments add up to the run's totals, and every sampled
// instant conserves requests and KV blocks, under each scheduling policy
// (sjf preempts a request already in the step being scheduled).
func TestTimelineSumsAndInvariants(t *testing.T) {
	for _, policy := range []string{"fcfs", "sjf"} {
		t.Run(policy, func(t *testing.T) {
			sc := pressured(600)
			sc.Deployment.SchedulingPolicy = policy
			checkTimeline(t, simulate(t, sc, 1e9, 100))
		})
	}
}

func checkTimeline(t *testing.T, r run) {
	var out, prompt, preempt, preemptDone, completed, failed, firstTok int64
	for _, q := range r.res.Requests {
		out += int64(q.OutputTokens)
		preempt += int64(q.Preemptions)
		if !q.Failed {
			preemptDone += int64(q.Preemptions)
		}
		if q.FirstTokenNs >= 0 {
			firstTok++
			prompt += int64(q.PromptTokens)
		}
		if q.Failed {
			failed++
		} else {
			completed++
		}
	}
	require.Positive(t, preempt, "the run must preempt")
	require.Positive(t, failed, "the run must time requests out")
	var sum, engineSum Row
	rows := r.rec.Rows()
	require.NotEmpty(t, rows)
	for i, row := range rows {
		add := func(s *Row) {
			s.PromptTokens += row.PromptTokens
			s.GenerationTokens += row.GenerationTokens
			s.Preemptions += row.Preemptions
			s.Successes += row.Successes
		}
		if row.Engine == -1 {
			add(&sum)
		} else {
			add(&engineSum)
		}
		assert.Equal(t, row.Running+row.Waiting, int(row.Arrived-row.Finished-row.Aborted),
			"row %d (engine %d, gauges at %d ns): running + waiting = arrived − finished − aborted", i, row.Engine, row.GaugeNs)
		assert.InDelta(t, float64(row.KVBlocksHeld), row.KVUsage*float64(row.KVBlocks-1), 1e-6,
			"row %d: usage × (blocks − 1) = blocks held", i)
		assert.LessOrEqual(t, row.KVBlocksHeld, row.KVBlocks-1)
		assert.GreaterOrEqual(t, row.EndNs, row.StartNs)
	}
	assert.Equal(t, engineSum, sum, "the total rows add up the engines'")
	for _, s := range []Row{sum, engineSum} {
		assert.Equal(t, out, s.GenerationTokens, "output tokens")
		assert.Equal(t, prompt, s.PromptTokens, "prompt tokens (counted at the first token)")
		// vLLM reports a preemption with the request's next output
		// (TestPreemptionsCountWhenTheRequestNextEmits): every preemption
		// of a completed request, not those of one that timed out first.
		assert.GreaterOrEqual(t, s.Preemptions, preemptDone, "preemptions of completed requests")
		assert.LessOrEqual(t, s.Preemptions, preempt, "preemptions")
		assert.Equal(t, completed, s.Successes, "successes")
	}
	last := rows[len(rows)-1]
	assert.Equal(t, r.res.EndNs, last.EndNs, "the timeline ends with the run")
	assert.Zero(t, last.Running+last.Waiting, "nothing left in the engine")
	assert.Equal(t, int64(len(r.res.Requests)), last.Arrived, "every request reached the engine")
	assert.Equal(t, int64(len(rows)/2), (r.res.EndNs+int64(1e9)-1)/int64(1e9), "one row per second and engine, plus the total")
}

// families parses the exposition with the Prometheus text parser.
func families(t *testing.T, r *Recorder) map[string]*dto.MetricFamily {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, r.WriteMetrics(&buf))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&buf)
	require.NoError(t, err, "exposition:\n%s", buf.String())
	return fams
}

// The .prom parses with expfmt, carries vLLM's labels and buckets, and
// each per-request histogram counts the requests vLLM would record: E2E,
// queue, prefill, decode, inference and the token-count histograms only
// completed requests (aborted ones are dropped by vLLM's output processor);
// TTFT every request that got a first token, completed or later aborted;
// ITL every token after a request's first.
func TestMetricsParseAndCount(t *testing.T) {
	r := simulate(t, pressured(600), 1e9, 0)
	fams := families(t, r.rec)
	var completed, completedOut, firstTok, itl, gen, prompt, preempt uint64
	for _, q := range r.res.Requests {
		gen += uint64(q.OutputTokens)
		preempt += uint64(q.Preemptions)
		if q.FirstTokenNs >= 0 {
			firstTok++
			prompt += uint64(q.PromptTokens)
			itl += uint64(q.OutputTokens - 1)
		}
		if !q.Failed {
			completed++
			completedOut += uint64(q.OutputTokens)
		}
	}
	count := func(name string) uint64 {
		f := fams[name]
		require.NotNil(t, f, name)
		require.Equal(t, dto.MetricType_HISTOGRAM, f.GetType(), name)
		require.Len(t, f.Metric, 1)
		h := f.Metric[0].GetHistogram()
		b := h.GetBucket()
		require.NotEmpty(t, b)
		assert.LessOrEqual(t, b[len(b)-1].GetCumulativeCount(), h.GetSampleCount(), name)
		return h.GetSampleCount()
	}
	for _, n := range []string{MetricE2E, MetricQueueTime, MetricPrefillTime, MetricDecodeTime, MetricInferenceTime,
		MetricRequestPromptTokens, MetricRequestGenerationTokens} {
		assert.Equal(t, completed, count(n), n)
	}
	assert.Equal(t, firstTok, count(MetricTTFT))
	assert.Equal(t, itl, count(MetricITL))
	assert.Equal(t, itl, count(MetricTPOTDeprecated))
	value := func(name string) float64 {
		f := fams[name]
		require.NotNil(t, f, name)
		return f.Metric[0].GetCounter().GetValue()
	}
	assert.Equal(t, float64(gen), value(MetricGenerationTokens))
	assert.Equal(t, float64(prompt), value(MetricPromptTokens))
	assert.Equal(t, float64(preempt), value(MetricPreemptions))
	iter := fams[MetricIterationTokens].Metric[0].GetHistogram()
	assert.Equal(t, float64(gen+prompt), iter.GetSampleSum(), "iteration tokens: prompt + generation tokens of each step")
	assert.Equal(t, float64(completedOut), fams[MetricRequestGenerationTokens].Metric[0].GetHistogram().GetSampleSum(),
		"generation tokens of completed requests")
	// labels and buckets
	m := fams[MetricTTFT].Metric[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	assert.Equal(t, map[string]string{"engine": "0", "model_name": "meta-llama/Llama-3.1-8B-Instruct"}, labels)
	var bounds []float64
	for _, b := range m.GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	assert.Equal(t, append(append([]float64{}, BucketsTTFT...), math.Inf(1)), bounds)
	succ := fams[MetricSuccess]
	require.Len(t, succ.Metric, 3, "stop, length, abort")
	assert.Equal(t, float64(completed), succ.Metric[1].GetCounter().GetValue())
	assert.Equal(t, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}, Buckets125(4096))
	for _, n := range []string{MetricRunning, MetricWaiting, MetricKVUsage} {
		assert.Zero(t, fams[n].Metric[0].GetGauge().GetValue(), "%s at the end", n)
	}
}

// One request alone, worked by hand from its records: the server-side
// TTFT stops where the engine produced the first token, before the API
// server streams it (one chunk of APITokenNs) and the client receives it
// (StreamPerTokenNs later); queue + prefill + decode = inference.
func TestMetricsOneRequestByHand(t *testing.T) {
	sc := pressured(1)
	r := simulate(t, sc, 1e9, 0)
	q := r.res.Requests[0]
	require.False(t, q.Failed)
	fams := families(t, r.rec)
	sum := func(n string) float64 { return fams[n].Metric[0].GetHistogram().GetSampleSum() }
	host := r.setup.Host
	clientGap := float64(int64(host.APITokenNs)+int64(host.StreamPerTokenNs)) / 1e9
	assert.InDelta(t, float64(q.TTFTNs())/1e9-clientGap, sum(MetricTTFT), 1e-9)
	assert.InDelta(t, float64(q.E2ENs())/1e9-clientGap, sum(MetricE2E), 1e-9)
	assert.InDelta(t, sum(MetricInferenceTime), sum(MetricPrefillTime)+sum(MetricDecodeTime), 1e-9)
	assert.InDelta(t, float64(q.FinishNs-q.FirstTokenNs)/1e9, sum(MetricDecodeTime), 1e-9, "an idle API server keeps the gaps")
	assert.Equal(t, float64(q.PromptTokens), sum(MetricRequestPromptTokens))
	assert.Equal(t, float64(q.OutputTokens), sum(MetricRequestGenerationTokens))
	assert.True(t, strings.HasPrefix(string(r.trace), `{"traceEvents":[`))
}
