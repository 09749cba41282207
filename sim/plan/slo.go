package plan

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"frontier/sim"
)

// SLO is one --slo: a bound on a statistic of a latency distribution,
// METRIC:STAT<=VALUE[ms|s].
type SLO struct {
	Metric  string  // ttft | tpot | itl | e2el
	Stat    string  // "mean" or "p99", "p99.9", …
	P       float64 // the percentile (0–100); 0 for mean
	LimitMs float64
}

// SLOGrammar is what ParseSLO accepts, for error messages.
const SLOGrammar = "METRIC:STAT<=VALUE[ms|s] with METRIC ttft, tpot, itl or e2el and STAT mean or pNN[.N] (e.g. ttft:p99<=500ms, tpot:mean<=50ms, e2el:p90<=10s; VALUE in ms without a unit)"

var sloRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(ttft|tpot|itl|e2el):(mean|p[0-9]+(?:\.[0-9]+)?)<=([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)(ms|s)?$`)
})

// ParseSLO reads one SLO. Errors name --slo and say the grammar.
func ParseSLO(s string) (SLO, error) {
	m := sloRe().FindStringSubmatch(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if m == nil {
		return SLO{}, fmt.Errorf("--slo %q: want %s", s, SLOGrammar)
	}
	o := SLO{Metric: m[1], Stat: m[2]}
	if o.Stat != "mean" {
		o.P, _ = strconv.ParseFloat(o.Stat[1:], 64)
		if !(o.P > 0 && o.P < 100) {
			return SLO{}, fmt.Errorf("--slo %q: the percentile must be in (0, 100), got %g", s, o.P)
		}
	}
	v, _ := strconv.ParseFloat(m[3], 64)
	if m[4] == "s" {
		v *= 1000
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return SLO{}, fmt.Errorf("--slo %q: VALUE must be a finite number > 0", s)
	}
	o.LimitMs = v
	return o, nil
}

// ParseSLOs reads every --slo (each may hold several, comma-separated).
func ParseSLOs(list []string) ([]SLO, error) {
	var out []SLO
	for _, item := range list {
		for _, s := range strings.Split(item, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			o, err := ParseSLO(s)
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// String is the SLO as written: "ttft:p99<=500ms".
func (o SLO) String() string {
	return fmt.Sprintf("%s:%s<=%sms", o.Metric, o.Stat, strconv.FormatFloat(o.LimitMs, 'f', -1, 64))
}

// Name is the statistic's name, "ttft:p99".
func (o SLO) Name() string { return o.Metric + ":" + o.Stat }

// Value computes the SLO's statistic, ms, over every request of a run: a
// failed (timed-out or rejected) request counts as +Inf, so it violates
// every SLO, where bench serve's percentiles drop failures. TTFT and
// E2EL are per request; TPOT per request of more than one output token
// (as bench serve); ITL over every inter-token gap, a failed request
// weighing as many gaps as a completed one on average. Percentiles are
// numpy's linear interpolation (bench serve's), ITL's from the run's
// histogram (0.1 % buckets).
func (o SLO) Value(res *sim.Result) float64 {
	var xs []float64
	failed, completed := 0, 0
	for i := range res.Requests {
		r := &res.Requests[i]
		if r.Failed || r.FinishNs < 0 {
			failed++
			xs = append(xs, math.Inf(1))
			continue
		}
		completed++
		switch o.Metric {
		case "ttft":
			xs = append(xs, float64(r.TTFTNs())/1e6)
		case "e2el":
			xs = append(xs, float64(r.E2ENs())/1e6)
		case "tpot":
			if r.OutputTokens > 1 {
				xs = append(xs, r.TPOTNs()/1e6)
			}
		}
	}
	if o.Metric == "itl" {
		return o.itl(res.ITL, completed, failed)
	}
	if len(xs) == 0 {
		return 0
	}
	if o.P == 0 {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		return sum / float64(len(xs))
	}
	slices.Sort(xs)
	rank := o.P / 100 * float64(len(xs)-1)
	lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
	if math.IsInf(xs[hi], 1) && (hi != lo || math.IsInf(xs[lo], 1)) {
		return math.Inf(1)
	}
	return xs[lo] + (rank-float64(lo))*(xs[hi]-xs[lo])
}

func (o SLO) itl(h *sim.Histogram, completed, failed int) float64 {
	if failed > 0 && (o.P == 0 || completed == 0) {
		return math.Inf(1)
	}
	if h == nil || h.Count() == 0 {
		return 0
	}
	n := float64(h.Count())
	total := n + float64(failed)*n/float64(completed)
	if o.P == 0 {
		return h.Mean() / 1e6
	}
	p := o.P * total / n
	if p > 100 {
		return math.Inf(1)
	}
	return h.Percentile(p) / 1e6
}

// Holds reports whether v meets the SLO.
func (o SLO) Holds(v float64) bool { return v <= o.LimitMs }
