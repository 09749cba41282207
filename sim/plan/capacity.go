package plan

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"frontier/sim"
)

// Prober runs the deployment under load x (requests/s, +Inf = every
// request at t = 0; in a closed loop the --max-concurrency) with the
// workload's seed and n requests.
type Prober func(x float64, seed int64, n int) *Outcome

// Search is a capacity search: the highest load at which every SLO
// holds for every seed, at steady state.
type Search struct {
	Probe     Prober
	SLOs      []SLO
	Precision float64 // relative width of the final bracket, e.g. 0.02
	Seeds     []int64 // every seed must hold
	Requests  int     // requests of a probe before any lengthening
	// Lengthen is how many times a probe that does not show a steady
	// state (unsteady: its queue or TTFT still growing, the server still
	// filling, sim.DetectGrowth) is rerun with twice the requests before
	// it fails.
	Lengthen int
	// ClosedLoop searches the highest max concurrency (integers from 1;
	// the queue is bounded by it, so growth is not judged).
	ClosedLoop bool
	Jobs       int // seeds probed in parallel
	// MoreAPI probes the same deployment with twice its API server
	// processes (nil: no such probe). When the lowest failing load shows
	// a loaded API server (Signals.apiLoaded), the search probes that
	// load again with it, so the binding limit names the API server only
	// if relieving it lets that load hold (Capacity.MoreAPI).
	MoreAPI Prober
}

// Probe is one load level of a search, over every seed.
type Probe struct {
	X    float64
	Held bool
	// Why is the first reason it failed: an SLO ("ttft:p99 612.30 ms >
	// 500 ms"), growth, or the refusal; "" when it held.
	Why string
	// FailedSLO names the SLO that failed first ("ttft:p99"); "" when the
	// probe failed otherwise (growth, refusal) or held.
	FailedSLO string
	// Values are the SLOs' statistics, ms, the worst over the seeds.
	Values []float64
	// Means over the seeds: request and output throughput (per s) and
	// mean TPOT (ms), as bench serve reports them.
	RequestThroughput, OutputThroughput, MeanTPOTMs float64
	Requests                                        int     // the longest probe run, requests
	Signals                                         Signals // of the first seed
	GPUs                                            int
	Refused                                         string
	Pools                                           []string // pool names of the deployment ("" co-located)
}

// Capacity is a search's answer.
type Capacity struct {
	X      float64 // the highest load that held; 0 when none did
	At     *Probe  // the probe at X (nil when none held)
	Above  *Probe  // the lowest load that failed (nil when none did)
	Probes []Probe // in the order they ran
	Limit  string  // what binds at capacity, from the runs' own signals
	// Refused is why the deployment does not run at all (vLLM's reason).
	Refused string
	// Bound is set when no load above X was found failing because the
	// search stopped: X is then a bound of the probes, not of the
	// deployment, and Bound says why ("" when Above bounds X).
	Bound string
	// MoreAPI is Above probed again with twice the API server processes
	// (Search.MoreAPI), as long as Above ran, when the deployment is
	// co-located and its API server loaded there (Signals.apiLoaded); nil
	// otherwise.
	MoreAPI *Probe
}

// maxDoublings bounds the upward bracket (a load 2^20 above the start).
const maxDoublings = 20

// Run searches: a saturated probe (every request at t = 0) gives the
// engines' throughput as the first upper bound; the bracket widens by
// doubling (halving) until one end fails (holds), then bisects until the
// bracket is within Precision. Closed loop: concurrency 1, 2, 4, … until
// one fails, then integer bisection.
func (s *Search) Run() *Capacity {
	c := &Capacity{}
	var lo, hi float64
	probe := func(x float64) *Probe {
		p := s.probe(x)
		c.Probes = append(c.Probes, *p)
		return p
	}
	if s.ClosedLoop {
		lo, hi = 0, 1
	} else {
		sat := s.probe(math.Inf(1))
		if sat.Refused != "" {
			c.Refused = sat.Refused
			return c
		}
		hi = roundSig(sat.RequestThroughput, 4)
		if !(hi > 0) {
			c.Refused = "the saturated probe completed no request"
			return c
		}
	}
	for k := 0; ; k++ {
		p := probe(hi)
		if p.Refused != "" {
			c.Refused = p.Refused
			return c
		}
		if !p.Held {
			break
		}
		lo = hi
		switch {
		case s.ClosedLoop && hi >= float64(s.Requests):
			// Every request of a probe is in flight at once: a higher
			// concurrency sends the same probe.
			c.Bound = fmt.Sprintf("every SLO held with all %d requests of a probe in flight at once; a higher concurrency needs longer probes (--num-prompts)", s.Requests)
		case k == maxDoublings:
			c.Bound = fmt.Sprintf("every SLO held at %s %s, 2^%d times the first load probed; the search stops there", fmtX(hi), "req/s", maxDoublings)
		}
		if c.Bound != "" {
			break
		}
		hi *= 2
		if s.ClosedLoop {
			hi = min(hi, float64(s.Requests))
		}
	}
	if lo == 0 && !s.ClosedLoop {
		lo = hi / 2
		for k := 0; k < maxDoublings; k++ {
			if probe(lo).Held {
				break
			}
			hi, lo = lo, lo/2
		}
		if !c.last().Held {
			lo = 0
		}
	}
	for c.Bound == "" && lo > 0 && (hi-lo)/lo > s.Precision {
		mid := roundSig((lo+hi)/2, 4)
		if mid <= lo || mid >= hi {
			mid = (lo + hi) / 2
		}
		if s.ClosedLoop {
			if hi-lo <= 1 {
				break
			}
			mid = math.Floor(mid)
		}
		if mid <= lo || mid >= hi {
			break // lo and hi are adjacent floats: no load between them
		}
		if probe(mid).Held {
			lo = mid
		} else {
			hi = mid
		}
	}
	c.X = lo
	for i := range c.Probes {
		p := &c.Probes[i]
		if p.X == lo && p.Held {
			c.At = p
		}
		if !p.Held && p.X >= lo && (c.Above == nil || p.X < c.Above.X) {
			c.Above = p
		}
	}
	if a := c.Above; a != nil && s.MoreAPI != nil && a.Refused == "" && len(a.Signals.Busy) == 1 && a.Signals.apiLoaded() {
		// As long as the failing probe ran (it may have been lengthened):
		// a shorter run holds more easily (attack13: 600 requests held
		// with twice the processes where 1,200 had failed with one).
		c.MoreAPI = s.probeWith(s.MoreAPI, a.X, a.Requests)
	}
	c.Limit = bindingLimit(c)
	return c
}

// apiLoaded says the API server is loaded enough to test and to name
// beside another limit: over 10 % of output tokens merged into earlier
// SSE chunks (as sim.Diagnose), or its processes busy ≥ 50 % of the run
// (a 128/32-token search under ttft:p99<=60ms at 69 % busy and 4 %
// merged rose 8 % with two; 70B PP searches at 13–22 % busy "held" with
// twice the processes by the growth detector's noise alone: attack13).
func (sg Signals) apiLoaded() bool { return sg.MergedChunks > 0.1 || sg.APIBusy >= 0.5 }

func (c *Capacity) last() *Probe { return &c.Probes[len(c.Probes)-1] }

// probe runs load x for every seed (in parallel) and combines them.
func (s *Search) probe(x float64) *Probe { return s.probeWith(s.Probe, x, s.Requests) }

// probeWith is probe with prober pr, each trial starting at start requests.
func (s *Search) probeWith(pr Prober, x float64, start int) *Probe {
	type trial struct {
		p       Probe
		failed  bool
		refused string
	}
	trials := make([]trial, len(s.Seeds))
	_ = Ordered(len(s.Seeds), s.Jobs, func(k int) trial {
		p := s.trial(pr, x, s.Seeds[k], start)
		return trial{p: *p}
	}, func(k int, t trial) error { trials[k] = t; return nil }, nil)
	out := trials[0].p
	out.Held = true
	out.Why, out.FailedSLO = "", ""
	n := float64(len(trials))
	out.RequestThroughput, out.OutputThroughput, out.MeanTPOTMs = 0, 0, 0
	for _, t := range trials {
		p := t.p
		if p.Refused != "" {
			out.Refused, out.Held, out.Why = p.Refused, false, p.Refused
			return &out
		}
		if !p.Held && out.Held {
			out.Held, out.Why, out.FailedSLO = false, p.Why, p.FailedSLO
		}
		for i, v := range p.Values {
			out.Values[i] = math.Max(out.Values[i], v)
		}
		out.RequestThroughput += p.RequestThroughput / n
		out.OutputThroughput += p.OutputThroughput / n
		out.MeanTPOTMs += p.MeanTPOTMs / n
		out.Requests = max(out.Requests, p.Requests)
	}
	return &out
}

// trial probes one seed: a probe that meets every SLO but is still
// growing is rerun twice as long, up to Lengthen times, then fails.
func (s *Search) trial(pr Prober, x float64, seed int64, n int) *Probe {
	for k := 0; ; k++ {
		o := pr(x, seed, n)
		p := &Probe{X: x, Requests: n, Refused: o.Refused}
		if o.Refused != "" {
			p.Why = o.Refused
			return p
		}
		p.GPUs = GPUs(o.Setup)
		for _, d := range o.Setup.Pools {
			p.Pools = append(p.Pools, d.Pool)
		}
		p.Signals = o.Signals
		p.RequestThroughput = o.Summary.RequestThroughput
		p.OutputThroughput = o.Summary.OutputThroughput
		p.MeanTPOTMs = o.Summary.Latencies["mean_tpot_ms"]
		p.Held = true
		for _, slo := range s.SLOs {
			v := slo.Value(o.Result)
			p.Values = append(p.Values, v)
			if !slo.Holds(v) && p.Held {
				p.Held, p.Why = false, fmt.Sprintf("%s %s ms > %s ms", slo.Name(), fmtMs(v), strconv.FormatFloat(slo.LimitMs, 'f', -1, 64))
				p.FailedSLO = slo.Name()
			}
		}
		if !p.Held || s.ClosedLoop || math.IsInf(x, 1) {
			return p
		}
		g := sim.DetectGrowth(o.Result.Requests)
		if why := unsteady(g); why == "" {
			return p
		} else if k >= s.Lengthen {
			p.Held, p.Why = false, fmt.Sprintf("%s after %d requests: %s", map[bool]string{true: "still growing", false: "no steady state"}[g.Growing], n, why)
			return p
		}
		n *= 2
	}
}

// unsteady says why a probe does not show a steady state ("" when it
// does): its queue or TTFT still growing at the last send; the server
// still filling (sim.Growth.InFlightRamp: the first quarter's requests
// outlasting a quarter of the send window, so the run is mostly ramp and
// drain: a load far above capacity whose requests all arrive before the
// first ones finish looks like a burst, which a loose SLO can pass at any
// rate); or too few requests per quarter to judge.
func unsteady(g sim.Growth) string {
	switch {
	case g.Growing:
		return g.Reason
	case !g.Judged:
		return fmt.Sprintf("too few requests in a quarter of the sends to judge a trend (fewer than %d)", sim.GrowthMinPerQuarter)
	case g.InFlightRamp:
		return fmt.Sprintf("the server was still filling: the first quarter's requests took %.0f ms (median E2E), more than a quarter of the %.0f ms send window",
			g.FirstE2EMs, g.SendWindowMs)
	}
	return ""
}

func fmtMs(v float64) string {
	if math.IsInf(v, 1) {
		return "inf (failed requests)"
	}
	return fmt.Sprintf("%.2f", v)
}

// bindingLimit names what stops the deployment at capacity, from the
// signals of the lowest failing load (else the capacity probe): a
// disaggregated deployment's binding pool (disaggregatedLimit); preemptions or a full KV cache;
// a saturated API server (merged SSE chunks over 10 % of tokens, as
// sim.Diagnose) when the failing load, probed again with twice the API
// server processes (Capacity.MoreAPI), holds, or when there was no such
// probe; engines busy (≥ 90 % of the run): compute; otherwise the SLOs
// bind before the engines fill (latency). A saturated API server whose
// relief does not let the failing load hold is named beside those. Signals
// alone could not tell (newcomer11: the default deployment's capacity
// under ttft:p99<=500ms,tpot:mean<=50ms was 59.16 req/s with one API
// server and 59.15 with two, and the report named the API server;
// attack12: b200 Llama-2-7b under ttft:p99<=40ms rose 14 % with two, and
// a rule by engine busy and failing SLO named compute).
func bindingLimit(c *Capacity) string {
	p := c.Above
	if p == nil {
		p = c.At
	}
	if p == nil || p.Refused != "" {
		return ""
	}
	sg := p.Signals
	var why string
	if c.Above != nil {
		why = fmt.Sprintf("; above capacity (%s): %s", fmtX(c.Above.X), c.Above.Why)
	}
	if len(sg.Busy) > 1 {
		return disaggregatedLimit(c, sg) + why
	}
	busy := 0.0
	for _, b := range sg.Busy {
		busy = math.Max(busy, b)
	}
	merged := fmt.Sprintf("%.0f %% of output tokens in merged SSE chunks", 100*sg.MergedChunks)
	also := ""
	tested := c.MoreAPI != nil && c.MoreAPI.Refused == "" // else the signals alone decide, as before the probe
	if m := c.MoreAPI; tested {
		load := fmt.Sprintf("busy %.0f %% of the run, %s", 100*sg.APIBusy, merged)
		if m.Held {
			return fmt.Sprintf("API server (%s; with twice its processes %s holds)%s", load, fmtX(m.X), why)
		}
		if sg.apiLoaded() {
			also = fmt.Sprintf("; the API server is loaded too (%s), but with twice its processes %s still fails: %s", load, fmtX(m.X), m.Why)
		}
	}
	switch {
	case sg.Preemptions > 0 || sg.PeakKV >= 0.95:
		return fmt.Sprintf("KV capacity (%d preemptions, KV cache peak %.0f %%%s)%s", sg.Preemptions, 100*sg.PeakKV, also, why)
	case !tested && sg.MergedChunks > 0.1:
		return fmt.Sprintf("API server (%s)%s", merged, why)
	case busy >= 0.9:
		return fmt.Sprintf("compute (engines busy %.0f %% of the run%s)%s", 100*busy, also, why)
	}
	return fmt.Sprintf("latency: the SLOs bind before the engines fill (busy %.0f %%%s)%s", 100*busy, also, why)
}

// disaggregatedLimit names the pool that binds a disaggregated
// deployment: the one the failing SLO measures (TTFT: the prefill pool's
// queue, prefill and KV transfer; TPOT, ITL: the decode pool's steps);
// without one (growth, E2E, which spans both) the prefill pool when its
// engines are busy ≥ 90 % of the run, else the decode pool. Busy shares
// are printed for both, but only the prefill pool's is a utilisation: a
// decode engine steps whenever it holds a request, so it reads near
// 100 % at any load that keeps a few requests decoding.
func disaggregatedLimit(c *Capacity, sg Signals) string {
	pre, dec := sg.Busy["prefill"], sg.Busy["decode"]
	shares := fmt.Sprintf("busy: prefill %.0f %%, decode %.0f %%, and a decode engine steps whenever it holds a request", 100*pre, 100*dec)
	slo := ""
	if c.Above != nil {
		slo = c.Above.FailedSLO
	}
	metric, _, _ := strings.Cut(slo, ":")
	switch metric {
	case "ttft":
		return fmt.Sprintf("prefill pool (%s fails: TTFT is the prefill pool's queue, prefill and KV transfer; %s)", slo, shares)
	case "tpot", "itl":
		return fmt.Sprintf("decode pool (%s fails: %s is the decode pool's steps; %s)", slo, strings.ToUpper(metric), shares)
	}
	if pre >= 0.9 {
		return fmt.Sprintf("prefill pool (%s)", shares)
	}
	return fmt.Sprintf("decode pool (%s)", shares)
}

// roundSig rounds x to n significant digits, so that the loads probed
// (and the launch lines at capacity) read as 59.52, not 59.51735649.
func roundSig(x float64, n int) float64 {
	if x == 0 || math.IsInf(x, 0) {
		return x
	}
	scale := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

func fmtX(x float64) string { return fmt.Sprintf("%.4g", x) }

// Sorted returns the probes by load, each load once (its last run).
func (c *Capacity) Sorted() []Probe {
	by := map[float64]Probe{}
	for _, p := range c.Probes {
		by[p.X] = p
	}
	out := make([]Probe, 0, len(by))
	for _, p := range by {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

// SLOList writes the SLOs as given, comma-separated.
func SLOList(slos []SLO) string {
	var parts []string
	for _, o := range slos {
		parts = append(parts, o.String())
	}
	return strings.Join(parts, ", ")
}
