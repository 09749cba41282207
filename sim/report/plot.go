package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"frontier/sim"
)

// PlotFormats are the image formats --plot-format accepts (gonum/plot's
// canvases: vgimg, vgsvg, vgpdf, vgeps).
var PlotFormats = []string{"png", "svg", "pdf", "eps", "jpg", "jpeg", "tif", "tiff"}

// PlotInput is what the run plots show.
type PlotInput struct {
	// Title names the deployment and the workload; every figure carries it.
	Title    string
	Rows     []Row   // the timeline (its total rows are plotted)
	Stages   []int64 // workload stage starts, ns
	Requests []sim.RequestRecord
}

// PlotNames are the run figures, each written once per format:
// timeline (running and waiting requests, KV cache usage %, generation
// tokens/s, over simulated time, stage starts marked), latency-cdf (CDFs
// of TTFT, TPOT and E2EL of successful requests, ms) and ttft-vs-arrival
// (each request's TTFT against its send time).
var PlotNames = []string{"timeline", "latency-cdf", "ttft-vs-arrival"}

// WritePlots writes the run figures into dir (which must exist) in each
// format and returns the files written.
func WritePlots(dir string, formats []string, in PlotInput) ([]string, error) {
	var files []string
	figs := map[string]func() ([][]*plot.Plot, vg.Length, vg.Length, error){
		"timeline":        func() ([][]*plot.Plot, vg.Length, vg.Length, error) { return timelinePlots(in) },
		"latency-cdf":     func() ([][]*plot.Plot, vg.Length, vg.Length, error) { return cdfPlots(in) },
		"ttft-vs-arrival": func() ([][]*plot.Plot, vg.Length, vg.Length, error) { return ttftPlot(in) },
	}
	for _, name := range PlotNames {
		grid, w, h, err := figs[name]()
		if err != nil {
			return files, fmt.Errorf("plot %s: %w", name, err)
		}
		for _, f := range formats {
			path := filepath.Join(dir, name+"."+f)
			if err := saveGrid(path, f, in.Title, grid, w, h); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// saveGrid draws title across the top of the figure and plots on a grid
// of tiles under it into path.
func saveGrid(path, format, title string, grid [][]*plot.Plot, w, h vg.Length) error {
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	sty := plot.New().Title.TextStyle
	sty.Font.Size = vg.Points(13)
	rect := sty.Rectangle(title)
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Millimeter*2 - rect.Max.Y}, title)
	dc = draw.Crop(dc, 0, 0, 0, -(rect.Size().Y + vg.Millimeter*3))
	tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	cs := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			p.Draw(cs[i][j])
		}
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

var (
	blue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green  = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	red    = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	grey   = color.RGBA{R: 120, G: 120, B: 120, A: 255}
)

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

func addLine(p *plot.Plot, xys plotter.XYs, c color.Color, legend string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1.2)
	p.Add(l)
	if legend != "" {
		p.Legend.Add(legend, l)
	}
	return nil
}

// timelinePlots: three panels over time from the timeline's total rows.
func timelinePlots(in PlotInput) ([][]*plot.Plot, vg.Length, vg.Length, error) {
	var run, wait, kv, gen plotter.XYs
	for _, r := range in.Rows {
		if r.Engine != -1 {
			continue
		}
		t := sec(r.EndNs)
		run = append(run, plotter.XY{X: t, Y: float64(r.Running)})
		wait = append(wait, plotter.XY{X: t, Y: float64(r.Waiting)})
		kv = append(kv, plotter.XY{X: t, Y: 100 * r.KVUsage})
		rate := 0.0
		if dt := sec(r.EndNs - r.StartNs); dt > 0 {
			rate = float64(r.GenerationTokens) / dt
		}
		gen = append(gen, plotter.XY{X: t, Y: rate})
	}
	if len(run) == 0 {
		return nil, 0, 0, fmt.Errorf("empty timeline")
	}
	const x = "simulated time (s)"
	p1 := newPlot("requests in the engine (vllm:num_requests_running, _waiting)", x, "requests")
	p2 := newPlot("KV cache usage (vllm:kv_cache_usage_perc)", x, "KV cache usage (%)")
	p3 := newPlot("output tokens per second (vllm:generation_tokens_total)", x, "output tokens/s")
	p2.Y.Min, p2.Y.Max = 0, 100
	for _, p := range []*plot.Plot{p1, p2, p3} {
		p.X.Min, p.Y.Min = 0, 0
	}
	if err := addLine(p1, run, blue, "running"); err != nil {
		return nil, 0, 0, err
	}
	if err := addLine(p1, wait, orange, "waiting"); err != nil {
		return nil, 0, 0, err
	}
	if err := addLine(p2, kv, green, ""); err != nil {
		return nil, 0, 0, err
	}
	if err := addLine(p3, gen, red, ""); err != nil {
		return nil, 0, 0, err
	}
	if len(in.Stages) > 1 {
		var xs []float64
		for _, s := range in.Stages {
			xs = append(xs, sec(s))
		}
		for _, p := range []*plot.Plot{p1, p2, p3} {
			p.Add(vlines(xs))
		}
		p1.Legend.Add("stage start", vlines(xs))
	}
	return [][]*plot.Plot{{p1}, {p2}, {p3}}, 10 * vg.Inch, 9 * vg.Inch, nil
}

// empty marks a panel without data: why, in its title, over unit axes.
func empty(p *plot.Plot, why string) {
	p.Title.Text += "\n(" + why + ")"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
}

// vlines marks x positions (stage starts) across a panel.
type vlines []float64

func (v vlines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, x := range v {
		px := trX(x)
		c.StrokeLine2(v.style(), px, c.Min.Y, px, c.Max.Y)
	}
}

func (v vlines) style() draw.LineStyle {
	return draw.LineStyle{Color: grey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
}

// Thumbnail draws the legend entry.
func (v vlines) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(v.style(), c.Min.X, y, c.Max.X, y)
}

// cdfPlots: empirical CDFs of TTFT, TPOT, E2EL (ms) of successful requests.
func cdfPlots(in PlotInput) ([][]*plot.Plot, vg.Length, vg.Length, error) {
	var ttft, tpot, e2e []float64
	for i := range in.Requests {
		r := &in.Requests[i]
		if r.Failed || r.FinishNs < 0 {
			continue
		}
		ttft = append(ttft, float64(r.TTFTNs())/1e6)
		e2e = append(e2e, float64(r.E2ENs())/1e6)
		if r.OutputTokens > 1 {
			tpot = append(tpot, r.TPOTNs()/1e6)
		}
	}
	row := []*plot.Plot{}
	for _, m := range []struct {
		name string
		xs   []float64
	}{{"TTFT", ttft}, {"TPOT", tpot}, {"E2EL", e2e}} {
		p := newPlot(m.name+" CDF (successful requests)", m.name+" (ms)", "fraction of requests")
		p.Y.Min, p.Y.Max = 0, 1
		if len(m.xs) == 0 {
			// A valid run can leave a panel empty (one output token per
			// request has no TPOT; every request may have timed out): the
			// panel says so and the figure is still drawn.
			empty(p, "no successful request has a "+m.name)
		} else if err := addLine(p, cdf(m.xs), blue, ""); err != nil {
			return nil, 0, 0, err
		}
		row = append(row, p)
	}
	return [][]*plot.Plot{row}, 14 * vg.Inch, 5 * vg.Inch, nil
}

// cdf returns the empirical CDF of xs as a step line, at most ~2,000
// points (every k-th order statistic beyond that, the last one kept).
func cdf(xs []float64) plotter.XYs {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	step := max(1, n/2000)
	var out plotter.XYs
	for i := 0; i < n; i += step {
		out = append(out, plotter.XY{X: s[i], Y: float64(i+1) / float64(n)})
	}
	if out[len(out)-1].Y != 1 {
		out = append(out, plotter.XY{X: s[n-1], Y: 1})
	}
	return out
}

// ttftPlot: TTFT of each request against its send time.
func ttftPlot(in PlotInput) ([][]*plot.Plot, vg.Length, vg.Length, error) {
	var ok, failed plotter.XYs
	for i := range in.Requests {
		r := &in.Requests[i]
		if r.SendNs < 0 || r.FirstTokenNs < 0 {
			continue
		}
		xy := plotter.XY{X: sec(r.SendNs), Y: float64(r.TTFTNs()) / 1e6}
		if r.Failed {
			failed = append(failed, xy)
		} else {
			ok = append(ok, xy)
		}
	}
	p := newPlot("TTFT per request against its arrival", "arrival (send) time (s)", "TTFT (ms)")
	if len(ok)+len(failed) == 0 {
		empty(p, "no request received a first token")
	}
	for _, s := range []struct {
		xys    plotter.XYs
		c      color.Color
		legend string
	}{{ok, blue, "completed"}, {failed, red, "failed (first token received)"}} {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return nil, 0, 0, err
		}
		sc.GlyphStyle.Color = s.c
		sc.GlyphStyle.Radius = vg.Points(1.2)
		p.Add(sc)
		p.Legend.Add(s.legend, sc)
	}
	if len(in.Stages) > 1 {
		var xs []float64
		for _, s := range in.Stages {
			xs = append(xs, sec(s))
		}
		p.Add(vlines(xs))
	}
	return [][]*plot.Plot{{p}}, 10 * vg.Inch, 6 * vg.Inch, nil
}

// PercentilePanel is one latency's percentiles, measured and simulated,
// in seconds at the same percentiles (0–100).
type PercentilePanel struct {
	Name        string
	Percentiles []float64
	Measured    []float64
	Simulated   []float64
}

// WritePercentilePlot writes one figure of panels side by side to
// path.format for each format: measured and simulated percentiles (s)
// against the percentile, on a logit axis (log10(p ÷ (100 − p)), p0 and
// p100 drawn at p0.01 and p99.99) so both tails are as wide as the body.
func WritePercentilePlot(path string, formats []string, title string, panels []PercentilePanel) ([]string, error) {
	var row []*plot.Plot
	for _, pn := range panels {
		p := newPlot(pn.Name+" percentiles: measured vs simulated", "percentile", pn.Name+" (s)")
		var ticks []plot.Tick
		var meas, simv plotter.XYs
		for i, q := range pn.Percentiles {
			x := logit(q)
			ticks = append(ticks, plot.Tick{Value: x, Label: "p" + strconv.FormatFloat(q, 'f', -1, 64)})
			if v := pn.Measured[i]; !math.IsNaN(v) {
				meas = append(meas, plotter.XY{X: x, Y: v})
			}
			if v := pn.Simulated[i]; !math.IsNaN(v) {
				simv = append(simv, plotter.XY{X: x, Y: v})
			}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		for _, s := range []struct {
			xys    plotter.XYs
			c      color.Color
			legend string
		}{{meas, orange, "measured"}, {simv, blue, "simulated"}} {
			if len(s.xys) == 0 {
				// A cell whose simulation (or run) completed no request:
				// the other side is still drawn, the panel says why.
				p.Title.Text += "\n(no " + s.legend + " request succeeded)"
				continue
			}
			if err := addLinePoints(p, s.xys, s.c, s.legend); err != nil {
				return nil, err
			}
		}
		row = append(row, p)
	}
	return saveRow(path, formats, title, row)
}

// logit maps a percentile to log10(p ÷ (100 − p)), p clamped to
// [0.01, 99.99].
func logit(p float64) float64 {
	p = math.Min(math.Max(p, 0.01), 99.99)
	return math.Log10(p / (100 - p))
}

// FileSafe turns a cell name into a file name (slashes become "_").
func FileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' {
			return '_'
		}
		return r
	}, name)
}
