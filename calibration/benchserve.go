package calibration

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
)

// BenchLatencyMs is one latency metric of a `vllm bench serve` result
// (ttft, tpot, itl or e2el), in milliseconds as vLLM writes them.
type BenchLatencyMs struct {
	// Present is false when the result carries no key of this metric
	// (mean, median, std or any percentile): vLLM writes only the metrics
	// chosen by --percentile-metrics (e2el is off by default). Which keys
	// are there is BenchServeResult.Has.
	Present bool
	Mean    float64 // mean_<metric>_ms (0 when absent)
	Median  float64 // median_<metric>_ms (0 when absent)
	Std     float64 // std_<metric>_ms (0 when absent)
	P99     float64 // p99_<metric>_ms (0 when absent)
	// Percentiles holds every p<X>_<metric>_ms key, keyed "p<X>" as vLLM
	// spells X ("p50", "p90", "p99", "p99.9"), P99 included.
	Percentiles map[string]float64
}

// BenchServeResult is the JSON `vllm bench serve --save-result` writes.
// Latencies are in milliseconds, durations in seconds, throughputs per
// second. Per-request arrays (ttfts, itls, input_lens, …) are not read.
type BenchServeResult struct {
	Date    string // date
	Backend string // backend
	ModelID string // model_id
	// NumPrompts is num_prompts, the requests the client was asked to send.
	NumPrompts int
	// RequestRate is request_rate, requests/s; +Inf where vLLM wrote "inf".
	RequestRate float64
	Burstiness  float64 // burstiness (1 = Poisson)
	// MaxConcurrency is max_concurrency; 0 where null (unbounded).
	MaxConcurrency int

	Completed            int     // completed: successful requests
	Failed               int     // failed (absent in older vLLM: 0)
	DurationS            float64 // duration, s
	TotalInputTokens     int     // total_input_tokens
	TotalOutputTokens    int     // total_output_tokens
	RequestThroughput    float64 // request_throughput, requests/s
	RequestGoodput       float64 // request_goodput, requests/s (0 if absent)
	OutputThroughput     float64 // output_throughput, tokens/s
	TotalTokenThroughput float64 // total_token_throughput, tokens/s

	TTFT BenchLatencyMs // *_ttft_ms
	TPOT BenchLatencyMs // *_tpot_ms, excluding the first token
	ITL  BenchLatencyMs // *_itl_ms
	E2EL BenchLatencyMs // *_e2el_ms

	// keys holds every top-level key the file carries with a non-null
	// value; absent and null keys read as zero above, so Has tells a
	// measured 0 from a metric the file does not carry.
	keys map[string]bool
}

// Has reports whether the result carries key (for example
// "median_ttft_ms" or "output_throughput") with a non-null value.
func (r *BenchServeResult) Has(key string) bool { return r.keys[key] }

// benchPercentileKey matches vLLM's percentile keys, e.g. p99_ttft_ms,
// p99.9_e2el_ms.
var benchPercentileKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(p[0-9]+(?:\.[0-9]+)?)_(ttft|tpot|itl|e2el)_ms$`) })

// ReadBenchServe reads a `vllm bench serve` result JSON file. completed and
// duration are required; other keys default to zero when absent.
func ReadBenchServe(path string) (*BenchServeResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read bench serve result: %w", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse bench serve result %s: %w", path, err)
	}
	b := benchReader{path: path, raw: raw}
	res := &BenchServeResult{
		Date:                 b.str("date"),
		Backend:              b.str("backend"),
		ModelID:              b.str("model_id"),
		NumPrompts:           b.integer("num_prompts", false),
		RequestRate:          b.rate("request_rate"),
		Burstiness:           b.num("burstiness", false),
		MaxConcurrency:       b.integer("max_concurrency", false),
		Completed:            b.integer("completed", true),
		Failed:               b.integer("failed", false),
		DurationS:            b.num("duration", true),
		TotalInputTokens:     b.integer("total_input_tokens", false),
		TotalOutputTokens:    b.integer("total_output_tokens", false),
		RequestThroughput:    b.num("request_throughput", false),
		RequestGoodput:       b.num("request_goodput", false),
		OutputThroughput:     b.num("output_throughput", false),
		TotalTokenThroughput: b.num("total_token_throughput", false),
	}
	res.keys = map[string]bool{}
	for k, v := range raw {
		if v != nil {
			res.keys[k] = true
		}
	}
	metrics := map[string]*BenchLatencyMs{"ttft": &res.TTFT, "tpot": &res.TPOT, "itl": &res.ITL, "e2el": &res.E2EL}
	for _, name := range benchLatencyMetrics {
		m := metrics[name]
		m.Mean = b.num("mean_"+name+"_ms", false)
		m.Median = b.num("median_"+name+"_ms", false)
		m.Std = b.num("std_"+name+"_ms", false)
		m.P99 = b.num("p99_"+name+"_ms", false)
		m.Percentiles = map[string]float64{}
	}
	for _, key := range slices.Sorted(maps.Keys(raw)) { // the first error is the same every run
		if g := benchPercentileKey().FindStringSubmatch(key); g != nil && res.keys[key] {
			// numpy's percentile takes q in [0, 100]: bench serve cannot
			// have written p150.
			if p, _ := strconv.ParseFloat(g[1][1:], 64); p > 100 {
				b.fail(key, "a percentile in [0, 100], got %g", p)
			}
			metrics[g[2]].Percentiles[g[1]] = b.num(key, false)
		}
	}
	for name, m := range metrics {
		for _, stat := range []string{"mean", "median", "std"} {
			m.Present = m.Present || res.keys[stat+"_"+name+"_ms"]
		}
		m.Present = m.Present || len(m.Percentiles) > 0
	}
	if b.err != nil {
		return nil, b.err
	}
	if res.DurationS <= 0 {
		return nil, fmt.Errorf("%s: duration: must be > 0 s, got %g", path, res.DurationS)
	}
	return res, nil
}

// benchReader pulls typed values out of the decoded JSON, keeping the first
// error (which names the file and the key).
type benchReader struct {
	path string
	raw  map[string]any
	err  error
}

func (b *benchReader) fail(key, format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("%s: %s: %s", b.path, key, fmt.Sprintf(format, args...))
	}
}

// num returns a number; absent or null gives 0 (an error if required).
// Every number bench serve writes is a count, a duration, a rate or a
// latency: a negative one is refused, not compared.
func (b *benchReader) num(key string, required bool) float64 {
	v, ok := b.raw[key]
	if !ok || v == nil {
		if required {
			b.fail(key, "missing")
		}
		return 0
	}
	f, ok := v.(float64)
	if !ok {
		b.fail(key, "want a number, got %T", v)
		return 0
	}
	if f < 0 {
		b.fail(key, "must be ≥ 0, got %g", f)
		return 0
	}
	return f
}

// integer reads a count: a whole number up to 2^53 (beyond it a float64
// no longer holds every integer, and int conversion overflowed: 1e300
// read as -9.2e18).
func (b *benchReader) integer(key string, required bool) int {
	f := b.num(key, required)
	if f != math.Trunc(f) || f > 1<<53 {
		b.fail(key, "want an integer ≤ 2^53, got %g", f)
		return 0
	}
	return int(f)
}

func (b *benchReader) str(key string) string {
	s, _ := b.raw[key].(string)
	return s
}

// rate reads request_rate, which vLLM writes as a number or the string
// "inf".
func (b *benchReader) rate(key string) float64 {
	if s, ok := b.raw[key].(string); ok {
		if s == "inf" || s == "Infinity" {
			return math.Inf(1)
		}
		b.fail(key, `want a number or "inf", got %q`, s)
		return 0
	}
	return b.num(key, false)
}
