package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"frontier/calibration"
	"frontier/predictor"
	"frontier/sim"
)

// errStrict is returned by `gate --strict` when a cell failed (exit 1).
var errStrict = errors.New("gate: at least one cell FAILED (--strict)")

func newGateCmd() *cobra.Command {
	var (
		plots                *gatePlot // gate_plot.go
		cells, calib, format string
		predictorKind        string
		seeds, workers       int
		strict, replay, obs  bool
		only                 []string
	)
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Simulate every measured run and compare TTFT/TPOT/E2E with ground truth (docs/GATE.md)",
		Long: `Simulate every scenario with ground truth in --cells (default
scenarios/gate/) and print, for each stage cell, the gated and reported
metrics: truth, simulated, relative error and PASS/FAIL (or 'reported'),
then 'N passed, M failed' counting cells. Exit 0 when it ran, whatever the
verdicts; --strict exits 1 on any FAIL.

Runs with per-request replay files (<run>/replay/) add reported rows: the
mean TPOT and median TTFT of the requests sent in each quarter of a stage
("tpot_mean@0-150s"), and the memory plan's KV blocks against vLLM's.
--replay sends every request at its real time with its measured prompt
length (a diagnostic: the verdicts that count come from the recipe).

--observations prints, instead of the gate, each run's reconstructed
(running requests, context) → time per output token, real against
simulated, beside the simulator's price of a pure decode step there
(Markdown tables; runs without replay files are skipped).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" && format != "markdown" {
				return bad(fmt.Errorf("--format: must be text, json or markdown, got %q", format))
			}
			if seeds < 1 || seeds > 100 {
				return bad(fmt.Errorf("--seeds: must be in [1, 100], got %d", seeds))
			}
			if predictorKind != "" {
				if err := checkPredictorKind(predictorKind); err != nil {
					return bad(err)
				}
			}
			if workers < 0 {
				name := "--jobs"
				if cmd.Flags().Changed("workers") {
					name = "--workers"
				}
				return bad(fmt.Errorf("%s: must be ≥ 0 (0 = one per CPU), got %d", name, workers))
			}
			if obs {
				// Observations are Markdown tables of one recipe simulation
				// per run: these flags would be ignored, so they are refused.
				for _, f := range []string{"format", "plot", "plot-format", "seeds", "replay", "strict"} {
					if cmd.Flags().Changed(f) {
						return bad(fmt.Errorf("--observations: prints Markdown tables of each run's recipe simulation; --%s does not apply to it", f))
					}
				}
			}
			files, err := calibration.ScenarioFiles(cells)
			if err != nil {
				return bad(fmt.Errorf("--cells: %w (the default is relative: run from the repository root, or pass --cells DIR)", err))
			}
			opt := calibration.GateOptions{Seeds: seeds, Workers: workers, Cells: only, Replay: replay, Predictor: predictorKind}
			if err := plots.prepare(&opt); err != nil {
				return bad(err)
			}
			var mu sync.Mutex
			notes := map[string]string{}
			opt.Note = func(cell, note string) {
				mu.Lock()
				defer mu.Unlock()
				notes[cell] = note
			}
			if calib != "" {
				h, err := sim.LoadHost(calib)
				if err != nil {
					return bad(fmt.Errorf("--calibration: %w", err))
				}
				opt.Host = &h
			}
			if obs {
				runs, err := calibration.Observe(files, opt, 5)
				if err != nil && len(runs) == 0 {
					return bad(err)
				}
				for _, r := range runs {
					if err := calibration.RenderObservations(cmd.OutOrStdout(), r.Run, r.Bins); err != nil {
						return err
					}
				}
				return err
			}
			start := time.Now()
			rows, err := calibration.Gate(files, opt)
			if err != nil && len(rows) == 0 {
				return bad(err)
			}
			for _, cell := range slices.Sorted(maps.Keys(notes)) {
				fmt.Fprintf(cmd.ErrOrStderr(), "gate: %s: %s\n", cell, notes[cell])
			}
			out := cmd.OutOrStdout()
			if format == "markdown" {
				if err := calibration.RenderMarkdown(out, rows, trainCells(calib)); err != nil {
					return err
				}
			} else if format == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rows); err != nil {
					return err
				}
			} else {
				if err := calibration.RenderText(out, rows); err != nil {
					return err
				}
				runs := map[string]bool{}
				for _, r := range rows {
					run, _, _ := strings.Cut(r.Cell, "/")
					runs[run] = true
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "gate: %d scenarios in %.1f s\n", len(runs), time.Since(start).Seconds())
			}
			if err := plots.write(cmd.ErrOrStderr(), rows); err != nil {
				return err
			}
			if err != nil {
				return bad(fmt.Errorf("some scenarios did not run (the rows above are the others):\n%w", err))
			}
			if _, failed := calibration.Verdicts(rows); strict && failed > 0 {
				return errStrict
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cells, "cells", "scenarios/gate", "folder of gate scenarios (YAML with ground_truth)")
	fl.StringVar(&calib, "calibration", "", "host-overhead calibration JSON for every cell (default: each scenario's own)")
	fl.IntVar(&seeds, "seeds", 1, "run each cell with N seeds and report the spread")
	fl.IntVar(&workers, "jobs", 0, "cells simulated in parallel (0 = one per CPU)")
	// --workers: gate's name for it before sweep and capacity said --jobs.
	fl.IntVar(&workers, "workers", 0, "same as --jobs")
	_ = fl.MarkHidden("workers")
	fl.StringVar(&format, "format", "text", "text | json | markdown")
	fl.BoolVar(&strict, "strict", false, "exit 1 when any cell fails")
	fl.StringSliceVar(&only, "only", nil, "run only scenarios whose file name contains one of these strings")
	fl.StringVar(&predictorKind, "predictor", "", predictorUsage+" (default: each scenario's, else interp)")
	fl.BoolVar(&obs, "observations", false, "print each run's reconstructed (batch, context) → time per token, real vs simulated, and the decode step price (Markdown)")
	plots = addGatePlotFlags(fl)
	fl.BoolVar(&replay, "replay", false, "send each run's requests at their real times with their measured prompt lengths (replay files; a diagnostic, not the verdict)")
	return cmd
}

// trainCells names the cells the calibration in use was fitted on: the
// --calibration file's, else the embedded default fit's.
func trainCells(path string) []string {
	data := predictor.CalibrationJSON()
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			data = b
		}
	}
	var f struct {
		TrainCells []string `json:"train_cells"`
	}
	_ = json.Unmarshal(data, &f)
	return f.TrainCells
}
