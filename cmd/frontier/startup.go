package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

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
	s, st, err := sim.Build(sc, opt)
	resumeGC(gc)
	return s, st, err
}

// resumeGC turns the collector back on at gc percent (GOGC) after the
// build, without the collection that SetGCPercent would start at once:
// the runtime has not collected yet, so its goal is its 4 MiB minimum,
// though all the build made is live (a one-request run then spent a tenth
// of its instructions marking it). Instead the collector stays off under a
// memory limit gc % above what the runtime holds now, where its first
// collection would come had it measured the build's heap; a cleanup on an
// object that first collection frees puts GOGC and the previous limit
// back. A run too short to grow that much never collects.
func resumeGC(gc int) {
	if gc < 0 {
		return // GOGC=off stays off
	}
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	total, heap := sample[0].Value.Uint64(), sample[1].Value.Uint64()
	prev := debug.SetMemoryLimit(int64(total + heap*uint64(gc)/100))
	marker := new([64]byte) // not a tiny allocation: freed by the first collection
	runtime.AddCleanup(marker, func(limit int64) {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}, prev)
}

// stepByStepEnv names the environment variable that turns the decode
// cohort and macro-step off.
const stepByStepEnv = "FRONTIER_STEP_BY_STEP"
