package calibration

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/optimize"

	"frontier/predictor"
)

// Param is one fitted constant of the host model: its name in the
// calibration file, where it lives, and its scale (ns) — the optimizer
// works on value/scale so every parameter moves on the same footing.
type Param struct {
	Name  string
	Scale float64
	Field func(h *predictor.HostModel) *float64
}

// FitParams are the constants `frontier calibrate` fits: host and runtime
// terms the operator tables cannot measure, shared by every model and
// deployment on a hardware and vLLM version (GATE.md: at most 8).
//   - request_overhead_ns: the API server's time per request before the
//     engine sees it (HTTP, tokenization, hand-off): shifts TTFT and E2E.
//   - step_gap_ns: GPU idle per engine step (inputs to the device, sampled
//     tokens back, synchronisation): adds to every step.
//   - layer_gap_ns: GPU idle per layer per step at kernel boundaries,
//     which isolated kernel timings do not include.
//   - process_per_req_ns: host time per scheduled request per step; it
//     matters only where host work outgrows the device (async overlap).
//   - api_request_ns, api_token_ns: the API server process's CPU work per
//     request and per streamed output token; one process serves them in
//     turn, so they queue at high token rates (TTFT tails, slower E2E).
var FitParams = []Param{
	{"request_overhead_ns", 1e6, func(h *predictor.HostModel) *float64 { return &h.RequestOverheadNs }},
	{"step_gap_ns", 1e5, func(h *predictor.HostModel) *float64 { return &h.StepGapNs }},
	{"layer_gap_ns", 1e4, func(h *predictor.HostModel) *float64 { return &h.LayerGapNs }},
	{"process_per_req_ns", 1e4, func(h *predictor.HostModel) *float64 { return &h.ProcessPerReqNs }},
	{"api_request_ns", 1e5, func(h *predictor.HostModel) *float64 { return &h.APIRequestNs }},
	{"api_token_ns", 1e4, func(h *predictor.HostModel) *float64 { return &h.APITokenNs }},
}

// File is a calibration file: the host model to use and how it was fitted.
type File struct {
	Hardware   string              `json:"hardware"`
	VLLM       string              `json:"vllm"`
	Created    string              `json:"created"`
	Host       predictor.HostModel `json:"host"`
	Fitted     map[string]float64  `json:"fitted"`
	TrainCells []string            `json:"train_cells"`
	// Objective is the mean squared relative error over the training
	// cells' gated metrics at the fit.
	Objective   float64 `json:"objective"`
	Evaluations int     `json:"evaluations"`
	// Passed and Failed count the training cells' gate verdicts at the fit
	// (Verdicts); the Start fields are the objective and verdicts at the
	// search's first point (the start file's values; a zero one starts at
	// half its scale). The fit minimises the objective, not the failures:
	// a cell near the 10 % line can flip either way.
	Passed         int     `json:"passed"`
	Failed         int     `json:"failed"`
	StartObjective float64 `json:"start_objective"`
	StartPassed    int     `json:"start_passed"`
	StartFailed    int     `json:"start_failed"`
	// Residuals are the training rows at the fit (rel_err per metric).
	Residuals []Row `json:"residuals"`
}

// FitOptions steer Fit.
type FitOptions struct {
	Start    predictor.HostModel // starting point (other fields kept)
	MaxEvals int                 // objective evaluations (0 = 120)
	Workers  int                 // cells simulated in parallel
	Log      func(format string, args ...any)
}

// Objective is the mean squared relative error of the gated rows of the
// cells that are not overloaded (an overloaded cell's figures are set by
// the client timeout and capacity collapse, not by host terms).
func Objective(rows []Row) float64 {
	var sum float64
	n := 0
	for _, r := range rows {
		if !r.Gated || r.Metric == MetricSuccesses || r.Metric == MetricSuccessRPS {
			continue
		}
		e := r.RelErr
		if math.IsNaN(e) || math.IsInf(e, 0) {
			e = 10
		}
		sum += e * e
		n++
	}
	if n == 0 {
		return math.Inf(1)
	}
	return sum / float64(n)
}

// EvaluateAll simulates every cell under host, workers at a time, and
// returns their rows in cell order.
func EvaluateAll(cells []*Cell, host *predictor.HostModel, workers int) ([]Row, error) {
	out := make([][]Row, len(cells))
	errs := make([]error, len(cells))
	sem := make(chan struct{}, max(1, workers))
	var wg sync.WaitGroup
	for i, c := range cells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = c.Evaluate(host, 1)
		}()
	}
	wg.Wait()
	var rows []Row
	for i := range cells {
		if errs[i] != nil {
			return nil, errs[i]
		}
		rows = append(rows, out[i]...)
	}
	return rows, nil
}

// Fit minimizes Objective over FitParams (Nelder–Mead, gonum/optimize) on
// the training cells. Parameters are kept ≥ 0 (|x| is used).
func Fit(cells []*Cell, opt FitOptions) (*File, error) {
	if len(cells) == 0 {
		return nil, fmt.Errorf("calibrate: no training cells")
	}
	if opt.MaxEvals <= 0 {
		opt.MaxEvals = 120
	}
	all := cells
	cells = nil
	for _, c := range all {
		if c.hasLatencyCells() {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("calibrate: every training cell is overloaded; nothing to fit latencies to")
	}
	hostAt := func(x []float64) predictor.HostModel {
		h := opt.Start
		for i, p := range FitParams {
			*p.Field(&h) = math.Abs(x[i]) * p.Scale
		}
		return h
	}
	evals := 0
	var evalErr error
	var startRows []Row
	bestF, bestX := math.Inf(1), []float64(nil)
	f := func(x []float64) float64 {
		h := hostAt(x)
		rows, err := EvaluateAll(cells, &h, opt.Workers)
		evals++
		if err != nil {
			evalErr = err
			return math.Inf(1)
		}
		v := Objective(rows)
		if evals == 1 {
			startRows = rows
		}
		if v < bestF {
			bestF, bestX = v, append([]float64(nil), x...)
		}
		if opt.Log != nil {
			opt.Log("eval %3d  objective %.5f  x %v", evals, v, fmtX(x))
		}
		return v
	}
	x0 := make([]float64, len(FitParams))
	for i, p := range FitParams {
		x0[i] = *p.Field(&opt.Start) / p.Scale
		if x0[i] == 0 {
			x0[i] = 0.5
		}
	}
	res, err := optimize.Minimize(optimize.Problem{Func: f}, x0,
		&optimize.Settings{FuncEvaluations: opt.MaxEvals, Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 25}},
		&optimize.NelderMead{SimplexSize: 0.5})
	if evalErr != nil {
		return nil, evalErr
	}
	if err != nil && res == nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	// The best point evaluated (Nelder–Mead's reported point can be worse
	// when it stops early, for example on a small evaluation budget).
	bestAt := res.X
	if bestX != nil {
		bestAt = bestX
	}
	best := hostAt(bestAt)
	rows, err := EvaluateAll(cells, &best, opt.Workers)
	if err != nil {
		return nil, err
	}
	file := &File{
		Hardware: cells[0].Setup.Hardware.Name, VLLM: "0.1x (V1 engine, early 2026)",
		Created: time.Now().UTC().Format(time.RFC3339), Host: best, Fitted: map[string]float64{},
		Objective: Objective(rows), Evaluations: evals, Residuals: rows,
		StartObjective: Objective(startRows),
	}
	file.Passed, file.Failed = Verdicts(rows)
	file.StartPassed, file.StartFailed = Verdicts(startRows)
	for _, p := range FitParams {
		file.Fitted[p.Name] = *p.Field(&best)
	}
	for _, c := range all {
		file.TrainCells = append(file.TrainCells, c.Name)
	}
	sort.Strings(file.TrainCells)
	return file, nil
}

func fmtX(x []float64) string {
	s := ""
	for i, p := range FitParams {
		s += fmt.Sprintf(" %s=%.4g", p.Name, math.Abs(x[i])*p.Scale)
	}
	return s
}

// Write saves the calibration file as indented JSON.
func (f *File) Write(path string) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// hasLatencyCells reports whether any compared stage is not overloaded
// (only those enter the objective; a run that is all overloaded is not
// simulated during the fit).
func (c *Cell) hasLatencyCells() bool {
	if c.Run == nil {
		return true
	}
	for _, k := range c.Stages {
		if !c.Run.Stages[k].Overloaded() {
			return true
		}
	}
	return false
}
