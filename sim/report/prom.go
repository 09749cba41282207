package report

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// help texts are vLLM 0.11.0's documentation strings (loggers.py).
var help = map[string]string{
	MetricRunning:                       "Number of requests in model execution batches.",
	MetricWaiting:                       "Number of requests waiting to be processed.",
	MetricKVUsage:                       "KV-cache usage. 1 means 100 percent usage.",
	MetricPromptTokens:                  "Number of prefill tokens processed.",
	MetricGenerationTokens:              "Number of generation tokens processed.",
	MetricPreemptions:                   "Cumulative number of preemption from the engine.",
	MetricPrefixQueries:                 "Prefix cache queries, in terms of number of queried tokens.",
	MetricPrefixHits:                    "Prefix cache hits, in terms of number of cached tokens.",
	MetricSuccess:                       "Count of successfully processed requests.",
	MetricTTFT:                          "Histogram of time to first token in seconds.",
	MetricITL:                           "Histogram of inter-token latency in seconds.",
	MetricTPOTDeprecated:                "Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
	MetricE2E:                           "Histogram of e2e request latency in seconds.",
	MetricQueueTime:                     "Histogram of time spent in WAITING phase for request.",
	MetricInferenceTime:                 "Histogram of time spent in RUNNING phase for request.",
	MetricPrefillTime:                   "Histogram of time spent in PREFILL phase for request.",
	MetricDecodeTime:                    "Histogram of time spent in DECODE phase for request.",
	MetricRequestPromptTokens:           "Number of prefill tokens processed.",
	MetricRequestGenerationTokens:       "Number of generation tokens processed.",
	MetricIterationTokens:               "Histogram of number of tokens per engine_step.",
	MetricRequestParamsMaxTokens:        "Histogram of the max_tokens request parameter.",
	MetricRequestMaxNumGenerationTokens: "Histogram of maximum number of requested generation tokens.",
	MetricRequestParamsN:                "Histogram of the n request parameter.",
}

// WriteMetrics writes the end-of-run state of every engine core in the
// Prometheus text exposition format (version 0.0.4), as a scrape of vLLM's
// /metrics would show it: one family per metric (sorted by name), one
// series per engine with labels model_name and engine. The encoding is
// expfmt's. vLLM's _created series (wall-clock creation times) are left
// out: a simulated run has no wall clock.
func (r *Recorder) WriteMetrics(w io.Writer) error {
	var fams []*dto.MetricFamily
	gauge := func(name string, v func(e *engineAcc) float64) {
		f := family(name, dto.MetricType_GAUGE)
		for _, e := range r.engines {
			f.Metric = append(f.Metric, &dto.Metric{Label: e.labels(), Gauge: &dto.Gauge{Value: proto.Float64(v(e))}})
		}
		fams = append(fams, f)
	}
	counter := func(name string, v func(e *engineAcc) int64) {
		f := family(name, dto.MetricType_COUNTER)
		for _, e := range r.engines {
			f.Metric = append(f.Metric, &dto.Metric{Label: e.labels(), Counter: &dto.Counter{Value: proto.Float64(float64(v(e)))}})
		}
		fams = append(fams, f)
	}
	histogram := func(name string, h func(e *engineAcc) *Histogram) {
		f := family(name, dto.MetricType_HISTOGRAM)
		for _, e := range r.engines {
			f.Metric = append(f.Metric, &dto.Metric{Label: e.labels(), Histogram: h(e).dto()})
		}
		fams = append(fams, f)
	}
	gauge(MetricRunning, func(e *engineAcc) float64 { return float64(e.snap.Running) })
	gauge(MetricWaiting, func(e *engineAcc) float64 { return float64(e.snap.Waiting) })
	gauge(MetricKVUsage, func(e *engineAcc) float64 { return e.snap.KVUsage })
	counter(MetricPromptTokens, func(e *engineAcc) int64 { return e.cum.prompt })
	counter(MetricGenerationTokens, func(e *engineAcc) int64 { return e.cum.generation })
	counter(MetricPreemptions, func(e *engineAcc) int64 { return e.cum.preemptions })
	counter(MetricPrefixQueries, func(e *engineAcc) int64 { return e.cum.prefixQueries })
	counter(MetricPrefixHits, func(e *engineAcc) int64 { return e.cum.prefixHits })
	success := family(MetricSuccess, dto.MetricType_COUNTER)
	for _, e := range r.engines {
		for _, reason := range FinishedReasons {
			v := 0.0
			if reason == "length" {
				v = float64(e.cum.success)
			}
			l := append(e.labels(), &dto.LabelPair{Name: proto.String(LabelFinishedReason), Value: proto.String(reason)})
			success.Metric = append(success.Metric, &dto.Metric{Label: l, Counter: &dto.Counter{Value: proto.Float64(v)}})
		}
	}
	fams = append(fams, success)
	histogram(MetricTTFT, func(e *engineAcc) *Histogram { return e.h.ttft })
	histogram(MetricITL, func(e *engineAcc) *Histogram { return e.h.itl })
	histogram(MetricTPOTDeprecated, func(e *engineAcc) *Histogram { return e.h.itl })
	histogram(MetricE2E, func(e *engineAcc) *Histogram { return e.h.e2e })
	histogram(MetricQueueTime, func(e *engineAcc) *Histogram { return e.h.queue })
	histogram(MetricInferenceTime, func(e *engineAcc) *Histogram { return e.h.inference })
	histogram(MetricPrefillTime, func(e *engineAcc) *Histogram { return e.h.prefill })
	histogram(MetricDecodeTime, func(e *engineAcc) *Histogram { return e.h.decode })
	histogram(MetricRequestPromptTokens, func(e *engineAcc) *Histogram { return e.h.promptTokens })
	histogram(MetricRequestGenerationTokens, func(e *engineAcc) *Histogram { return e.h.generationTokens })
	histogram(MetricIterationTokens, func(e *engineAcc) *Histogram { return e.h.iterationTokens })
	histogram(MetricRequestParamsMaxTokens, func(e *engineAcc) *Histogram { return e.h.generationTokens })
	histogram(MetricRequestMaxNumGenerationTokens, func(e *engineAcc) *Histogram { return e.h.generationTokens })
	histogram(MetricRequestParamsN, func(e *engineAcc) *Histogram { return paramsN(e.h.generationTokens.Count) })
	slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(bw, f); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// paramsN is vllm:request_params_n for n finished requests of n = 1.
func paramsN(n uint64) *Histogram {
	h := NewHistogram(BucketsParamsN, 1)
	h.Counts[0], h.Count, h.SumRaw = n, n, int64(n)
	return h
}

func family(name string, t dto.MetricType) *dto.MetricFamily {
	return &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help[name]), Type: t.Enum()}
}

// labels are in vLLM's order (labelnames = [model_name, engine]; the
// Python client writes them in that order).
func (e *engineAcc) labels() []*dto.LabelPair {
	return []*dto.LabelPair{
		{Name: proto.String(LabelModelName), Value: proto.String(e.model)},
		{Name: proto.String(LabelEngine), Value: proto.String(strconv.Itoa(e.spec.ID))},
	}
}

// dto converts h to the client model's cumulative buckets.
func (h *Histogram) dto() *dto.Histogram {
	out := &dto.Histogram{SampleCount: proto.Uint64(h.Count), SampleSum: proto.Float64(h.Sum())}
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		out.Bucket = append(out.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(cum)})
	}
	return out
}
