package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/plan"
)

// describeSetup is one line per deployment: "MODEL on HW, TP 1 PP 1 DP 1",
// "2 replicas of TP 1 PP 1 DP 1" with --replicas, a disaggregated one as
// its pools.
func describeSetup(st *sim.Setup) string {
	var parts []string
	for _, d := range st.Pools {
		desc := fmt.Sprintf("TP %d PP %d DP %d", d.Pred.TP, d.PP, d.DP)
		if d.Pred.ExpertParallel {
			desc += fmt.Sprintf(" EP %d", d.Pred.TP*d.DP)
		}
		if d.Pool != "" {
			desc = fmt.Sprintf("%s %d× %s", d.Pool, d.Instances, desc)
		} else if d.Instances > 1 {
			desc = fmt.Sprintf("%d replicas of %s", d.Instances, desc) // --replicas
		}
		parts = append(parts, desc)
	}
	return fmt.Sprintf("%s on %s, %s", st.Model.ID, st.Hardware.Name, strings.Join(parts, " + "))
}

// candidateSetup resolves a candidate (for its description and launch
// lines); nil when vLLM refuses it.
func (r *capacityRun) candidateSetup(p plan.Point, closed bool) (*scenarios.Scenario, *sim.Setup) {
	return r.candidateSetupN(p, closed, r.requests)
}

// launchScenario is the candidate as its launch lines send it: as many
// requests as the probe that held at capacity (lengthened probes hold
// only at their length).
func (r *capacityRun) launchScenario(p plan.Point, c *plan.Capacity, closed bool) *scenarios.Scenario {
	n := r.requests
	if c.At != nil {
		n = max(n, c.At.Requests)
	}
	sc, _ := r.candidateSetupN(p, closed, n)
	return sc
}

// candidateSetupN is candidateSetup with probes of n requests.
func (r *capacityRun) candidateSetupN(p plan.Point, closed bool, n int) (*scenarios.Scenario, *sim.Setup) {
	sc, err := r.b.scenario(append(p.Args(), r.probeArgs(1, r.seeds[0], n, closed)...), p.Deployment, true)
	if err != nil {
		return nil, nil
	}
	st, err := sim.Resolve(sc)
	if err != nil {
		return sc, nil
	}
	return sc, st
}

func describeWorkload(sc *scenarios.Scenario, r *capacityRun, closed bool) string {
	w := sc.Workload
	arr := fmt.Sprintf("Poisson arrivals (burstiness %g)", w.Arrivals.Burstiness)
	if w.Arrivals.Burstiness != 1 {
		arr = fmt.Sprintf("gamma arrivals (burstiness %g)", w.Arrivals.Burstiness)
	}
	if closed {
		arr = "closed loop (a request sent as one finishes)"
	}
	rr := w.Random
	lens := fmt.Sprintf("%d in / %d out", rr.InputLen, rr.OutputLen)
	if rr.RangeRatio > 0 {
		lens += fmt.Sprintf(" (±%g)", rr.RangeRatio)
	}
	return fmt.Sprintf("random, %s tokens, %s; probes of %d requests, seeds %s", lens, arr, r.requests, seedList(r.seeds))
}

func seedList(s []int64) string {
	if len(s) == 1 {
		return fmt.Sprint(s[0])
	}
	return fmt.Sprintf("%d–%d", s[0], s[len(s)-1])
}

func loadUnit(closed bool) string {
	if closed {
		return "concurrent requests"
	}
	return "req/s"
}

// loadText writes a probed load with its unit: a concurrency as the whole
// number it is (the search probes integers), a rate to 0.01 req/s.
func loadText(x float64, closed bool) string {
	if closed {
		return fmt.Sprintf("%.0f %s", x, loadUnit(true))
	}
	return fmt.Sprintf("%.2f %s", x, loadUnit(false))
}

// costPerMTok is the cost of 10^6 output tokens, $: GPU-hours per token
// at the given output throughput.
func costPerMTok(usd float64, gpus int, outTokS float64) float64 {
	return usd * float64(gpus) / 3600 / outTokS * 1e6
}

// printCapacity reports one deployment's capacity.
func printCapacity(w io.Writer, base *scenarios.Scenario, r *capacityRun, f *capacityFlags, p plan.Point, c *plan.Capacity) error {
	line := func(k string, v any) { fmt.Fprintf(w, "%-34s %v\n", k, v) }
	sc, st := r.candidateSetup(p, f.closedLoop)
	fmt.Fprintln(w, center(" Capacity (simulated) ", '='))
	if st != nil {
		line("Deployment:", fmt.Sprintf("%s (%s)", describeSetup(st), plural(plan.GPUs(st), "GPU")))
	}
	if sc == nil {
		sc = base
	}
	line("Workload:", describeWorkload(sc, r, f.closedLoop))
	line("SLOs:", plan.SLOList(r.slos)+" (over all requests; a failed request violates every SLO)")
	unit := loadUnit(f.closedLoop)
	switch {
	case c.Refused != "":
		line("Capacity:", "none: vLLM refuses the deployment: "+c.Refused)
		return nil
	case c.At == nil:
		why := ""
		if c.Above != nil {
			why = fmt.Sprintf(" (at %.4g %s: %s)", c.Above.X, unit, c.Above.Why)
		}
		line("Capacity:", "none: the SLOs fail at the lowest load probed"+why)
		printProbes(w, r, c, f.closedLoop)
		return nil
	}
	at := c.At
	bracket := "the highest load probed held"
	if c.Bound != "" {
		bracket = c.Bound
	}
	if c.Above != nil {
		bracket = fmt.Sprintf("%s failed: within %.3g %%", loadText(c.Above.X, f.closedLoop), 100*(c.Above.X-c.X)/c.X)
	}
	line("Capacity:", fmt.Sprintf("%s (%s)", loadText(c.X, f.closedLoop), bracket))
	if f.closedLoop {
		line("  request throughput:", fmt.Sprintf("%.2f req/s", at.RequestThroughput))
	}
	line("  per GPU:", fmt.Sprintf("%.2f req/s", perGPU(c, f.closedLoop)))
	line("  output tok/s per GPU:", fmt.Sprintf("%.2f (bench serve's output_throughput at capacity ÷ GPUs)", at.OutputThroughput/float64(at.GPUs)))
	for i, o := range r.slos {
		line("  "+o.Name()+":", fmt.Sprintf("%.2f ms (SLO %s ms)", at.Values[i], fmtFloat(o.LimitMs)))
	}
	line("Binding limit:", c.Limit)
	if f.usd > 0 {
		line("Cost:", fmt.Sprintf("$%.4g per 10^6 output tokens at $%g per GPU-hour", costPerMTok(f.usd, at.GPUs, at.OutputThroughput), f.usd))
	}
	printProbes(w, r, c, f.closedLoop)
	if st != nil {
		printLaunch(w, r.launchScenario(p, c, f.closedLoop), st, c.X, f.closedLoop)
	}
	return nil
}

// perGPU is the capacity per GPU, req/s: the request rate held (closed
// loop: the request throughput at the concurrency held) ÷ GPUs.
func perGPU(c *plan.Capacity, closed bool) float64 {
	if c.At == nil {
		return 0
	}
	if closed {
		return c.At.RequestThroughput / float64(c.At.GPUs)
	}
	return c.X / float64(c.At.GPUs)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func fmtFloat(v float64) string { return fmt.Sprintf("%g", v) }

// printProbes lists every load probed, in load order.
func printProbes(w io.Writer, r *capacityRun, c *plan.Capacity, closed bool) {
	fmt.Fprintln(w, center("Probes", '-'))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{map[bool]string{false: "request_rate", true: "max_concurrency"}[closed], "held"}
	for _, o := range r.slos {
		head = append(head, o.Name()+"_ms")
	}
	head = append(head, "request_throughput", "output_throughput", "requests", "why")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range c.Sorted() {
		row := []string{fmt.Sprintf("%.4g", p.X), map[bool]string{true: "yes", false: "no"}[p.Held]}
		for _, v := range p.Values {
			if math.IsInf(v, 1) {
				row = append(row, "inf")
				continue
			}
			row = append(row, fmt.Sprintf("%.2f", v))
		}
		row = append(row, fmt.Sprintf("%.2f", p.RequestThroughput), fmt.Sprintf("%.2f", p.OutputThroughput), fmt.Sprint(p.Requests), p.Why)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// checkPlotPath refuses a plot file other than .png or .svg, before any
// run.
func checkPlotPath(flag, path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return checkWritable(flag, path)
	}
	return fmt.Errorf("%s %s: the file must end in .png or .svg", flag, path)
}
