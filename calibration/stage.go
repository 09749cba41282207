package calibration

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
)

// OverloadFailureRate is the failed share of a stage's requests above which
// the stage is overloaded (docs/GATE.md: "more than 1 %").
const OverloadFailureRate = 0.01

// OverloadMeanTTFTS is the mean TTFT, in seconds, above which a stage is
// overloaded (docs/GATE.md: "mean TTFT exceeds 10 s").
const OverloadMeanTTFTS = 10.0

// Dist is one client-side distribution as inference-perf writes it: the
// mean, min, max and percentiles of a per-request quantity. Units are the
// quantity's own: seconds for latencies (time_to_first_token,
// request_latency), tokens for lengths (prompt_len). inference-perf computes
// the percentiles with numpy.percentile's default linear rule, the same rule
// as Percentile.
type Dist struct {
	Mean   float64
	Min    float64
	Median float64
	P90    float64
	P99    float64
	Max    float64
	// Percentiles holds every "pX" key of the file as written ("p0.1",
	// "p1", …, "p90", "p99", "p99.9"), P90 and P99 included; the median is
	// only in Median.
	Percentiles map[string]float64
}

// Quantile returns the p-th percentile (p in [0, 100]) if the file carried
// it: 0 is Min, 50 is Median, 100 is Max, any other p is the key "p%g".
func (d Dist) Quantile(p float64) (float64, bool) {
	switch p {
	case 0:
		return d.Min, true
	case 50:
		return d.Median, true
	case 100:
		return d.Max, true
	}
	v, ok := d.Percentiles["p"+strconv.FormatFloat(p, 'g', -1, 64)]
	return v, ok
}

// StageTruth is what the client measured for one load stage of an
// inference-perf run (one gate cell), or for the whole run when it is the
// run's Summary. Latencies are in seconds, lengths in tokens.
type StageTruth struct {
	// Index is the stage number (stage_N_lifecycle_metrics.json); -1 for
	// the run summary.
	Index int
	// Rate is the requested arrival rate, requests/s, and DurationS the
	// stage's send duration, s, both from results/config.yaml load.stages;
	// 0 for the summary.
	Rate      float64
	DurationS float64
	// OutputLenRequested is the output length every request asked for,
	// tokens (results/config.yaml data.shared_prefix.output_len, generated
	// in full under ignore_eos).
	OutputLenRequested int
	// LoadCount is the number of requests sent (load_summary.count).
	LoadCount int
	// Successes and Failures count finished and failed requests
	// (successes.count, failures.count). In these runs every failure is the
	// client's 300 s timeout.
	Successes int
	Failures  int
	// SendDurationS is the time from the first to the last request sent,
	// s (load_summary.send_duration); 0 in the summary, which lacks it.
	SendDurationS float64
	// TTFT is successes.latency.time_to_first_token, s.
	TTFT Dist
	// E2E is successes.latency.request_latency, s.
	E2E Dist
	// PromptLen is successes.prompt_len, tokens: the real input length,
	// chat template included.
	PromptLen Dist
	// FailureLatency is failures.request_latency, s; zero when no request
	// failed.
	FailureLatency Dist
	// RequestsPerSec is successes.throughput.requests_per_sec: successes
	// divided by the window from the stage's first request sent to its last
	// request finished or failed, requests/s.
	RequestsPerSec float64
}

// TPOTMean is the mean time per output token, s, derived as docs/GATE.md
// says: (E2E mean − TTFT mean) / (output_len requested − 1). The client's own
// time_per_output_token is not used: it counts about two streamed events
// per real token. NaN when fewer than two tokens were requested.
func (s StageTruth) TPOTMean() float64 {
	return derivedTPOT(s.E2E.Mean, s.TTFT.Mean, s.OutputLenRequested)
}

// derivedTPOT is the gate's one TPOT definition, shared by truth and
// simulation: (e2eMean − ttftMean) / (outputLen − 1), in the means' unit.
func derivedTPOT(e2eMean, ttftMean float64, outputLen int) float64 {
	if outputLen < 2 {
		return math.NaN()
	}
	return (e2eMean - ttftMean) / float64(outputLen-1)
}

// FailureRate is failures / (successes + failures); 0 for an empty stage.
func (s StageTruth) FailureRate() float64 {
	total := s.Successes + s.Failures
	if total == 0 {
		return 0
	}
	return float64(s.Failures) / float64(total)
}

// Overloaded reports whether the stage is an overloaded cell
// (docs/GATE.md): more than 1 % of its requests failed, or its mean TTFT
// exceeds 10 s. Such a cell is gated on successes and success rate instead
// of latencies.
func (s StageTruth) Overloaded() bool {
	return s.FailureRate() > OverloadFailureRate || s.TTFT.Mean > OverloadMeanTTFTS
}

// WindowS is the stage's measurement window, s: from its first request sent
// to its last request finished or failed. inference-perf does not write it;
// it divides successes by it to get requests_per_sec, so it is recovered as
// Successes / RequestsPerSec. It includes the drain and, in runs with
// timeouts, the 300 s timeout tail. 0 when nothing succeeded (the window is
// then unrecoverable from the file).
func (s StageTruth) WindowS() float64 {
	if s.Successes == 0 || s.RequestsPerSec <= 0 {
		return 0
	}
	return float64(s.Successes) / s.RequestsPerSec
}

// lifecycleFile mirrors the parts of stage_N_lifecycle_metrics.json and
// summary_lifecycle_metrics.json that the gate reads.
type lifecycleFile struct {
	LoadSummary struct {
		Count         *int     `json:"count"`
		SendDuration  float64  `json:"send_duration"`
		RequestedRate *float64 `json:"requested_rate"`
	} `json:"load_summary"`
	Successes struct {
		Count   *int `json:"count"`
		Latency struct {
			RequestLatency   map[string]float64 `json:"request_latency"`
			TimeToFirstToken map[string]float64 `json:"time_to_first_token"`
		} `json:"latency"`
		Throughput struct {
			RequestsPerSec *float64 `json:"requests_per_sec"`
		} `json:"throughput"`
		PromptLen map[string]float64 `json:"prompt_len"`
	} `json:"successes"`
	Failures struct {
		Count          *int               `json:"count"`
		RequestLatency map[string]float64 `json:"request_latency"`
	} `json:"failures"`
}

// readLifecycle reads one lifecycle metrics file into a StageTruth; the
// caller fills Index, Rate, DurationS and OutputLenRequested. It also
// returns the decoded file, for checks against the client config.
func readLifecycle(path string) (StageTruth, lifecycleFile, error) {
	var st StageTruth
	var f lifecycleFile
	data, err := os.ReadFile(path)
	if err != nil {
		return st, f, fmt.Errorf("read lifecycle metrics: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return st, f, fmt.Errorf("parse lifecycle metrics %s: %w", path, err)
	}
	counts := []struct {
		field string
		src   *int
		dst   *int
	}{
		{"load_summary.count", f.LoadSummary.Count, &st.LoadCount},
		{"successes.count", f.Successes.Count, &st.Successes},
		{"failures.count", f.Failures.Count, &st.Failures},
	}
	for _, c := range counts {
		if c.src == nil {
			return st, f, fmt.Errorf("%s: %s: missing", path, c.field)
		}
		if *c.src < 0 {
			return st, f, fmt.Errorf("%s: %s: must be ≥ 0, got %d", path, c.field, *c.src)
		}
		*c.dst = *c.src
	}
	st.SendDurationS = f.LoadSummary.SendDuration

	if st.Successes > 0 {
		dists := []struct {
			field string
			src   map[string]float64
			dst   *Dist
		}{
			{"successes.latency.time_to_first_token", f.Successes.Latency.TimeToFirstToken, &st.TTFT},
			{"successes.latency.request_latency", f.Successes.Latency.RequestLatency, &st.E2E},
			{"successes.prompt_len", f.Successes.PromptLen, &st.PromptLen},
		}
		for _, d := range dists {
			if *d.dst, err = distFrom(d.src); err != nil {
				return st, f, fmt.Errorf("%s: %s: %w", path, d.field, err)
			}
		}
		if f.Successes.Throughput.RequestsPerSec == nil {
			return st, f, fmt.Errorf("%s: successes.throughput.requests_per_sec: missing", path)
		}
		st.RequestsPerSec = *f.Successes.Throughput.RequestsPerSec
	}
	if st.Failures > 0 {
		if st.FailureLatency, err = distFrom(f.Failures.RequestLatency); err != nil {
			return st, f, fmt.Errorf("%s: failures.request_latency: %w", path, err)
		}
	}
	return st, f, nil
}

// distFrom builds a Dist from a decoded distribution object, requiring the
// fields the gate reads.
func distFrom(m map[string]float64) (Dist, error) {
	if m == nil {
		return Dist{}, fmt.Errorf("missing or null")
	}
	d := Dist{Percentiles: map[string]float64{}}
	required := []struct {
		key string
		dst *float64
	}{
		{"mean", &d.Mean}, {"min", &d.Min}, {"median", &d.Median},
		{"p90", &d.P90}, {"p99", &d.P99}, {"max", &d.Max},
	}
	for _, r := range required {
		v, ok := m[r.key]
		if !ok {
			return Dist{}, fmt.Errorf("%s: missing", r.key)
		}
		*r.dst = v
	}
	for k, v := range m {
		if len(k) > 1 && k[0] == 'p' {
			if _, err := strconv.ParseFloat(k[1:], 64); err == nil {
				d.Percentiles[k] = v
			}
		}
	}
	return d, nil
}
