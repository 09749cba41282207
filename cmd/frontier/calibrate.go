package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"frontier/calibration"
	"frontier/predictor"
	"frontier/sim"
)

func newCalibrateCmd() *cobra.Command {
	var (
		cells, out, startFile string
		train                 []string
		maxEvals              int
	)
	cmd := &cobra.Command{
		Use:   "calibrate --train CELL... --out FILE",
		Short: "Fit the host and front-end terms to training cells' ground truth",
		Long: `Fit the host and front-end constants (calibration.FitParams: request_overhead_ns,
step_gap_ns, layer_gap_ns, process_per_req_ns, api_request_ns, api_token_ns)
by Nelder–Mead on the gated metrics of the training cells, and write a
calibration file recording the cells it saw, the fitted values and the
residuals. The search starts from the committed fit or from --start FILE;
it finds a local minimum, so try more than one start. --train takes scenario
files or substrings of scenario file names under --cells (for example
--train llama-2-7b --train mixtral). Report held-out cells with
'frontier gate --calibration FILE'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(train) == 0 {
				return bad(fmt.Errorf("--train: give at least one training cell (scenario file or name substring)"))
			}
			if out == "" {
				return bad(fmt.Errorf("--out: required (calibration JSON to write)"))
			}
			if maxEvals < 1 {
				return bad(fmt.Errorf("--max-evals: must be ≥ 1, got %d", maxEvals))
			}
			if err := checkWritable("--out", out); err != nil {
				return bad(err)
			}
			files, err := trainFiles(cells, train)
			if err != nil {
				return bad(err)
			}
			var cs []*calibration.Cell
			for _, f := range files {
				c, err := calibration.LoadCell(f)
				if err != nil {
					return bad(err)
				}
				cs = append(cs, c)
			}
			errw := cmd.ErrOrStderr()
			fmt.Fprintf(errw, "calibrate: %d training scenarios\n", len(cs))
			// Start from the committed fit unless --start names another
			// calibration file. Nelder–Mead finds a local minimum, so the
			// start can matter: try more than one.
			start, _ := predictor.DefaultHostFor(cs[0].Setup.Hardware.Name)
			if startFile != "" {
				if start, err = sim.LoadHost(startFile); err != nil {
					return bad(fmt.Errorf("--start: %w", err))
				}
			}
			file, err := calibration.Fit(cs, calibration.FitOptions{
				Start: start, MaxEvals: maxEvals, Workers: 2,
				Log: func(f string, a ...any) { fmt.Fprintf(errw, f+"\n", a...) },
			})
			if err != nil {
				return err
			}
			if err := file.Write(out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "objective %.5f after %d evaluations (start: %.5f); training cells %d passed, %d failed (start: %d passed, %d failed)\n",
				file.Objective, file.Evaluations, file.StartObjective, file.Passed, file.Failed, file.StartPassed, file.StartFailed)
			fmt.Fprintf(cmd.OutOrStdout(), "(the fit minimises the objective, the mean squared relative error of the gated metrics, not the failures: a cell near the 10 %% line can flip either way; frontier gate --calibration FILE reports every cell)\nfitted:\n")
			for _, p := range calibration.FitParams {
				fmt.Fprintf(cmd.OutOrStdout(), "  %-22s %12.1f ns\n", p.Name, file.Fitted[p.Name])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cells, "cells", "scenarios/gate", "folder of gate scenarios")
	fl.StringSliceVar(&train, "train", nil, "training cells: scenario files or file-name substrings (repeatable)")
	fl.StringVar(&out, "out", "", "calibration file to write")
	fl.IntVar(&maxEvals, "max-evals", 120, "objective evaluations (each simulates every training cell)")
	fl.StringVar(&startFile, "start", "", "calibration JSON to start the search from (default: the committed fit)")
	return cmd
}

// trainFiles resolves --train values: existing files as given, otherwise
// every scenario under dir whose name contains the value.
func trainFiles(dir string, train []string) ([]string, error) {
	all, err := calibration.ScenarioFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("--cells: %w (the default is relative: run from the repository root, or pass --cells DIR)", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range train {
		matched := false
		if strings.HasSuffix(t, ".yaml") {
			if !seen[t] {
				out = append(out, t)
				seen[t] = true
			}
			continue
		}
		for _, f := range all {
			if strings.Contains(filepath.Base(f), t) {
				matched = true
				if !seen[f] {
					out = append(out, f)
					seen[f] = true
				}
			}
		}
		if !matched {
			return nil, fmt.Errorf("--train %q: no scenario under %s matches", t, dir)
		}
	}
	return out, nil
}
