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
	var outCSV, outJSONL, resultDir string
	cmd := &cobra.Command{
		Use:   "merge FILE…",
		Short: "Join the --out-jsonl files of a sharded sweep into what the unsharded sweep writes",
		Long: `Read the --out-jsonl files of every shard of one sweep (--shard I/N)
and write exactly what the unsharded sweep writes: the table on stdout,
and --out-csv, --out-jsonl, --result-dir when given. Files of different
sweeps (another fingerprint), a point in two files and missing points are
errors.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return bad(fmt.Errorf("merge: give the shards' --out-jsonl files"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if err := checkOutputs(outCSV, outJSONL, resultDir); err != nil {
				return bad(err)
			}
			raw := make([][]byte, ls.Head.Points)
			for k := range raw {
				raw[k] = ls.ByPt[k]
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
			return renderSweep(cmd, raw, outCSV)
		},
	}
	cmd.Flags().StringVar(&outCSV, "out-csv", "", "write the table as CSV to FILE")
	cmd.Flags().StringVar(&outJSONL, "out-jsonl", "", "write the merged JSON lines to FILE")
	cmd.Flags().StringVar(&resultDir, "result-dir", "", "write one bench serve result JSON per point into DIR")
	return cmd
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
