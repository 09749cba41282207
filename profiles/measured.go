package profiles

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
)

// embeddedMeasured holds the tables the project's own collector
// (profiles/collect) measured, one folder per hardware in the flat CSV layout
// with its meta.yaml: measured/<hardware>/{gemm,context_attention,...}_perf.csv.
//
//go:embed measured
var embeddedMeasured embed.FS

// embeddedMeasuredRoot is the measured folder inside embeddedMeasured.
const embeddedMeasuredRoot = "measured"

// ElementwiseOps are the operators the imported aiconfigurator tables lack
// and the predictor prices from Tables.Ops when they are measured (from the
// bytes they move otherwise), in the order the predictor meets them.
var ElementwiseOps = []string{"rmsnorm", "rotary", "silu_and_mul", "embedding", "sampler"}

// measuredTables memoizes MeasuredTables per hardware folder.
var measuredTables = struct {
	mu     sync.Mutex
	byName map[string]*tablesEntry
}{byName: map[string]*tablesEntry{}}

// MeasuredHardware lists the hardware names with embedded collector
// measurements (the folders under profiles/measured), sorted.
func MeasuredHardware() []string {
	entries, err := fs.ReadDir(embeddedMeasured, embeddedMeasuredRoot)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// MeasuredTables returns the operator tables our collector measured on
// hardware (profiles/measured/<hardware>, embedded): GEMM, attention, MoE and
// the elementwise Ops, with the notes of its meta.yaml. Names resolve like
// DefaultTables ("h200" is h200-sxm). Their decode attention Step is the
// context length (DecodeContextOffset 0).
//
// Tables are loaded once per hardware and shared: callers must not modify them.
func MeasuredTables(hardware string) (*Tables, error) {
	name, ok := canonicalHardware(hardware)
	if !ok {
		name = strings.ToLower(strings.TrimSpace(hardware))
	}
	available := MeasuredHardware()
	if !slices.Contains(available, name) {
		return nil, fmt.Errorf("measured tables: no collector measurements for hardware %q (available: %s)",
			hardware, strings.Join(available, ", "))
	}
	measuredTables.mu.Lock()
	e := measuredTables.byName[name]
	if e == nil {
		e = &tablesEntry{}
		measuredTables.byName[name] = e
	}
	measuredTables.mu.Unlock()
	e.once.Do(func() { e.t, e.err = loadMeasuredTables(name) })
	return e.t, e.err
}

func loadMeasuredTables(name string) (*Tables, error) {
	root := path.Join(embeddedMeasuredRoot, name)
	sub, err := fs.Sub(embeddedMeasured, root)
	if err != nil {
		return nil, fmt.Errorf("measured tables %s: %w", name, err)
	}
	t, err := loadFlat(sub, "embedded:"+root)
	if err != nil {
		return nil, err
	}
	if t.Hardware == "" {
		t.Hardware = name
	}
	return t, nil
}

// withMeasuredOps returns the Ops rows our collector measured on hardware
// and the note saying which elementwise operators they price; no rows and no
// note when hardware has no measurements.
func withMeasuredOps(hardware string) ([]OpRow, string, error) {
	if !slices.Contains(MeasuredHardware(), hardware) {
		return nil, "", nil
	}
	ops, err := measuredOps(hardware)
	if err != nil {
		return nil, "", err
	}
	var priced []string
	for _, op := range ElementwiseOps {
		if slices.ContainsFunc(ops, func(r OpRow) bool { return r.Op == op }) {
			priced = append(priced, op)
		}
	}
	if len(priced) == 0 {
		return ops, "", nil
	}
	note := fmt.Sprintf("%s: %s priced from our collector's measurements (profiles/measured/%s)",
		hardware, strings.Join(priced, ", "), hardware)
	return ops, note, nil
}

// measuredOps returns MeasuredTables(hardware).Ops, reading only the ops
// table: a run priced from the default tables needs none of the other
// measured tables, and parsing them took more start-up time than the
// rest of a short run.
func measuredOps(hardware string) ([]OpRow, error) {
	root := path.Join(embeddedMeasuredRoot, hardware)
	sub, err := fs.Sub(embeddedMeasured, root)
	if err != nil {
		return nil, fmt.Errorf("measured tables %s: %w", hardware, err)
	}
	t := &Tables{}
	if _, err := loadFlatFiles(sub, "embedded:"+root, t, flatOps); err != nil {
		return nil, err
	}
	return t.Ops, nil
}
