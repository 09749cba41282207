package main

import (
	"fmt"
	"io"
	"strings"

	"frontier/sim"
)

// policyLines prints each pool's scheduling policy when it is not vLLM's
// default (a default run's summary stays as it was).
func policyLines(line func(string, any), st *sim.Setup) {
	for _, d := range st.Pools {
		if d.SchedulingPolicy != "fcfs" {
			label := "Scheduling policy:"
			if d.Pool != "" {
				label = strings.ToUpper(d.Pool[:1]) + d.Pool[1:] + " scheduling policy:"
			}
			line(label, d.SchedulingPolicy)
		}
	}
}

// printClasses prints the per-class table of a workload with request
// classes: counts and TTFT, TPOT and E2EL in ms, the percentile column
// the last of --metric-percentiles.
func printClasses(w io.Writer, res *sim.Result, s sim.BenchSummary) {
	classes := sim.SummarizeClasses(res, s.Percentiles, sim.SLO{})
	if classes == nil {
		return
	}
	p := "p" + sim.PercentileLabel(s.Percentiles[len(s.Percentiles)-1])
	fmt.Fprintln(w, center("Per class", '-'))
	fmt.Fprintf(w, "%-16s %8s %9s %6s %10s %10s %10s %10s %10s\n", "class", "priority", "completed", "failed",
		"mean TTFT", "med TTFT", p+" TTFT", "mean TPOT", "med E2EL")
	for _, c := range classes {
		l := c.Latencies
		fmt.Fprintf(w, "%-16s %8d %9d %6d %10.2f %10.2f %10.2f %10.2f %10.2f\n", clip(c.Name, 16), c.Priority, c.Completed, c.Failed,
			l["mean_ttft_ms"], l["median_ttft_ms"], l[p+"_ttft_ms"], l["mean_tpot_ms"], l["median_e2el_ms"])
	}
	fmt.Fprintln(w, "(latencies in ms)")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// policyJSON adds the policy keys to the result JSON's "frontier" object:
// scheduling_policy when not fcfs, and "classes" (bench serve's keys per
// class: completed, failed, token totals and every ttft/tpot/e2el
// statistic) when the workload has classes.
func policyJSON(fr map[string]any, st *sim.Setup, res *sim.Result, s sim.BenchSummary) {
	for _, d := range st.Pools {
		if d.SchedulingPolicy != "fcfs" {
			key := "scheduling_policy"
			if d.Pool != "" {
				key = d.Pool + "_scheduling_policy"
			}
			fr[key] = d.SchedulingPolicy
		}
	}
	classes := sim.SummarizeClasses(res, s.Percentiles, sim.SLO{})
	if classes == nil {
		return
	}
	var out []map[string]any
	for _, c := range classes {
		m := map[string]any{
			"name": c.Name, "priority": c.Priority, "completed": c.Completed, "failed": c.Failed,
			"total_input_tokens": c.TotalInputTokens, "total_output_tokens": c.TotalOutputTokens,
		}
		for k, v := range c.Latencies {
			if !strings.Contains(k, "_itl_") {
				m[k] = v
			}
		}
		out = append(out, m)
	}
	fr["classes"] = out
}
