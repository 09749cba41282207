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
// --goodput bound of the metric's family (carried by the lines) as a
// dashed SLO line.
func sweepPlot(path, metric string, lines []sweepLine) error {
	xKey, err := plotAxis(lines, metric)
	if err != nil {
		return err
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
	if len(lines) > 0 {
		for fam, v := range lines[0].Goodput {
			if v > 0 && strings.HasSuffix(metric, "_"+fam+"_ms") {
				hl = append(hl, plan.HLine{Name: fmt.Sprintf("SLO %s ≤ %g ms", fam, v), Y: v})
			}
		}
	}
	return plan.SavePlot(path, metric+" vs "+xKey, xKey, metric, series, hl)
}

// plotAxis is the first of the lines' keys whose every value is a
// number: the x axis of --plot. Only the keys are read, so the points'
// keys check a plot before the sweep runs.
func plotAxis(lines []sweepLine, metric string) (string, error) {
	keys := keyNames(lines)
	for _, k := range keys {
		numeric := true
		for i := range lines {
			if _, err := strconv.ParseFloat(lines[i].key(k), 64); err != nil {
				numeric = false
				break
			}
		}
		if numeric {
			return k, nil
		}
	}
	return "", fmt.Errorf("--plot: the sweep has no numeric axis to draw %s against (keys: %s)", metric, strings.Join(keys, ", "))
}

// checkPlotMetric refuses a --plot-metric that is not one of bench
// serve's numeric keys the table shows, and request_goodput without
// --goodput (null in every row).
func checkPlotMetric(metric string, percentiles []float64, goodput bool) error {
	if metric == "request_goodput" && !goodput {
		return fmt.Errorf("--plot-metric request_goodput: null without --goodput (bench serve's SLOs, e.g. --goodput ttft:500)")
	}
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
