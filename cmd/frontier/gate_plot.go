package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"frontier/calibration"
	"frontier/sim/report"
)

// gatePlot is `frontier gate --plot DIR`: one figure per cell with the
// measured and simulated percentiles of TTFT and E2E side by side.
type gatePlot struct {
	dir, formats string
	fmts         []string
	mu           sync.Mutex
	cells        []gateCellDist
}

type gateCellDist struct {
	cell      string
	truth     calibration.StageTruth
	ttft, e2e []float64
}

// gatePercentiles are the percentiles inference-perf's lifecycle metrics
// carry (0 is min, 50 the median, 100 max).
var gatePercentiles = []float64{0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100}

func addGatePlotFlags(fl *pflag.FlagSet) *gatePlot {
	g := &gatePlot{}
	fl.StringVar(&g.dir, "plot", "", "write into folder DIR one figure per cell: the measured and simulated percentiles of TTFT and E2E (successful requests), and where the run has replay files a second one (<cell>_windows): mean TPOT and median TTFT by arrival window")
	fl.StringVar(&g.formats, "plot-format", "png,svg", "image formats of --plot: "+strings.Join(report.PlotFormats, ", "))
	return g
}

// prepare checks the flags (before any cell runs) and asks the gate for
// the distributions.
func (g *gatePlot) prepare(opt *calibration.GateOptions) error {
	if g.dir == "" {
		return nil
	}
	var err error
	if g.fmts, err = parsePlotFormats(g.formats); err != nil {
		return err
	}
	if err := checkPlotDir("--plot", g.dir); err != nil {
		return err
	}
	opt.Distributions = func(cell string, truth calibration.StageTruth, ttft, e2e []float64) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.cells = append(g.cells, gateCellDist{cell, truth, ttft, e2e})
	}
	return nil
}

// write draws every cell's figure, in cell-name order, and beside it the
// cell's per-request rows by arrival window (gate_windows_plot.go).
func (g *gatePlot) write(stderr io.Writer, rows []calibration.Row) error {
	if g.dir == "" {
		return nil
	}
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	slices.SortFunc(g.cells, func(a, b gateCellDist) int { return strings.Compare(a.cell, b.cell) })
	n := 0
	for _, c := range g.cells {
		var panels []report.PercentilePanel
		for _, m := range []struct {
			name  string
			truth calibration.Dist
			sim   []float64
		}{{"TTFT", c.truth.TTFT, c.ttft}, {"E2E", c.truth.E2E, c.e2e}} {
			p := report.PercentilePanel{Name: m.name}
			sorted := slices.Clone(m.sim)
			slices.Sort(sorted)
			for _, q := range gatePercentiles {
				v, ok := m.truth.Quantile(q)
				if !ok {
					continue
				}
				p.Percentiles = append(p.Percentiles, q)
				p.Measured = append(p.Measured, v)
				p.Simulated = append(p.Simulated, calibration.Percentile(sorted, q))
			}
			panels = append(panels, p)
		}
		title := fmt.Sprintf("%s (successful requests; measured: inference-perf)", c.cell)
		files, err := report.WritePercentilePlot(filepath.Join(g.dir, report.FileSafe(c.cell)), g.fmts, title, panels)
		if err != nil {
			for _, f := range files {
				os.Remove(f)
			}
			return fmt.Errorf("--plot %s: %w", c.cell, err)
		}
		n += len(files)
		if files, err = g.writeWindowPlot(rows, c.cell); err != nil {
			return fmt.Errorf("--plot %s: %w", c.cell, err)
		}
		n += len(files)
	}
	fmt.Fprintf(stderr, "gate: %d plots in %s\n", n, g.dir)
	return nil
}
