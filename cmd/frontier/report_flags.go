package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/report"
)

// reportFlags are simulate's report outputs (sim/report): the timeline of
// vLLM's metrics, the /metrics exposition, the Chrome trace and the plots.
type reportFlags struct {
	timeline    string
	intervalS   float64
	metrics     string
	trace       string
	traceMax    int
	plotDir     string
	plotFormats string
	formats     []string // parsed plotFormats
}

// defaultTraceMax keeps a trace loadable: Perfetto opens a few thousand
// request tracks comfortably.
const defaultTraceMax = 1000

func (r *reportFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&r.timeline, "timeline", "", "write FILE.csv: per interval and engine (and total), vLLM's gauges at the interval's end and its counters' increments (vllm:num_requests_running, vllm:kv_cache_usage_perc, vllm:generation_tokens_total, …), plus throughput")
	fl.Float64Var(&r.intervalS, "timeline-interval", 1, "timeline interval, s of simulated time (0.001 to 4.6e9)")
	fl.StringVar(&r.metrics, "metrics", "", "write FILE.prom: the end-of-run /metrics of every engine in Prometheus text format, vLLM "+report.VLLMVersion+"'s names, labels and buckets")
	fl.StringVar(&r.trace, "trace", "", "write FILE.json: a Chrome trace (Perfetto, chrome://tracing) of every step and of the requests' phases")
	fl.IntVar(&r.traceMax, "trace-max-requests", defaultTraceMax, "requests in the --trace, every k-th request ID (0 = all)")
	fl.StringVar(&r.plotDir, "plot", "", "write plots into folder DIR: timeline, latency-cdf, ttft-vs-arrival (created if missing)")
	fl.StringVar(&r.plotFormats, "plot-format", "png,svg", "image formats of --plot and gate --plot: "+strings.Join(report.PlotFormats, ", "))
}

// parsePlotFormats reads --plot-format.
func parsePlotFormats(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(f), "."))
		if f == "" {
			continue
		}
		if !slices.Contains(report.PlotFormats, f) {
			return nil, fmt.Errorf("--plot-format: unknown image format %q (allowed: %s)", f, strings.Join(report.PlotFormats, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--plot-format: give at least one of %s, got %q", strings.Join(report.PlotFormats, ", "), s)
	}
	return out, nil
}

// checkPlotDir refuses a --plot value that names an image file instead of
// a folder, and a folder that cannot be created or written. A folder it
// had to create for the check is removed again.
func checkPlotDir(flag, dir string) error {
	if ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(dir), ".")); ext != "" && slices.Contains(report.PlotFormats, ext) {
		return fmt.Errorf("%s: takes a folder, got the file name %q; choose the image formats with --plot-format %s", flag, dir, ext)
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s: %s is a file, not a folder", flag, dir)
		}
		return checkWritable(flag, filepath.Join(dir, ".frontier-probe"))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", flag, err)
	}
	// Only a probe: remove the first folder it created (created again
	// after the run).
	top := filepath.Clean(dir)
	for {
		parent := filepath.Dir(top)
		if _, err := os.Stat(parent); err == nil || parent == top {
			break
		}
		top = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return os.RemoveAll(top)
}

// outputPath is an output flag and the path it writes.
type outputPath struct{ flag, path string }

// distinctOutputs refuses two output flags naming one path: the later
// write would silently replace (or interleave with) the earlier one.
func distinctOutputs(outs []outputPath) error {
	seen := map[string]string{}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		key, err := filepath.Abs(o.path)
		if err != nil {
			key = filepath.Clean(o.path)
		}
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%s and %s both write %s: give each output its own file", prev, o.flag, o.path)
		}
		seen[key] = o.flag
	}
	return nil
}

// check validates the report flags and probes every output path before
// the run (nothing is left behind when it refuses); others are simulate's
// other outputs, which must not share a path with these or each other.
func (r *reportFlags) check(others ...outputPath) error {
	// At most the simulated clock's reach (sim.MaxClockNs, ≈ 4.6e9 s): a
	// larger interval overflowed int64 ns and left the timeline empty.
	if maxS := float64(sim.MaxClockNs) / 1e9; !(r.intervalS >= 0.001) || r.intervalS > maxS {
		return fmt.Errorf("--timeline-interval: must be a number of seconds in [0.001, %.4g] (the simulated clock's reach), got %g", maxS, r.intervalS)
	}
	if r.traceMax < 0 {
		return fmt.Errorf("--trace-max-requests: must be ≥ 0 (0 = every request), got %d", r.traceMax)
	}
	if r.trace != "" {
		if strings.EqualFold(filepath.Ext(r.trace), ".csv") {
			return fmt.Errorf("--trace: writes a Chrome trace (JSON), got %q; a trace dataset (CSV of arrivals) is --dataset-path FILE, as in vllm bench serve", r.trace)
		}
		if !strings.EqualFold(filepath.Ext(r.trace), ".json") {
			return fmt.Errorf("--trace: writes a Chrome trace in JSON; name it FILE.json, got %q", r.trace)
		}
	}
	var err error
	if r.formats, err = parsePlotFormats(r.plotFormats); err != nil {
		return err
	}
	if err := distinctOutputs(append(others, outputPath{"--timeline", r.timeline}, outputPath{"--metrics", r.metrics},
		outputPath{"--trace", r.trace}, outputPath{"--plot", r.plotDir})); err != nil {
		return err
	}
	for _, p := range []struct{ flag, path string }{{"--timeline", r.timeline}, {"--metrics", r.metrics}, {"--trace", r.trace}} {
		if err := checkWritable(p.flag, p.path); err != nil {
			return err
		}
	}
	if r.plotDir != "" {
		return checkPlotDir("--plot", r.plotDir)
	}
	return nil
}

// runReport is one run's report outputs; a nil *runReport does nothing.
type runReport struct {
	flags     *reportFlags
	rec       *report.Recorder
	traceFile *os.File
	trace     *report.Trace
}

// observer attaches a recorder to opt when any report output is asked for.
func (r *reportFlags) observer(opt *sim.Options) *runReport {
	if r.timeline == "" && r.metrics == "" && r.trace == "" && r.plotDir == "" {
		return nil
	}
	rr := &runReport{flags: r}
	interval := int64(0)
	if r.timeline != "" || r.plotDir != "" {
		interval = int64(math.Round(r.intervalS * 1e9))
	}
	rr.rec = report.NewRecorder(interval, nil)
	opt.Observer = rr.rec
	return rr
}

// begin opens the trace (after every check passed and the deployment was
// accepted) and names the engines.
func (rr *runReport) begin(s *sim.Sim, st *sim.Setup) error {
	if rr == nil {
		return nil
	}
	if rr.flags.trace != "" {
		fh, err := os.Create(rr.flags.trace)
		if err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		rr.traceFile = fh
		rr.trace = report.NewTrace(fh, rr.flags.traceMax, st.Plan.NumRequests())
		rr.rec.Attach(rr.trace)
	}
	rr.rec.Begin(s.EngineSpecs(), st.Model.ID)
	return nil
}

// abort removes what a run that ended in error had started writing (the
// trace); the other outputs are written only after a run.
func (rr *runReport) abort() {
	if rr != nil && rr.traceFile != nil {
		rr.traceFile.Close()
		os.Remove(rr.flags.trace)
	}
}

// finish writes every report output; a failed write removes its file.
func (rr *runReport) finish(stderr io.Writer, sc *scenarios.Scenario, st *sim.Setup, res *sim.Result, quiet bool) error {
	if rr == nil {
		return nil
	}
	f := rr.flags
	err := rr.rec.Finish(res.EndNs)
	if errors.Is(err, report.ErrTimelineTooLong) {
		rr.abort()
		return bad(fmt.Errorf("--timeline-interval: %w", err))
	}
	if rr.traceFile != nil {
		if cerr := rr.traceFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.trace)
			return fmt.Errorf("--trace: %w", err)
		}
		if note := rr.trace.Note(); note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	if f.timeline != "" {
		if err := writeOutput(f.timeline, func(w io.Writer) error { return report.WriteTimelineCSV(w, rr.rec.Rows()) }); err != nil {
			return fmt.Errorf("--timeline: %w", err)
		}
	}
	if f.metrics != "" {
		if err := writeOutput(f.metrics, rr.rec.WriteMetrics); err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
	}
	if f.plotDir != "" {
		if err := os.MkdirAll(f.plotDir, 0o755); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		files, err := report.WritePlots(f.plotDir, f.formats, report.PlotInput{
			Title: runTitle(sc, st), Rows: rr.rec.Rows(), Stages: rr.rec.Stages(), Requests: res.Requests})
		if err != nil {
			for _, p := range files {
				os.Remove(p)
			}
			return fmt.Errorf("--plot: %w", err)
		}
		if !quiet {
			fmt.Fprintf(stderr, "plots: %s\n", strings.Join(files, ", "))
		}
	}
	return nil
}

// writeOutput writes path with fill, removing it when fill fails.
func writeOutput(path string, fill func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	err = fill(fh)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// runTitle names the deployment and the workload for plot titles.
func runTitle(sc *scenarios.Scenario, st *sim.Setup) string {
	var deps []string
	for _, d := range st.Pools {
		desc := fmt.Sprintf("%s on %s TP%d PP%d DP%d", d.Model.ID, d.Hardware.Name, d.Pred.TP, d.PP, d.DP)
		if d.Pool != "" {
			desc = fmt.Sprintf("%d× %s %s", d.Instances, d.Pool, desc)
		}
		deps = append(deps, desc)
	}
	w := sc.Workload
	load := fmt.Sprintf("%d requests, %s", st.Plan.NumRequests(), w.Dataset)
	if w.Dataset == "random" && w.Random != nil {
		load += fmt.Sprintf(" %d in / %d out", w.Random.InputLen, w.Random.OutputLen)
	}
	return strings.Join(deps, " + ") + " — " + load + ", " + describeRate(sc)
}
