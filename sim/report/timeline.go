package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Histogram is a Prometheus histogram with fixed upper bounds (vLLM's
// buckets): a count per bucket (not cumulative; the last is +Inf), the
// number of observations and their sum. Observations are integers in a
// base unit (ns for times, tokens for counts) and Scale converts the base
// unit to the metric's (1e-9 for seconds), so bucketing and sums are
// exact.
type Histogram struct {
	Bounds []float64 // in the metric's unit
	Counts []uint64  // len(Bounds) + 1
	Count  uint64
	SumRaw int64 // in the base unit
	Scale  float64
	raw    []int64 // Bounds in the base unit, rounded
}

// NewHistogram returns an empty histogram over bounds (ascending, in the
// metric's unit) observing base-unit integers worth scale each.
func NewHistogram(bounds []float64, scale float64) *Histogram {
	h := &Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1), Scale: scale}
	for _, b := range bounds {
		h.raw = append(h.raw, int64(math.Round(b/scale)))
	}
	return h
}

// Observe adds v (base unit): it lands in the first bucket whose bound is
// ≥ v (the Prometheus rule, le = less or equal).
func (h *Histogram) Observe(v int64) {
	i := 0
	for i < len(h.raw) && v > h.raw[i] {
		i++
	}
	h.Counts[i]++
	h.Count++
	h.SumRaw += v
}

// Sum is the sum of observations in the metric's unit.
func (h *Histogram) Sum() float64 { return float64(h.SumRaw) * h.Scale }

// Row is one timeline interval of one engine core (Engine ≥ 0) or of all
// of them (Engine = -1, the total). Gauges are the state at the end of the
// interval as a scrape would read it: the scheduler state after the
// engine's latest step that ended by then (vLLM sets its gauges from each
// step's SchedulerStats). Counters are the interval's increments of vLLM's
// counters (vllm.go says when each counts).
type Row struct {
	StartNs, EndNs int64
	Engine         int
	// Gauges: vllm:num_requests_running, vllm:num_requests_waiting,
	// vllm:kv_cache_usage_perc (fraction), and the blocks behind the usage
	// (KVBlocks is num_gpu_blocks; KVBlocksHeld = KVUsage × (KVBlocks − 1)
	// per engine).
	Running, Waiting       int
	KVUsage                float64
	KVBlocks, KVBlocksHeld int
	// Increments in the interval: tokens, preemptions, requests.
	PromptTokens, GenerationTokens, Preemptions int64
	PrefixQueries, PrefixHits, Successes        int64
	// GaugeNs is the instant the gauges describe (-1: no step yet), and
	// Arrived, Finished and Aborted count, up to that instant, requests
	// queued on the engine, finished by it, and aborted while in it:
	// Running + Waiting = Arrived − Finished − Aborted.
	GaugeNs                    int64
	Arrived, Finished, Aborted int64
}

// Rows is the timeline, interval by interval, each interval's engines in
// ID order followed by the total.
func (r *Recorder) Rows() []Row { return r.rows }

// Stages are the start times of the workload's stages, ns.
func (r *Recorder) Stages() []int64 { return r.stages }

// closeInterval appends the open interval's rows, ending at end.
func (r *Recorder) closeInterval(end int64) {
	if len(r.rows)+len(r.engines)+1 > r.maxRows {
		r.full = true // Finish reports it; no row is kept from here
		return
	}
	start := r.openK * r.interval
	t := Row{StartNs: start, EndNs: end, Engine: -1, GaugeNs: -1}
	for _, e := range r.engines {
		d := e.cum.minus(e.prev)
		e.prev = e.cum
		row := Row{StartNs: start, EndNs: end, Engine: e.spec.ID,
			Running: e.snap.Running, Waiting: e.snap.Waiting, KVUsage: e.snap.KVUsage,
			KVBlocks: e.spec.KVBlocks, KVBlocksHeld: e.snap.KVBlocksHeld,
			PromptTokens: d.prompt, GenerationTokens: d.generation, Preemptions: d.preemptions,
			PrefixQueries: d.prefixQueries, PrefixHits: d.prefixHits, Successes: d.success,
			GaugeNs: -1, Arrived: e.snapCnt.arrived, Finished: e.snapCnt.finished, Aborted: e.snapCnt.aborted}
		if e.snapNs > 0 || e.snapCnt.arrived > 0 {
			row.GaugeNs = e.snapNs
		}
		r.rows = append(r.rows, row)
		t.Running += row.Running
		t.Waiting += row.Waiting
		t.KVBlocks += row.KVBlocks
		t.KVBlocksHeld += row.KVBlocksHeld
		t.PromptTokens += row.PromptTokens
		t.GenerationTokens += row.GenerationTokens
		t.Preemptions += row.Preemptions
		t.PrefixQueries += row.PrefixQueries
		t.PrefixHits += row.PrefixHits
		t.Successes += row.Successes
		t.Arrived += row.Arrived
		t.Finished += row.Finished
		t.Aborted += row.Aborted
		t.GaugeNs = max(t.GaugeNs, row.GaugeNs)
	}
	// The total's usage is over all engines' usable blocks, by vLLM's
	// formula: 1 − free ÷ usable.
	if usable := t.KVBlocks - len(r.engines); usable > 0 {
		t.KVUsage = 1 - float64(usable-t.KVBlocksHeld)/float64(usable)
	}
	r.rows = append(r.rows, t)
}

// TimelineColumns are the timeline CSV's columns: the interval (s), the
// engine ("total" for the sum), vLLM's gauges at the interval's end,
// vLLM's counters' increments in the interval, and throughputs over it:
// request_throughput (successful requests/s), prompt_throughput and
// generation_throughput (tokens/s, as vLLM's logger prints "Avg prompt
// throughput" and "Avg generation throughput").
var TimelineColumns = []string{"start_s", "end_s", "engine",
	MetricRunning, MetricWaiting, MetricKVUsage,
	MetricPromptTokens, MetricGenerationTokens, MetricPreemptions,
	MetricPrefixQueries, MetricPrefixHits, MetricSuccess,
	"request_throughput", "prompt_throughput", "generation_throughput"}

// WriteTimelineCSV writes rows as CSV with TimelineColumns.
func WriteTimelineCSV(w io.Writer, rows []Row) error {
	bw := bufio.NewWriter(w)
	for i, c := range TimelineColumns {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(c)
	}
	bw.WriteByte('\n')
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range rows {
		eng := "total"
		if r.Engine >= 0 {
			eng = strconv.Itoa(r.Engine)
		}
		dt := sec(r.EndNs - r.StartNs)
		rate := func(n int64) string {
			if dt <= 0 {
				return "0"
			}
			return strconv.FormatFloat(float64(n)/dt, 'f', 3, 64)
		}
		fmt.Fprintf(bw, "%s,%s,%s,%d,%d,%s,%d,%d,%d,%d,%d,%d,%s,%s,%s\n",
			f(sec(r.StartNs)), f(sec(r.EndNs)), eng, r.Running, r.Waiting, f(r.KVUsage),
			r.PromptTokens, r.GenerationTokens, r.Preemptions, r.PrefixQueries, r.PrefixHits, r.Successes,
			rate(r.Successes), rate(r.PromptTokens), rate(r.GenerationTokens))
	}
	return bw.Flush()
}
