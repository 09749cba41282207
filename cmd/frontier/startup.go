package main

import (
	"os"
	"runtime/debug"

	"frontier/scenarios"
	"frontier/sim"
)

// buildRun is sim.Build with the garbage collector off: building
// allocates the run's tables, predictors and plan, which all stay live,
// so collecting meanwhile only cost time (a third of a one-request run's
// instructions). The collector is back on for the run itself.
//
// FRONTIER_STEP_BY_STEP=1 in the environment turns the decode cohort and
// macro-step off (sim.Options.StepByStep): the same outputs, slower. It is there to
// compare the two (TestStepByStepSameBytes), not a user option.
func buildRun(sc *scenarios.Scenario, opt sim.Options) (*sim.Sim, *sim.Setup, error) {
	opt.StepByStep = os.Getenv(stepByStepEnv) == "1"
	gc := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(gc)
	return sim.Build(sc, opt)
}

// stepByStepEnv names the environment variable that turns the decode
// cohort and macro-step off.
const stepByStepEnv = "FRONTIER_STEP_BY_STEP"
