package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"frontier/scenarios"
)

// resultFlags are vllm bench serve's result-file options
// (vllm/benchmarks/serve.py): --save-result and --append-result are
// switches; the file is --result-filename, or by default
// "{label}-{request_rate}qps[-concurrency{N}]-{model}-{YYYYmmdd-HHMMSS}.json",
// inside --result-dir when given.
type resultFlags struct {
	save, appendTo   bool
	dir, name, label string
}

// path is the result file to write, "" when none was asked for. now
// stamps the default name; the directory is created as bench serve does.
func (r resultFlags) path(sc *scenarios.Scenario, model string, now time.Time) (string, error) {
	if !r.save && !r.appendTo {
		if r.name != "" || r.dir != "" {
			return "", fmt.Errorf("--result-filename/--result-dir: add --save-result (or --append-result) to write the result file, as in vllm bench serve")
		}
		return "", nil
	}
	name := r.name
	if name == "" {
		label := r.label
		if label == "" {
			label = "vllm" // bench serve's default backend
		}
		conc := ""
		if c := sc.Workload.Arrivals.MaxConcurrency; c != nil && *c > 0 {
			conc = fmt.Sprintf("-concurrency%d", *c)
		}
		base := model[strings.LastIndex(model, "/")+1:]
		name = fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, rateName(sc), conc, base, now.Format("20060102-150405"))
	}
	if r.dir != "" {
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return "", fmt.Errorf("--result-dir: %w", err)
		}
		name = filepath.Join(r.dir, name)
	}
	return name, nil
}

// rateName writes the request rate as Python prints bench serve's float
// argument ("inf", "10.0", "2.5"); staged and trace workloads, which have
// no single rate, say "stages" and "trace".
func rateName(sc *scenarios.Scenario) string {
	switch {
	case sc.Workload.Dataset == "trace":
		return "trace"
	case len(sc.Workload.Arrivals.Stages) > 0:
		return "stages"
	}
	r := float64(sc.Workload.Arrivals.RequestRate)
	if math.IsInf(r, 1) {
		return "inf"
	}
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if !strings.Contains(s, ".") {
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
