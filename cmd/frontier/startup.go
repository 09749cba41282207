package main

import (
	"runtime/debug"

	"frontier/scenarios"
	"frontier/sim"
)

// buildRun is sim.Build with the garbage collector off: building
// allocates the run's tables, predictors and plan, which all stay live,
// so collecting meanwhile only cost time (a third of a one-request run's
// instructions). The collector is back on for the run itself.
func buildRun(sc *scenarios.Scenario, opt sim.Options) (*sim.Sim, *sim.Setup, error) {
	gc := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(gc)
	return sim.Build(sc, opt)
}
