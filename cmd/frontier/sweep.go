package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"frontier/predictor"
	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/plan"
)

// sweepFlags are `frontier sweep`'s own flags; the base scenario takes
// every simulate flag.
type sweepFlags struct {
	vary             []string
	file             string
	zip              bool
	jobs             int
	shard            string
	outCSV, outJSONL string
	resultDir        string
	skipDone         bool
	plot, plotMetric string
	launch           bool
	simSet           *pflag.FlagSet
	sim              *simFlags
}

func newSweepCmd() *cobra.Command {
	f := &sweepFlags{}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Simulate a grid of what-ifs: the base scenario with flags varied, in parallel, one row per point",
		Long: `Run the base scenario (--scenario FILE and/or simulate's flags) once per
point of a grid and print one row per point with vllm bench serve's metric
names. Axes: --vary KEY=V1,V2,… or --vary KEY=START:STOP:STEP (STOP
included; repeatable), KEY being any simulate flag without its dashes
(e.g. max-num-seqs, tensor-parallel-size, request-rate, hardware, model);
--sweep FILE adds axes and whole deployments in YAML (see
docs/SWEEP.md). Axes cross by default; --zip pairs their values.

A point vLLM would refuse is a row with the refusal reason. Points run in
parallel (--jobs) and are reported in point order: the same sweep gives
byte-identical outputs for any --jobs and any --shard I/N merged with
'frontier sweep merge'.`,
		Args: listArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSweep(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.vary, "vary", nil, "axis KEY=V1,V2,… or KEY=START:STOP:STEP (KEY: a simulate flag name without the leading dashes; repeatable)")
	fl.StringVar(&f.file, "sweep", "", "sweep YAML: vary (axes), zip, deployments (whole deployments, e.g. disaggregated)")
	fl.BoolVar(&f.zip, "zip", false, "pair the axes' i-th values instead of crossing them")
	fl.IntVar(&f.jobs, "jobs", 0, "points simulated in parallel (default: all cores)")
	fl.StringVar(&f.shard, "shard", "", "run shard I/N: the points whose index is I mod N (merge with frontier sweep merge)")
	fl.StringVar(&f.outCSV, "out-csv", "", "write the table as CSV to FILE")
	fl.StringVar(&f.outJSONL, "out-jsonl", "", "write one JSON line per point (keys and the whole bench serve result) to FILE")
	fl.StringVar(&f.resultDir, "result-dir", "", "write one bench serve result JSON per point into DIR")
	fl.BoolVar(&f.skipDone, "skip-done", false, "resume: reuse the points already in --out-jsonl FILE (or its .partial)")
	fl.StringVar(&f.plot, "plot", "", "draw --plot-metric against the first numeric axis, one line per deployment, to FILE.png or FILE.svg (--goodput bounds as SLO lines)")
	fl.StringVar(&f.plotMetric, "plot-metric", "p99_ttft_ms", "bench serve key drawn by --plot")
	fl.BoolVar(&f.launch, "launch", false, "add each point's vllm serve / vllm bench serve lines (table footnotes, --out-jsonl \"launch\")")
	f.simSet, f.sim = addSimulateFlags(cmd)
	hideRefused(cmd)
	cmd.AddCommand(newSweepMergeCmd())
	return cmd
}

// sweepRun is a sweep ready to run: its points, built and validated.
type sweepRun struct {
	points      []plan.Point
	scenarios   map[int]*scenarios.Scenario // the shard's points
	fingerprint string
	opt         plan.RunOptions
	rf          resultFlags
	launch      bool
}

func runSweep(cmd *cobra.Command, f *sweepFlags) error {
	r, err := prepareSweep(cmd, f)
	if err != nil {
		return bad(err)
	}
	var done *plan.Lines
	if f.skipDone {
		if done, err = readDone(f.outJSONL, r.fingerprint); err != nil {
			return bad(err)
		}
	}
	if err := checkOutputs(f.outCSV, f.outJSONL, f.resultDir, f.plot); err != nil {
		return bad(err)
	}
	if f.plot != "" {
		if err := checkPlotPath("--plot", f.plot); err != nil {
			return bad(err)
		}
		if err := checkPlotMetric(f.plotMetric, r.opt.Percentiles, r.opt.Goodput.Set()); err != nil {
			return bad(err)
		}
		keys := make([]sweepLine, len(r.points))
		for i, p := range r.points {
			keys[i].Keys = pointKeys(p)
		}
		if _, err := plotAxis(keys, f.plotMetric); err != nil {
			return bad(err)
		}
	}
	var todo []plan.Point
	for _, p := range r.points {
		if _, ok := r.scenarios[p.Index]; ok {
			todo = append(todo, p)
		}
	}
	out, err := openLineSink(f.outJSONL, f.resultDir)
	if err != nil {
		return err
	}
	progress := progressBar(cmd.ErrOrStderr(), "points", f.sim.quiet)
	var raw [][]byte
	err = plan.Ordered(len(todo), f.jobs, func(k int) []byte {
		p := todo[k]
		if done != nil {
			if line, ok := done.ByPt[p.Index]; ok {
				return line
			}
		}
		return r.line(p)
	}, func(_ int, line []byte) error {
		raw = append(raw, line)
		return out.add(line)
	}, progress)
	if err == nil {
		err = out.close()
	} else {
		out.abort()
	}
	if err != nil {
		return err
	}
	if err := renderSweep(cmd, raw, f.outCSV); err != nil {
		return err
	}
	if f.plot == "" {
		return nil
	}
	lines, err := decodeLines(raw)
	if err != nil {
		return err
	}
	if err := sweepPlot(f.plot, f.plotMetric, lines); err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "plot:", f.plot)
	return nil
}

// prepareSweep reads the sweep's definition and builds every point (all
// bad input is found here, before any run and any file is written).
func prepareSweep(cmd *cobra.Command, f *sweepFlags) (*sweepRun, error) {
	b, err := newPointBuilder(cmd, f.simSet)
	if err != nil {
		return nil, err
	}
	if f.jobs < 0 {
		return nil, fmt.Errorf("--jobs: must be ≥ 1 (0 = all cores), got %d", f.jobs)
	}
	r := &sweepRun{rf: f.sim.result, scenarios: map[int]*scenarios.Scenario{}, launch: f.launch}
	if r.opt.Goodput, err = sim.ParseGoodput(f.sim.goodput); err != nil {
		return nil, err
	}
	if r.opt.Percentiles, err = parsePercentiles(f.sim.percentiles); err != nil {
		return nil, err
	}
	if err := checkBackend(r.rf); err != nil {
		return nil, err
	}
	var axes []plan.Axis
	file := &plan.File{}
	if f.file != "" {
		if file, err = plan.LoadFile(f.file); err != nil {
			return nil, err
		}
		b.sweepFile = f.file
		axes = append(axes, file.Axes...)
	}
	for _, v := range f.vary {
		a, err := plan.ParseVary(v)
		if err != nil {
			return nil, err
		}
		axes = append(axes, a)
	}
	if err := plan.CheckKeys(axes, b.keys()); err != nil {
		return nil, err
	}
	if r.points, err = plan.Expand(axes, f.zip || file.Zip, file.Deployments); err != nil {
		return nil, err
	}
	shard := plan.Shard{}
	if f.shard != "" {
		if shard, err = plan.ParseShard(f.shard); err != nil {
			return nil, err
		}
		if f.outJSONL == "" {
			return nil, errors.New("--shard: add --out-jsonl FILE (frontier sweep merge joins the shards' JSON lines)")
		}
	}
	if f.skipDone && f.outJSONL == "" {
		return nil, errors.New("--skip-done: add --out-jsonl FILE (the points already there are not run again)")
	}
	if err := b.checkAxesMatter(axes); err != nil {
		return nil, err
	}
	for _, p := range r.points {
		sc, err := b.build(p)
		if err != nil {
			return nil, err
		}
		if shard.Has(p.Index) {
			r.scenarios[p.Index] = sc
		}
	}
	base, err := b.baseScenario()
	if err != nil {
		return nil, err
	}
	def := plan.Sweep{Base: base, Axes: axes, Zip: f.zip || file.Zip, Deployments: file.Deployments,
		Settings: []string{"goodput=" + strings.Join(f.sim.goodput, ","), "metric-percentiles=" + f.sim.percentiles,
			"label=" + r.rf.label, "backend=" + r.rf.backend, fmt.Sprintf("launch=%v", f.launch)}}
	if r.fingerprint, err = def.Fingerprint(); err != nil {
		return nil, err
	}
	return r, nil
}

// goodputBounds is --goodput as a line's "goodput": ms by metric, nil
// without SLOs.
func goodputBounds(g sim.SLO) map[string]float64 {
	if !g.Set() {
		return nil
	}
	out := map[string]float64{}
	for k, v := range map[string]float64{"ttft": g.TTFTMs, "tpot": g.TPOTMs, "e2el": g.E2ELMs} {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

func checkBackend(rf resultFlags) error {
	for _, b := range resultBackends {
		if b == rf.backend {
			return nil
		}
	}
	return fmt.Errorf("--backend: one of %s, got %q", strings.Join(resultBackends, ", "), rf.backend)
}

// line simulates point p and encodes its --out-jsonl line.
func (r *sweepRun) line(p plan.Point) []byte {
	sc := r.scenarios[p.Index]
	o := plan.Simulate(sc, r.opt)
	l := sweepLine{LineHead: plan.LineHead{Sweep: r.fingerprint, Point: p.Index, Points: len(r.points)},
		Keys: pointKeys(p), Notes: o.RunNotes, Goodput: goodputBounds(r.opt.Goodput)}
	if l.Notes == nil {
		l.Notes = []string{}
	}
	if r.launch {
		rate, _ := singleRate(sc) // LaunchLines says when the workload has no single rate
		l.Launch = plan.LaunchLines(sc, rate, false).Lines()
	}
	if o.Refused != "" {
		l.Refused = &o.Refused
	} else {
		l.GPUs = plan.GPUs(o.Setup)
		l.Result = resultObject(nil, r.rf, sc, o.Setup, o.Result, o.Summary)
	}
	data, err := json.Marshal(l)
	if err != nil {
		panic(fmt.Sprintf("sweep line of point %d: %v", p.Index, err)) // only plain values: cannot fail
	}
	return data
}

// readDone reads the lines --skip-done reuses: FILE and FILE.partial,
// when they exist, of this sweep only.
func readDone(path, fingerprint string) (*plan.Lines, error) {
	var names []string
	var data [][]byte
	for _, p := range []string{path, path + ".partial"} {
		d, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("--skip-done: %w", err)
		}
		names, data = append(names, p), append(data, d)
	}
	ls, err := plan.ReadLines(names, data, true)
	if err != nil {
		return nil, fmt.Errorf("--skip-done: %w", err)
	}
	if ls.Head.Sweep != "" && ls.Head.Sweep != fingerprint {
		return nil, fmt.Errorf("--skip-done: %s holds another sweep (fingerprint %s; this sweep is %s): use another --out-jsonl, or remove it", path, ls.Head.Sweep, fingerprint)
	}
	return ls, nil
}

// checkOutputs fails before any run when an output cannot be written, or
// two name one file (--out-jsonl's FILE.partial included), leaving
// nothing behind.
func checkOutputs(csvPath, jsonlPath, resultDir, plot string) error {
	partial := ""
	if jsonlPath != "" {
		partial = jsonlPath + ".partial"
	}
	if err := distinctOutputs([]outputPath{{"--out-csv", csvPath}, {"--out-jsonl", jsonlPath}, {"--out-jsonl's partial file", partial},
		{"--result-dir", resultDir}, {"--plot", plot}}); err != nil {
		return err
	}
	if err := checkWritable("--out-csv", csvPath); err != nil {
		return err
	}
	if err := checkWritable("--out-jsonl", jsonlPath); err != nil {
		return err
	}
	if resultDir != "" {
		if err := probe(filepath.Join(resultDir, ".frontier-probe")); err != nil {
			return fmt.Errorf("--result-dir: %w", err)
		}
	}
	return nil
}

// lineSink writes the lines as they come, in point order: --out-jsonl
// into FILE.partial (renamed to FILE at the end; --skip-done resumes
// from it after a kill) and one result JSON per point into --result-dir.
type lineSink struct {
	path, dir string
	f         *os.File
}

func openLineSink(path, dir string) (*lineSink, error) {
	s := &lineSink{path: path, dir: dir}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("--result-dir: %w", err)
		}
	}
	if path != "" {
		var err error
		if s.f, err = os.Create(path + ".partial"); err != nil {
			return nil, fmt.Errorf("--out-jsonl: %w", err)
		}
	}
	return s, nil
}

func (s *lineSink) add(line []byte) error {
	if s.f != nil {
		if _, err := s.f.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("--out-jsonl: %w", err)
		}
	}
	if s.dir == "" {
		return nil
	}
	ls, err := decodeLines([][]byte{line})
	if err != nil || ls[0].Result == nil {
		return err
	}
	res, err := json.Marshal(ls[0].Result)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(s.dir, resultFileName(&ls[0])), res)
}

func (s *lineSink) close() error {
	if s.f == nil {
		return nil
	}
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("--out-jsonl: %w", err)
	}
	return os.Rename(s.path+".partial", s.path)
}

func (s *lineSink) abort() {
	if s.f != nil {
		s.f.Close()
	}
}

// renderSweep prints the table (and writes --out-csv) from the lines,
// and the setup notes the points share, once, on stderr.
func renderSweep(cmd *cobra.Command, raw [][]byte, csvPath string) error {
	lines, err := decodeLines(raw)
	if err != nil {
		return err
	}
	var seen []string
	for i := range lines {
		for _, n := range setupNotes(&lines[i]) {
			if !slices.Contains(seen, n) {
				seen = append(seen, n)
			}
		}
	}
	for _, n := range predictor.MergeRuleNotes(seen) {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
	}
	if err := writeTable(cmd.OutOrStdout(), lines); err != nil {
		return err
	}
	if csvPath != "" {
		data, err := csvBytes(lines)
		if err != nil {
			return err
		}
		if err := writeAtomic(csvPath, data); err != nil {
			return fmt.Errorf("--out-csv: %w", err)
		}
	}
	return nil
}

// setupNotes are a point's notes that are not about its run (stated
// substitutions: host model, tables).
func setupNotes(l *sweepLine) []string {
	m, _ := l.Result["frontier"].(map[string]any)
	all, _ := m["notes"].([]any)
	var out []string
	for _, n := range all {
		if s, ok := n.(string); ok && !slices.Contains(l.Notes, s) {
			out = append(out, s)
		}
	}
	return out
}
