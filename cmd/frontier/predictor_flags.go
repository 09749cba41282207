package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"frontier/predictor"
	"frontier/scenarios"
)

// predictorFlag is --predictor: how the operator tables are read (issue 16).
type predictorFlag struct {
	kind string
}

// predictorUsage is the help of --predictor, shared by simulate and gate.
const predictorUsage = "how operator tables are read: interp (interpolate between measured rows) | " +
	"regression (per-series regressions on FLOPs, bytes and shape: smooths noise, extends past the grids; scenario key predictor)"

// addPredictorFlag registers --predictor (a Frontier flag: vLLM has none).
func addPredictorFlag(fl *pflag.FlagSet, f *predictorFlag) {
	fl.StringVar(&f.kind, "predictor", "", predictorUsage+` (default: the scenario's, else interp)`)
}

// applyPredictorFlag copies --predictor into the scenario when given.
func applyPredictorFlag(sc *scenarios.Scenario, f *predictorFlag, set func(string) bool) error {
	if !set("predictor") {
		return nil
	}
	if err := checkPredictorKind(f.kind); err != nil {
		return err
	}
	sc.Predictor = f.kind
	return nil
}

// checkPredictorKind refuses a --predictor value other than interp or
// regression, naming the flag.
func checkPredictorKind(kind string) error {
	if kind != predictor.PredictorInterp && kind != predictor.PredictorRegression {
		return fmt.Errorf("--predictor: must be interp or regression, got %q", kind)
	}
	return nil
}
