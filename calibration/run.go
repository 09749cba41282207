package calibration

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"frontier/predictor"
	"frontier/scenarios"
	"frontier/sim"
)

// GateOptions steer a gate run.
type GateOptions struct {
	// Host replaces every cell's host model (a calibration file's fit);
	// nil = each scenario's own (its calibration key or the default).
	Host *predictor.HostModel
	// Seeds runs each cell with seeds s, s+1, …, s+Seeds−1 (s the
	// scenario's seed); rows carry the first seed's value and the spread.
	Seeds int
	// Workers runs cells in parallel (0 = one per CPU).
	Workers int
	// Cells, when non-empty, keeps only runs whose name contains one of
	// these strings.
	Cells []string
	// Replay simulates each run with its real send times and prompt
	// lengths from its replay files (ReplayPlan) instead of the workload
	// recipe: a diagnostic (docs/GATE.md); the verdicts that count come
	// from the recipe. A cell without replay files is then an error.
	Replay bool
	// Predictor, when set (interp | regression), overrides every
	// scenario's predictor key: how the operator tables are read.
	Predictor string
	// Note, when set, receives what each cell's replay used (ReplayInfo);
	// it may be called from several goroutines at once.
	Note func(cell, note string)
	// Distributions, when set, receives each inference-perf cell's truth
	// and the first seed's simulated TTFT and E2E of its successful
	// requests (s, send order), for plots (gate --plot). Cells run in
	// parallel: it must be safe for concurrent use.
	Distributions func(cell string, truth StageTruth, ttft, e2e []float64)
}

// ScenarioFiles lists the *.yaml scenarios of dir, sorted.
func ScenarioFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml scenarios in %s", dir)
	}
	sort.Strings(files)
	return files, nil
}

// Gate simulates every scenario with ground truth in files and compares
// each cell (stage) with it. Rows come in file order; a scenario that
// cannot run is an error naming it (other scenarios still run).
func Gate(files []string, opt GateOptions) ([]Row, error) {
	return forEachScenario(files, opt, func(f string) ([]Row, error) { return GateScenario(f, opt) })
}

// forEachScenario runs do on every scenario file that opt.Cells keeps, on
// opt.Workers goroutines, and returns the results in file order; a file
// that fails is an error naming it (the others still run).
func forEachScenario[T any](files []string, opt GateOptions, do func(string) ([]T, error)) ([]T, error) {
	if len(opt.Cells) > 0 {
		files = slices.DeleteFunc(slices.Clone(files), func(f string) bool {
			for _, c := range opt.Cells {
				if strings.Contains(filepath.Base(f), c) {
					return false
				}
			}
			return true
		})
		if len(files) == 0 {
			return nil, fmt.Errorf("--only %v: no scenario file name matches", opt.Cells)
		}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	out := make([][]T, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = do(f)
		}()
	}
	wg.Wait()
	var all []T
	var msgs []string
	for i := range files {
		all = append(all, out[i]...)
		if errs[i] != nil {
			msgs = append(msgs, errs[i].Error())
		}
	}
	if len(msgs) > 0 {
		return all, fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	return all, nil
}

// GateScenario runs one gate scenario and compares it with its ground truth.
func GateScenario(path string, opt GateOptions) ([]Row, error) {
	c, err := loadCell(path, opt)
	if err != nil {
		return nil, err
	}
	if opt.Replay {
		if c.Run == nil {
			return nil, fmt.Errorf("%s: --replay: needs an inference-perf run with per-request replay files; this cell's ground truth is %s", path, c.Scenario.GroundTruth.Format)
		}
		if c.Replay == nil {
			return nil, fmt.Errorf("%s: --replay: no replay files for this cell (want %s)", path, c.replayDir())
		}
		c.UseReplay = true
	}
	rows, err := c.evaluate(opt.Host, max(1, opt.Seeds), opt.Distributions)
	if err == nil && opt.Replay && opt.Note != nil {
		opt.Note(c.Name, c.ReplayInfo.Note())
	}
	return rows, err
}

// Cell is a gate scenario resolved once, with its ground truth, ready to
// be simulated under different host models (the gate and the fit).
type Cell struct {
	Path     string
	Name     string
	Scenario *scenarios.Scenario
	Setup    *sim.Setup
	Run      *InferencePerfRun // inference-perf ground truth
	Bench    *BenchServeResult // vllm-bench-serve ground truth
	Stages   []int             // stage cells compared
	// Replay holds the run's per-request replay files (<ground truth>/
	// replay/), nil when it has none; ReplayStages is it cut into the
	// run's stages. They add the per-request rows (WindowRows) and the KV
	// capacity check, and drive the simulation when UseReplay is set.
	Replay       *Replay
	ReplayStages [][]ReplayRequest
	UseReplay    bool
	// ReplayInfo says what the last replayed evaluation used.
	ReplayInfo ReplayInfo
}

// replayDir is where a cell's replay files live: replay/ in its
// inference-perf run folder.
func (c *Cell) replayDir() string {
	return filepath.Join(c.Scenario.Resolve(c.Scenario.GroundTruth.Path), "replay")
}

// LoadCell reads and resolves a gate scenario and its ground truth.
func LoadCell(path string) (*Cell, error) { return loadCell(path, GateOptions{}) }

// loadCell is LoadCell with opt.Predictor applied to the scenario.
func loadCell(path string, opt GateOptions) (*Cell, error) {
	sc, err := scenarios.Load(path)
	if err != nil {
		return nil, err
	}
	if opt.Predictor != "" {
		sc.Predictor = opt.Predictor
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sc.GroundTruth == nil {
		return nil, fmt.Errorf("%s: no ground_truth block", path)
	}
	c := &Cell{Path: path, Name: sc.Name, Scenario: sc}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(path), ".yaml")
	}
	if c.Setup, err = sim.Resolve(sc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gt := sc.Resolve(sc.GroundTruth.Path)
	switch sc.GroundTruth.Format {
	case "inference-perf":
		if c.Run, err = ReadInferencePerf(gt); err != nil {
			return nil, err
		}
		if c.Stages, err = selectStages(sc.GroundTruth.Stages, len(c.Run.Stages)); err != nil {
			return nil, fmt.Errorf("%s: ground_truth.stages: %w", path, err)
		}
		if _, err := os.Stat(c.replayDir()); err == nil {
			if c.Replay, err = ReadReplay(c.replayDir()); err != nil {
				return nil, err
			}
			counts := make([]int, len(c.Setup.Plan.Stages))
			for k, st := range c.Setup.Plan.Stages {
				counts[k] = len(st.Requests)
			}
			if c.ReplayStages, err = c.Replay.StageSplit(counts); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	case "vllm-bench-serve":
		if c.Bench, err = ReadBenchServe(gt); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: ground_truth.format: must be inference-perf or vllm-bench-serve, got %q", path, sc.GroundTruth.Format)
	}
	return c, nil
}

// Evaluate simulates the cell with host (nil = the scenario's own) for
// seeds seeds and returns its rows.
func (c *Cell) Evaluate(host *predictor.HostModel, seeds int) ([]Row, error) {
	return c.evaluate(host, seeds, nil)
}

func (c *Cell) evaluate(host *predictor.HostModel, seeds int, dist func(string, StageTruth, []float64, []float64)) ([]Row, error) {
	runs := make([]*sim.Result, max(1, seeds))
	for k := range runs {
		st := c.Setup
		if k > 0 {
			sc := *c.Scenario
			sc.Workload.Seed += int64(k)
			var err error
			if st, err = sim.Resolve(&sc); err != nil {
				return nil, err
			}
		}
		if c.UseReplay {
			sp := c.Scenario.Workload.SharedPrefix
			if sp == nil {
				return nil, fmt.Errorf("%s: --replay needs a shared_prefix workload (the recipe's prompt contents)", c.Path)
			}
			promptLen := sp.PromptLen
			if promptLen == 0 {
				promptLen = sp.SystemPromptLen + sp.QuestionLen
			}
			plan, info, err := ReplayPlan(st.Plan, c.Replay, promptLen, c.Run.OutputLen)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Path, err)
			}
			rst := *st
			rst.Plan = plan
			st, c.ReplayInfo = &rst, info
		}
		res, err := simulate(st, host)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		runs[k] = res
	}
	if c.Bench != nil {
		var per [][]Row
		for _, res := range runs {
			per = append(per, CompareBenchServe(c.Name, c.Bench, sim.Summarize(res.Requests, res.ITL, BenchPercentiles(c.Bench), sim.SLO{})))
		}
		return withSpread(per), nil
	}
	var rows []Row
	for i, k := range c.Stages {
		var per [][]Row
		cell := CellName(c.Name, k)
		if dist != nil {
			var ttft, e2e []float64
			for _, s := range SimSamples(runs[0], k) {
				if !s.Failed {
					ttft, e2e = append(ttft, s.TTFTS), append(e2e, s.E2ES)
				}
			}
			dist(cell, c.Run.Stages[k], ttft, e2e)
		}
		for _, res := range runs {
			r := CompareStage(cell, c.Run.Stages[k], c.Run.OutputLen, StageOf(res, k, c.Run.OutputLen))
			if c.Replay != nil {
				r = append(r, WindowRows(cell, ReplaySamples(c.ReplayStages[k]), SimSamples(res, k), c.Run.Stages[k].DurationS, c.Run.OutputLen)...)
				if i == 0 {
					r = append(r, kvBlocksRow(cell, c.Replay, c.Setup.Memory.NumBlocks))
				}
			}
			per = append(per, r)
		}
		rows = append(rows, withSpread(per)...)
	}
	return rows, nil
}

func simulate(base *sim.Setup, host *predictor.HostModel) (*sim.Result, error) {
	st := base
	if host != nil {
		st = base.WithHost(*host)
	}
	s, err := st.NewSim(sim.Options{})
	if err != nil {
		return nil, err
	}
	res := s.Run()
	if res.Err != nil {
		return nil, res.Err
	}
	st.Finish(s, res)
	return res, nil
}

// selectStages reads ground_truth.stages: "all" (or omitted) or a list of
// stage indices.
func selectStages(v any, n int) ([]int, error) {
	switch x := v.(type) {
	case nil:
	case string:
		if x != "all" {
			return nil, fmt.Errorf(`must be "all" or a list of stage indices, got %q`, x)
		}
	case []any:
		var out []int
		for _, e := range x {
			k, ok := e.(int)
			if !ok || k < 0 || k >= n {
				return nil, fmt.Errorf("stage %v: must be an index in [0, %d)", e, n)
			}
			out = append(out, k)
		}
		return out, nil
	default:
		return nil, fmt.Errorf(`must be "all" or a list of stage indices`)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out, nil
}

// StageOf cuts a simulation's records of stage k into the gate's figures:
// successful requests' TTFT and E2E (s), failures, and the window from the
// stage's first send to its last finish or failure.
func StageOf(res *sim.Result, k, outputLen int) SimStage {
	var ttft, e2e []float64
	failures := 0
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range res.Requests {
		r := &res.Requests[i]
		if int(r.Stage) != k {
			continue
		}
		first = min(first, r.SendNs)
		last = max(last, r.FinishNs)
		if r.Failed {
			failures++
			continue
		}
		ttft = append(ttft, float64(r.TTFTNs())/1e9)
		e2e = append(e2e, float64(r.E2ENs())/1e9)
	}
	window := 0.0
	if last > first {
		window = float64(last-first) / 1e9
	}
	return NewSimStage(ttft, e2e, failures, window, outputLen)
}

// withSpread keeps the first seed's rows and records the min and max of
// the simulated value over all seeds.
func withSpread(per [][]Row) []Row {
	rows := per[0]
	if len(per) < 2 {
		return rows
	}
	for i := range rows {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range per {
			lo, hi = math.Min(lo, p[i].Sim), math.Max(hi, p[i].Sim)
		}
		rows[i].SimMin, rows[i].SimMax = lo, hi
		rows[i].Seeds = len(per)
	}
	return rows
}
