package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"frontier/sim/plan"
)

func newSweepMergeCmd() *cobra.Command {
	var outCSV, outJSONL, resultDir, plotPath, plotMetric string
	cmd := &cobra.Command{
		Use:   "merge FILE…",
		Short: "Join the --out-jsonl files of a sharded sweep into what the unsharded sweep writes",
		Long: `Read the --out-jsonl files of every shard of one sweep (--shard I/N)
and write exactly what the unsharded sweep writes: the table on stdout,
and --out-csv, --out-jsonl, --result-dir and --plot when given. Files of
different sweeps (another fingerprint), a point in two files and missing
points are errors.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return bad(fmt.Errorf("merge: give the shards' --out-jsonl files"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(outCSV, outJSONL, resultDir, plotPath); err != nil {
				return bad(err)
			}
			var data [][]byte
			for _, a := range args {
				d, err := os.ReadFile(a)
				if err != nil {
					return bad(fmt.Errorf("merge: %w", err))
				}
				data = append(data, d)
			}
			ls, err := plan.ReadLines(args, data, false)
			if err != nil {
				return bad(fmt.Errorf("merge: %w", err))
			}
			if ls.Head.Sweep == "" {
				return bad(fmt.Errorf("merge: %s hold no sweep lines", strings.Join(args, ", ")))
			}
			if miss := ls.Missing(); len(miss) > 0 {
				return bad(fmt.Errorf("merge: %d of %d points missing (e.g. %s): give every shard's file", len(miss), ls.Head.Points, ints(miss, 10)))
			}
			raw := make([][]byte, ls.Head.Points)
			for k := range raw {
				raw[k] = ls.ByPt[k]
			}
			lines, err := decodeLines(raw)
			if err != nil {
				return bad(fmt.Errorf("merge: %w", err))
			}
			if plotPath != "" {
				if err := checkMergePlot(plotPath, plotMetric, lines); err != nil {
					return bad(err)
				}
			}
			out, err := openLineSink(outJSONL, resultDir)
			if err != nil {
				return err
			}
			for _, line := range raw {
				if err := out.add(line); err != nil {
					out.abort()
					return err
				}
			}
			if err := out.close(); err != nil {
				return err
			}
			if err := renderSweep(cmd, raw, outCSV); err != nil || plotPath == "" {
				return err
			}
			if err := sweepPlot(plotPath, plotMetric, lines); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "plot:", plotPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&outCSV, "out-csv", "", "write the table as CSV to FILE")
	cmd.Flags().StringVar(&outJSONL, "out-jsonl", "", "write the merged JSON lines to FILE")
	cmd.Flags().StringVar(&resultDir, "result-dir", "", "write one bench serve result JSON per point into DIR")
	cmd.Flags().StringVar(&plotPath, "plot", "", "draw --plot-metric against the first numeric axis, as frontier sweep --plot, to FILE.png or FILE.svg")
	cmd.Flags().StringVar(&plotMetric, "plot-metric", "p99_ttft_ms", "bench serve key drawn by --plot")
	return cmd
}

// checkMergePlot checks a merge's --plot before anything is written: the
// file, a metric the lines report, and a numeric axis.
func checkMergePlot(path, metric string, lines []sweepLine) error {
	if err := checkPlotPath("--plot", path); err != nil {
		return err
	}
	goodput := false
	for i := range lines {
		goodput = goodput || len(lines[i].Goodput) > 0
	}
	if err := checkPlotMetric(metric, percentiles(lines), goodput); err != nil {
		return err
	}
	_, err := plotAxis(lines, metric)
	return err
}

// ints lists up to n values, then "…".
func ints(xs []int, n int) string {
	var parts []string
	for i, x := range xs {
		if i == n {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, strconv.Itoa(x))
	}
	return strings.Join(parts, ", ")
}
