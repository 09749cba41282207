package calibration

import (
	"fmt"

	"frontier/predictor"
	"frontier/sim/engine"
)

// CellObservations reconstructs a run's (batch, context) → per-token time
// observations from its replay files (the truth) and from a recipe
// simulation of the same cell (host: nil = the scenario's own), and bins
// them next to the predictor's price of a pure decode step (a CUDA-graph
// step of b decodes at mean context c, as the simulator prices it, with
// async scheduling as deployed). Runs without replay files are an error.
func (c *Cell) CellObservations(host *predictor.HostModel, minN int) ([]ObservationBin, error) {
	if c.Replay == nil || c.Run == nil {
		return nil, fmt.Errorf("%s: no per-request replay files (want %s)", c.Path, c.replayDir())
	}
	res, err := simulate(c.Setup, host)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	sp := c.Scenario.Workload.SharedPrefix
	promptLen := 0
	if sp != nil {
		promptLen = sp.PromptLen
	}
	out, seqs := c.Run.OutputLen, c.Setup.Engine.MaxNumSeqs
	real := Reconstruct(ReplayLives(c.Replay.Requests, promptLen), out, seqs)
	simulated := Reconstruct(SimLives(res), out, seqs)
	cfg := c.Setup.Pred
	if host != nil {
		cfg.Host = *host
	}
	p, err := predictor.New(cfg)
	if err != nil {
		return nil, err
	}
	pad := engine.NewPadTable(c.Setup.Capture)
	step := func(b int, ctx float64) float64 {
		b = max(1, b)
		padded, graph := pad.Pad(b)
		if !graph {
			padded = b
		}
		batch := &predictor.Batch{NumTokens: b, PaddedTokens: padded, Graph: graph, NumDecodes: b,
			DecodeCtxSum: int64(float64(b) * ctx), NumSampled: b, NumRequests: b, NumRunning: b}
		return float64(p.Step(batch, c.Setup.Async).WallNs) / 1e6
	}
	return BinObservations(real, simulated, step, minN), nil
}

// RunObservations is one run's binned observations (CellObservations).
type RunObservations struct {
	Run  string
	Bins []ObservationBin
}

// Observe computes CellObservations for every scenario in files that
// opt.Cells keeps and that has replay files (the others are skipped),
// with buckets of at least minN real observations.
func Observe(files []string, opt GateOptions, minN int) ([]RunObservations, error) {
	return forEachScenario(files, opt, func(f string) ([]RunObservations, error) {
		c, err := loadCell(f, opt)
		if err != nil {
			return nil, err
		}
		if c.Replay == nil {
			return nil, nil
		}
		bins, err := c.CellObservations(opt.Host, minN)
		if err != nil {
			return nil, err
		}
		return []RunObservations{{Run: c.Name, Bins: bins}}, nil
	})
}
