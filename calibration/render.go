package calibration

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// RenderText writes the gate table: one aligned line per row (cell, metric,
// truth, sim, signed relative error (sim − truth) / truth in percent, and
// PASS, FAIL or "reported"; a verdict judges its absolute value),
// then a last line exactly "N passed, M failed" counting cells (Verdicts).
// Values print with 5 significant digits in the rows' own units.
func RenderText(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tmetric\tunit\ttruth\tsim\t(sim−truth)/truth\tverdict")
	for _, r := range rows {
		sim := formatValue(r.Sim)
		if r.Seeds > 1 {
			sim += fmt.Sprintf(" [%s–%s]", formatValue(r.SimMin), formatValue(r.SimMax))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Cell, r.Metric, unitOf(r.Metric), formatValue(r.Truth), sim, signedPercent(signedErr(r)), verdictLabel(r))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("render gate table: %w", err)
	}
	passed, failed := Verdicts(rows)
	if _, err := fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed); err != nil {
		return fmt.Errorf("render gate table: %w", err)
	}
	return nil
}

// unitOf is a gate metric's unit: latencies in seconds, counts in
// requests, rates in requests/s or output tokens/s.
func unitOf(metric string) string {
	switch metric {
	case MetricSuccesses, MetricFailures, MetricCompleted:
		return "requests"
	case MetricSuccessRPS, MetricRequestThroughput:
		return "req/s"
	case MetricOutputThroughput:
		return "tok/s"
	case MetricKVBlocks:
		return "blocks"
	}
	return "s"
}

func verdictLabel(r Row) string {
	switch {
	case !r.Gated:
		return "reported"
	case r.Pass:
		return "PASS"
	default:
		return "FAIL"
	}
}

func formatValue(v float64) string {
	return strconv.FormatFloat(v, 'g', 5, 64)
}

// signedPercent is formatPercent with an explicit + on non-negative values.
func signedPercent(frac float64) string {
	if frac >= 0 {
		return "+" + formatPercent(frac)
	}
	return formatPercent(frac)
}

func formatPercent(frac float64) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return strconv.FormatFloat(frac, 'g', -1, 64)
	}
	return strconv.FormatFloat(100*frac, 'f', 2, 64) + "%"
}

// MarshalJSON writes the row with the keys of docs/GATE.md (cell, metric,
// truth, sim, rel_err = |sim − truth| / truth, gated, pass) plus
// signed_err = (sim − truth) / truth. pass is null on reported-only rows
// (nothing is judged there). JSON has no NaN or infinity, so a non-finite
// value is written as null.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Cell   string   `json:"cell"`
		Metric string   `json:"metric"`
		Truth  *float64 `json:"truth"`
		Sim    *float64 `json:"sim"`
		RelErr *float64 `json:"rel_err"`
		Signed *float64 `json:"signed_err"`
		Gated  bool     `json:"gated"`
		Pass   *bool    `json:"pass"`
		Seeds  int      `json:"seeds,omitempty"`
		SimMin *float64 `json:"sim_min,omitempty"`
		SimMax *float64 `json:"sim_max,omitempty"`
	}{r.Cell, r.Metric, finiteOrNil(r.Truth), finiteOrNil(r.Sim), finiteOrNil(r.RelErr), finiteOrNil(signedErr(r)), r.Gated, passOrNil(r),
		r.Seeds, spreadOrNil(r, r.SimMin), spreadOrNil(r, r.SimMax)})
}

func passOrNil(r Row) *bool {
	if !r.Gated {
		return nil
	}
	p := r.Pass
	return &p
}

func spreadOrNil(r Row, v float64) *float64 {
	if r.Seeds < 2 {
		return nil
	}
	return finiteOrNil(v)
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// MedianGatedRelErr is the median relative error over the gated rows.
func MedianGatedRelErr(rows []Row) float64 {
	var errs []float64
	for _, r := range rows {
		if r.Gated {
			errs = append(errs, r.RelErr)
		}
	}
	sort.Float64s(errs)
	return Percentile(errs, 50)
}

// RenderMarkdown writes the gate as a Markdown section: one table row per
// cell with its gated metrics' relative errors and verdict, the reported
// metrics, the per-request rows by arrival window (WindowRows, one list of
// signed errors per metric, windows in time order), the counts, the median
// error, and which cells the calibration saw (trainCells; those not listed
// are held out).
func RenderMarkdown(w io.Writer, rows []Row, trainCells []string) error {
	train := map[string]bool{}
	for _, c := range trainCells {
		train[c] = true
	}
	type cell struct {
		name string
		rows []Row
	}
	var cells []*cell
	idx := map[string]*cell{}
	for _, r := range rows {
		c, ok := idx[r.Cell]
		if !ok {
			c = &cell{name: r.Cell}
			idx[r.Cell] = c
			cells = append(cells, c)
		}
		c.rows = append(c.rows, r)
	}
	passed, failed := Verdicts(rows)
	fmt.Fprintf(w, "%d passed, %d failed (cells); median relative error over gated metrics %.1f %%.\n\n", passed, failed, 100*MedianGatedRelErr(rows))
	fmt.Fprintln(w, "| cell | fit | verdict | gated: relative error (sim vs truth) | reported only | by arrival window (quarters of the stage; – no real success) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, c := range cells {
		run := strings.SplitN(c.name, "/", 2)[0]
		role := "held out"
		if train[run] {
			role = "train"
		}
		ok, gated := true, false
		var g, rep, windowed []string
		windows := map[string][]string{}
		for _, r := range c.rows {
			if base, span, ok := strings.Cut(r.Metric, "@"); ok {
				if windows[base] == nil {
					windowed = append(windowed, base)
					windows[base] = slices.Repeat([]string{"–"}, ReplayWindows)
				}
				if j := windowIndex(span); j >= 0 && j < ReplayWindows {
					windows[base][j] = signedPercent(signedErr(r))
				}
				continue
			}
			s := fmt.Sprintf("%s %s", r.Metric, signedPercent(signedErr(r)))
			if r.Gated {
				gated = true
				ok = ok && r.Pass
				if !r.Pass {
					s = "**" + s + "**"
				}
				g = append(g, s)
			} else {
				rep = append(rep, s)
			}
		}
		verdict := "PASS"
		if !ok || !gated {
			verdict = "FAIL"
		}
		for i, base := range windowed {
			windowed[i] = base + " " + strings.Join(windows[base], " / ")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", c.name, role, verdict, strings.Join(g, ", "), strings.Join(rep, ", "), strings.Join(windowed, "; "))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// windowIndex is the position of a WindowRows span "lo-his" among the
// stage's equal windows (lo / (hi − lo)), -1 if it does not parse.
func windowIndex(span string) int {
	lo, hi, ok := strings.Cut(strings.TrimSuffix(span, "s"), "-")
	a, errA := strconv.ParseFloat(lo, 64)
	b, errB := strconv.ParseFloat(hi, 64)
	if !ok || errA != nil || errB != nil || b <= a {
		return -1
	}
	return int(math.Round(a / (b - a)))
}

// signedErr is (sim − truth) / truth, so the reader sees the direction.
func signedErr(r Row) float64 {
	if r.Truth == 0 {
		return r.RelErr
	}
	return (r.Sim - r.Truth) / r.Truth
}
