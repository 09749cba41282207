package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WindowPanel is one per-request statistic by arrival window of a stage
// (the gate's "<metric>@<start>-<end>s" rows): measured and simulated,
// in Unit, one value per window [Starts[i], Ends[i]) s from the stage's
// first send; NaN where a side has no value.
type WindowPanel struct {
	Name                string // e.g. "mean TPOT"
	Unit                string // e.g. "ms"
	Starts, Ends        []float64
	Measured, Simulated []float64
}

// WriteWindowPlot writes one figure of panels side by side to
// path.format for each format: each window's measured and simulated value
// at the window's middle.
func WriteWindowPlot(path string, formats []string, title string, panels []WindowPanel) ([]string, error) {
	var row []*plot.Plot
	for _, pn := range panels {
		p := newPlot(pn.Name+" by arrival window: measured vs simulated", "requests sent in window (s from the stage start, window middle)", pn.Name+" ("+pn.Unit+")")
		for _, s := range []struct {
			ys     []float64
			legend string
		}{{pn.Measured, "measured"}, {pn.Simulated, "simulated"}} {
			var xys plotter.XYs
			for i, y := range s.ys {
				if !math.IsNaN(y) && !math.IsInf(y, 0) {
					xys = append(xys, plotter.XY{X: (pn.Starts[i] + pn.Ends[i]) / 2, Y: y})
				}
			}
			if len(xys) == 0 {
				if s.legend == "measured" {
					return nil, fmt.Errorf("%s: no measured window", pn.Name)
				}
				continue
			}
			c := blue
			if s.legend == "measured" {
				c = orange
			}
			if err := addLinePoints(p, xys, c, s.legend); err != nil {
				return nil, err
			}
		}
		row = append(row, p)
	}
	return saveRow(path, formats, title, row)
}

// addLinePoints draws xys as a line with its points in colour c, named
// legend in the legend.
func addLinePoints(p *plot.Plot, xys plotter.XYs, c color.Color, legend string) error {
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, pts.Color = c, c
	p.Add(l, pts)
	p.Legend.Add(legend, l, pts)
	return nil
}

// saveRow writes one row of panels (14 × 5.5 in) under title to
// path.<format> for each format and returns the files written.
func saveRow(path string, formats []string, title string, row []*plot.Plot) ([]string, error) {
	var files []string
	for _, f := range formats {
		out := path + "." + f
		if err := saveGrid(out, f, title, [][]*plot.Plot{row}, 14*vg.Inch, 5.5*vg.Inch); err != nil {
			return files, err
		}
		files = append(files, out)
	}
	return files, nil
}
