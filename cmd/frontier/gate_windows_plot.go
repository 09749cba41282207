package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"frontier/calibration"
	"frontier/sim/report"
)

// windowPanels turns a cell's per-request rows ("tpot_mean@0-150s",
// "ttft_median@0-150s", calibration.WindowRows) into plot panels, in ms.
func windowPanels(rows []calibration.Row, cell string) []report.WindowPanel {
	byName := map[string]*report.WindowPanel{}
	var order []string
	for _, r := range rows {
		base, span, ok := strings.Cut(r.Metric, "@")
		if r.Cell != cell || !ok {
			continue
		}
		lo, hi, ok := strings.Cut(strings.TrimSuffix(span, "s"), "-")
		a, errA := strconv.ParseFloat(lo, 64)
		b, errB := strconv.ParseFloat(hi, 64)
		if !ok || errA != nil || errB != nil {
			continue
		}
		p := byName[base]
		if p == nil {
			name := map[string]string{calibration.MetricTPOTMean: "mean TPOT", calibration.MetricTTFTMedian: "median TTFT"}[base]
			if name == "" {
				name = base
			}
			p = &report.WindowPanel{Name: name, Unit: "ms"}
			byName[base] = p
			order = append(order, base)
		}
		p.Starts, p.Ends = append(p.Starts, a), append(p.Ends, b)
		p.Measured, p.Simulated = append(p.Measured, r.Truth*1e3), append(p.Simulated, r.Sim*1e3)
	}
	var out []report.WindowPanel
	for _, b := range order {
		out = append(out, *byName[b])
	}
	return out
}

// writeWindowPlot draws a cell's per-request rows, if it has any, as
// <cell>_windows.<format>; it returns the files written.
func (g *gatePlot) writeWindowPlot(rows []calibration.Row, cell string) ([]string, error) {
	panels := windowPanels(rows, cell)
	if len(panels) == 0 {
		return nil, nil
	}
	title := cell + " (successful requests)"
	files, err := report.WriteWindowPlot(filepath.Join(g.dir, report.FileSafe(cell)+"_windows"), g.fmts, title, panels)
	if err != nil {
		for _, f := range files {
			os.Remove(f)
		}
	}
	return files, err
}
