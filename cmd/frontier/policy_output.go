package main

import (
	"fmt"
	"io"
	"strings"

	"frontier/sim"
	"frontier/sim/router"
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
	replicasJSON(fr, st, res)
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

// replicaStats is one replica's share of a run (or the whole run's).
type replicaStats struct {
	requests, completed, failed int
	ttft, e2e                   []float64 // ms, completed requests
	prompt, cached              int       // tokens, completed requests
}

// hitRate is the prefix-cache hit rate: cached prompt tokens (the hit at
// each request's first admission) over prompt tokens, completed requests.
func (r *replicaStats) hitRate() float64 {
	if r.prompt == 0 {
		return 0
	}
	return float64(r.cached) / float64(r.prompt)
}

func replicaTable(st *sim.Setup, res *sim.Result) (per []replicaStats, all replicaStats) {
	per = make([]replicaStats, st.Replicas.Count)
	for _, r := range res.Requests {
		for _, s := range []*replicaStats{&per[min(int(r.Replica), len(per)-1)], &all} {
			s.requests++
			if r.Failed || r.FinishNs < 0 {
				s.failed++
				continue
			}
			s.completed++
			s.ttft = append(s.ttft, float64(r.TTFTNs())/1e6)
			s.e2e = append(s.e2e, float64(r.E2ENs())/1e6)
			s.prompt += int(r.PromptTokens)
			s.cached += int(r.CachedTokens)
		}
	}
	return per, all
}

// routerDesc says which router, its weights and its metrics refresh.
func routerDesc(st *sim.Setup) string {
	r := st.Replicas
	d := r.Router
	if r.Router == "weighted" {
		w := r.Weights
		if len(w) == 0 {
			w = router.DefaultWeights
		}
		var parts []string
		for _, k := range router.ScorerNames() {
			if v, ok := w[k]; ok {
				parts = append(parts, fmt.Sprintf("%s=%g", k, v))
			}
		}
		d += " (" + strings.Join(parts, ", ") + ")"
	}
	if r.MetricsIntervalNs == 0 {
		return d + ", metrics read live"
	}
	return d + fmt.Sprintf(", metrics refreshed every %g ms", float64(r.MetricsIntervalNs)/1e6)
}

// printReplicas prints the router and a row per replica when the
// deployment is replicated (nothing for one replica: its summary is the
// single deployment's).
func printReplicas(w io.Writer, line func(string, any), st *sim.Setup, res *sim.Result) {
	if st.Replicas.Count < 2 {
		return
	}
	per, all := replicaTable(st, res)
	fmt.Fprintln(w, center("Replicas", '-'))
	line("Replicas:", fmt.Sprintf("%d × the deployment above", st.Replicas.Count))
	line("Router:", routerDesc(st))
	line("Prefix cache hit rate (%):", fmt.Sprintf("%.2f", 100*all.hitRate()))
	fmt.Fprintf(w, "%-8s %9s %9s %6s %12s %12s %12s\n", "replica", "requests", "completed", "failed", "med TTFT ms", "mean E2EL ms", "prefix hit %")
	for i := range per {
		p := &per[i]
		median, mean := medianAndMean(p.ttft, p.e2e)
		fmt.Fprintf(w, "%-8d %9d %9d %6d %12s %12s %12.2f\n", i, p.requests, p.completed, p.failed, median, mean, 100*p.hitRate())
	}
}

// replicasJSON is the result JSON's frontier.replicas object (one
// replica: absent).
func replicasJSON(fr map[string]any, st *sim.Setup, res *sim.Result) {
	if st.Replicas.Count < 2 {
		return
	}
	per, all := replicaTable(st, res)
	var rows []map[string]any
	for i := range per {
		p := &per[i]
		rows = append(rows, map[string]any{"replica": i, "requests": p.requests, "completed": p.completed, "failed": p.failed,
			"prefix_cache_hit_rate": p.hitRate()})
	}
	weights := st.Replicas.Weights
	if st.Replicas.Router == "weighted" && len(weights) == 0 {
		weights = router.DefaultWeights
	}
	fr["replicas"] = map[string]any{
		"count": st.Replicas.Count, "router": st.Replicas.Router, "weights": weights,
		"metrics_interval_ms":   float64(st.Replicas.MetricsIntervalNs) / 1e6,
		"prefix_cache_hit_rate": all.hitRate(), "per_replica": rows,
	}
}
