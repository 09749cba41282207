package main

import (
	"fmt"
	"strconv"
	"strings"

	"frontier/sim"
	"frontier/sim/plan"
)

// sweepPlot draws --plot-metric against the sweep's first numeric axis,
// one line per combination of the other keys (per deployment), with the
// --goodput bound of the metric's family as a dashed SLO line.
func sweepPlot(path, metric string, lines []sweepLine, goodput sim.SLO) error {
	keys := keyNames(lines)
	xKey := ""
	for _, k := range keys {
		numeric := true
		for i := range lines {
			if _, err := strconv.ParseFloat(lines[i].key(k), 64); err != nil {
				numeric = false
				break
			}
		}
		if numeric {
			xKey = k
			break
		}
	}
	if xKey == "" {
		return fmt.Errorf("--plot: the sweep has no numeric axis to draw %s against (keys: %s)", metric, strings.Join(keys, ", "))
	}
	var series []plan.Series
	index := map[string]int{}
	for i := range lines {
		l := &lines[i]
		var name []string
		for _, a := range l.Keys {
			if a.Key != xKey {
				name = append(name, a.Key+"="+a.Value)
			}
		}
		label := strings.Join(name, " ")
		if label == "" {
			label = metric
		}
		k, ok := index[label]
		if !ok {
			k = len(series)
			index[label] = k
			series = append(series, plan.Series{Name: label})
		}
		y, ok := l.num(metric)
		if !ok {
			continue // refused
		}
		x, _ := strconv.ParseFloat(l.key(xKey), 64)
		series[k].X = append(series[k].X, x)
		series[k].Y = append(series[k].Y, y)
	}
	var hl []plan.HLine
	for fam, v := range map[string]float64{"ttft": goodput.TTFTMs, "tpot": goodput.TPOTMs, "e2el": goodput.E2ELMs} {
		if v > 0 && strings.HasSuffix(metric, "_"+fam+"_ms") {
			hl = append(hl, plan.HLine{Name: fmt.Sprintf("SLO %s ≤ %g ms", fam, v), Y: v})
		}
	}
	return plan.SavePlot(path, metric+" vs "+xKey, xKey, metric, series, hl)
}

// checkPlotMetric refuses a --plot-metric that is not one of bench
// serve's numeric keys the table shows.
func checkPlotMetric(metric string, percentiles []float64) error {
	allowed := []string{"request_throughput", "output_throughput", "total_token_throughput", "request_goodput", "completed", "failed"}
	for _, m := range sim.Metrics {
		allowed = append(allowed, "mean_"+m+"_ms", "median_"+m+"_ms", "std_"+m+"_ms")
		for _, p := range percentiles {
			allowed = append(allowed, "p"+sim.PercentileLabel(p)+"_"+m+"_ms")
		}
	}
	for _, a := range allowed {
		if a == metric {
			return nil
		}
	}
	return fmt.Errorf("--plot-metric %q: one of bench serve's keys: %s", metric, strings.Join(allowed, ", "))
}
