package plan

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one line of a chart: points (X[i], Y[i]) under a name.
type Series struct {
	Name string
	X, Y []float64
}

// HLine is a horizontal reference line (an SLO bound) with its label.
type HLine struct {
	Name string
	Y    float64
}

// SavePlot draws series as lines with markers, and hlines dashed, to
// path: PNG or SVG by its extension (gonum/plot), 16 × 10 cm.
func SavePlot(path, title, xLabel, yLabel string, series []Series, hlines []HLine) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	minX, maxX := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		xys := make(plotter.XYs, 0, len(s.X))
		for k := range s.X {
			if math.IsInf(s.Y[k], 0) || math.IsNaN(s.Y[k]) {
				continue
			}
			xys = append(xys, plotter.XY{X: s.X[k], Y: s.Y[k]})
			minX, maxX = math.Min(minX, s.X[k]), math.Max(maxX, s.X[k])
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot %s: %w", s.Name, err)
		}
		l.Color = plotutil.Color(i)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(s.Name, l, pts)
	}
	for i, h := range hlines {
		if math.IsInf(minX, 1) {
			break
		}
		l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: h.Y}, {X: maxX, Y: h.Y}})
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = color.RGBA{R: 200, A: 255}
		if i > 0 {
			l.Color = color.RGBA{R: 120, G: 60, A: 255}
		}
		p.Add(l)
		p.Legend.Add(h.Name, l)
	}
	p.Add(plotter.NewGrid())
	if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// SaveFront draws every deployment's curve (output tok/s per GPU against
// per user) and the Pareto front through them, to path (PNG or SVG).
func SaveFront(path, title string, points, front []CurvePoint) error {
	var series []Series
	index := map[string]int{}
	for _, p := range points {
		k, ok := index[p.Deployment]
		if !ok {
			k = len(series)
			index[p.Deployment] = k
			series = append(series, Series{Name: p.Deployment})
		}
		series[k].X = append(series[k].X, p.PerUser)
		series[k].Y = append(series[k].Y, p.PerGPU)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "output tok/s per user (1000 / mean TPOT ms)"
	p.Y.Label.Text = "output tok/s per GPU"
	p.Legend.Top = true
	for i, s := range series {
		xys := make(plotter.XYs, len(s.X))
		for k := range s.X {
			xys[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(sc)
		p.Legend.Add(s.Name, sc)
	}
	// Room on the right for the legend, which gonum draws inside the
	// plot area.
	maxX := 0.0
	for _, pt := range points {
		maxX = math.Max(maxX, pt.PerUser)
	}
	p.X.Min, p.X.Max = 0, maxX*1.5
	p.Y.Min = 0
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	fr := make(plotter.XYs, len(front))
	for i, f := range front {
		fr[i] = plotter.XY{X: f.PerUser, Y: f.PerGPU}
	}
	if len(fr) > 0 {
		l, err := plotter.NewLine(fr)
		if err != nil {
			return err
		}
		l.Width = vg.Points(1.5)
		l.Color = color.Black
		p.Add(l)
		p.Legend.Add("Pareto front", l)
	}
	p.Add(plotter.NewGrid())
	p.Legend.ThumbnailWidth = vg.Points(12)
	if err := p.Save(20*vg.Centimeter, 14*vg.Centimeter, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
