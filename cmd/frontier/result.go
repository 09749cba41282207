package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"frontier/scenarios"
)

// resultFlags are vllm bench serve's result-file options
// (vllm/benchmarks/serve.py): --save-result and --append-result are
// switches; the file is --result-filename, or by default
// "{label or backend}-{request_rate}qps[-concurrency{N}]-{model}-{YYYYmmdd-HHMMSS}.json"
// (local time, the same stamp as the JSON's "date"), joined to
// --result-dir as Python's os.path.join does (an absolute file name wins).
type resultFlags struct {
	save, appendTo   bool
	dir, name, label string
	backend          string
	now              time.Time // the run's timestamp: file name and "date"
}

// resultBackends are the --backend values accepted: they name the
// endpoint bench serve would call; the simulation is the same for each.
var resultBackends = []string{"openai", "openai-chat", "vllm"}

// path is the result file to write, "" when none was asked for. It
// creates nothing; probe checks that the file can be written.
func (r resultFlags) path(sc *scenarios.Scenario, model string) (string, error) {
	if !r.save && !r.appendTo {
		if r.name != "" || r.dir != "" {
			return "", fmt.Errorf("--result-filename/--result-dir: add --save-result (or --append-result) to write the result file, as in vllm bench serve")
		}
		return "", nil
	}
	if !slices.Contains(resultBackends, r.backend) {
		return "", fmt.Errorf("--backend: one of %s, got %q", strings.Join(resultBackends, ", "), r.backend)
	}
	name := r.name
	if name == "" {
		label := r.label
		if label == "" {
			label = r.backend
		}
		if strings.ContainsRune(label, os.PathSeparator) {
			return "", fmt.Errorf("--label: %q would make the file name a path; use --result-dir for folders", label)
		}
		conc := ""
		if c := sc.Workload.Arrivals.MaxConcurrency; c != nil && *c > 0 {
			conc = fmt.Sprintf("-concurrency%d", *c)
		}
		base := model[strings.LastIndex(model, "/")+1:]
		name = fmt.Sprintf("%s-%s%s-%s-%s.json", label, rateName(sc), conc, base, r.stamp())
	}
	if r.dir != "" && !filepath.IsAbs(name) {
		name = filepath.Join(r.dir, name)
	}
	return name, nil
}

// stamp is bench serve's current_dt: local time, %Y%m%d-%H%M%S.
func (r resultFlags) stamp() string { return r.now.Format("20060102-150405") }

// probe checks before the run that the result file at path can be
// written (creating its folder if needed), then removes what the check
// made, so that a run refused later leaves nothing behind.
func probe(path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	first := "" // the outermost folder the check creates
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		first = d
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--result-dir: %w", err)
	}
	err := checkWritable("--save-result", path)
	if first != "" {
		if rmErr := os.RemoveAll(first); err == nil {
			err = rmErr
		}
	}
	return err
}

// rateName writes the request rate as Python prints bench serve's float
// argument and appends "qps" ("infqps", "10.0qps", "2.5qps", "1e-05qps");
// staged, trace and sessions workloads, which have no single rate, say
// "stages", "trace" and "sessions".
func rateName(sc *scenarios.Scenario) string {
	r, ok := singleRate(sc)
	switch {
	case ok:
		return pyFloat(r) + "qps"
	case sc.Workload.Dataset == "trace", sc.Workload.Dataset == "sessions":
		return sc.Workload.Dataset
	}
	return "stages"
}

// pyFloat is Python's str(float): the shortest digits that round-trip,
// in scientific notation when the exponent is below −4 or at least 16
// (two-digit exponent at least), else positional with at least ".0".
func pyFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(v, 'e', -1, 64) // e.g. 1e+20, 1.5e-05
		mant, exp, _ := strings.Cut(s, "e")
		sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + sign + digits
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// modelName is the scenario's model id (the decode pool's when
// disaggregated), for the default result file name.
func modelName(sc *scenarios.Scenario) string {
	if sc.Deployment != nil {
		return sc.Deployment.Model
	}
	if sc.Disaggregation != nil {
		return sc.Disaggregation.Decode.Deployment.Model
	}
	return "model"
}

// checkWritable fails early (before a long run) when an output file cannot
// be created.
func checkWritable(flag, path string) error {
	if path == "" {
		return nil
	}
	_, statErr := os.Stat(path)
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// Only a probe: a run refused later must not leave an empty file.
		return os.Remove(path)
	}
	return nil
}
