package profiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// embeddedSystems maps a tables hardware name to its aiconfigurator system
// folder. H100 tables were collected with vLLM 0.14.0, H200 with 0.19.0.
var embeddedSystems = map[string]string{
	"h100-sxm": "h100_sxm",
	"h200-sxm": "h200_sxm",
}

// h800Notes are the stated substitutions behind DefaultTables("h800").
var h800Notes = []string{
	"h800: compute tables are h100-sxm's (same SM and HBM); NVLink 400 GB/s from the h800 preset",
	"h800: no collective tables (h100-sxm's were measured over 900 GB/s NVLink); price collectives from the h800 hardware preset",
}

// defaultTables memoizes DefaultTables per canonical hardware name.
var defaultTables = struct {
	mu     sync.Mutex
	byName map[string]*tablesEntry
}{byName: map[string]*tablesEntry{}}

type tablesEntry struct {
	once sync.Once
	t    *Tables
	err  error
}

// DefaultTables returns the embedded operator tables for hardware (h100-sxm,
// h200-sxm or h800; case-insensitive, "h100"/"h200" accepted). h100-sxm and
// h200-sxm are aiconfigurator's vLLM tables (vLLM 0.14.0 and 0.19.0) with the
// newest NCCL collection; h800 shares h100-sxm's compute tables and says so in
// Notes. Rows of every dtype are kept; consumers filter.
//
// Where our collector measured the hardware (MeasuredTables: h200-sxm), the
// tables also carry its Ops rows, the elementwise operators aiconfigurator
// lacks, and a Note saying so; GEMM, attention, MoE and collectives stay
// aiconfigurator's.
//
// Tables are loaded once per hardware and shared: callers must not modify them.
func DefaultTables(hardware string) (*Tables, error) {
	name, ok := canonicalHardware(hardware)
	if !ok {
		return nil, fmt.Errorf("default tables: unknown hardware %q (allowed: %s)",
			hardware, strings.Join(KnownHardware(), ", "))
	}
	defaultTables.mu.Lock()
	e := defaultTables.byName[name]
	if e == nil {
		e = &tablesEntry{}
		defaultTables.byName[name] = e
	}
	defaultTables.mu.Unlock()
	e.once.Do(func() { e.t, e.err = loadDefaultTables(name) })
	return e.t, e.err
}

func loadDefaultTables(name string) (*Tables, error) {
	if name == "h800" {
		h100, err := DefaultTables("h100-sxm")
		if err != nil {
			return nil, err
		}
		t := *h100
		t.Source = h100.Source + " (for h800)"
		t.Comm = nil
		t.Notes = append(append([]string(nil), h100.Notes...), h800Notes...)
		return &t, nil
	}
	system := embeddedSystems[name]
	root := path.Join(embeddedTablesRoot, system)
	t, err := loadAIConfigurator(embeddedTables, root, "embedded:"+root)
	if err != nil {
		return nil, err
	}
	t.Hardware = name
	ops, note, err := withMeasuredOps(name)
	if err != nil {
		return nil, err
	}
	t.Ops = ops
	if note != "" {
		t.Notes = append(t.Notes, note)
	}
	return t, nil
}

// LoadTables loads operator tables from a directory on disk, in either layout:
//
//   - aiconfigurator's system layout (dir holds gemm/vllm/<version>/gemm_perf.parquet,
//     attention/…, moe/…, comm/vllm/…/custom_allreduce_perf.parquet and
//     comm/nccl/<version>/nccl_perf.parquet); the newest version folder of each wins;
//   - the project's flat layout written by the GPU collector: gemm_perf,
//     context_attention_perf, generation_attention_perf, moe_perf, comm_perf and
//     ops_perf, each as .csv or .parquet, plus an optional meta.yaml.
//
// Schemas and units are in profiles/README.md. A missing table file gives an
// empty table; a directory with no table file at all is an error. Tables.Hardware
// is meta.yaml's hardware key, else (aiconfigurator layout) the folder's name.
func LoadTables(dir string) (*Tables, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("load tables: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("load tables: %s is not a directory", dir)
	}
	fsys := os.DirFS(dir)
	var t *Tables
	if isAIConfiguratorLayout(fsys) {
		t, err = loadAIConfigurator(fsys, ".", dir)
		if err == nil && t.Hardware == "" {
			abs, _ := filepath.Abs(dir)
			t.Hardware = strings.ReplaceAll(filepath.Base(abs), "_", "-")
		}
	} else {
		t, err = loadFlat(fsys, dir)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func isAIConfiguratorLayout(fsys fs.FS) bool {
	for _, d := range []string{"gemm", "attention", "moe", "comm", "mla"} {
		if st, err := fs.Stat(fsys, d); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// loadAIConfigurator reads one aiconfigurator system folder (root inside fsys).
// display replaces root in error messages and Source.
func loadAIConfigurator(fsys fs.FS, root, display string) (*Tables, error) {
	t := &Tables{}
	var versions []string
	found := 0
	var err error
	// load decodes <root>/<family>/<framework>/<newest version>/<file>, if present.
	load := func(family, framework, file string, decode func(show string, data []byte) error) {
		if err != nil {
			return
		}
		dir := path.Join(root, family, framework)
		ver, verr := newestVersionWith(fsys, dir, file)
		if verr != nil {
			err = fmt.Errorf("load tables %s: %w", path.Join(display, family, framework), verr)
			return
		}
		rel := path.Join(family, framework, ver, file)
		data, rerr := fs.ReadFile(fsys, path.Join(root, rel))
		if ver == "" || errors.Is(rerr, fs.ErrNotExist) {
			return
		}
		show := path.Join(display, rel)
		if rerr != nil {
			err = fmt.Errorf("load tables %s: %w", show, rerr)
			return
		}
		found++
		if tag := family + " " + framework + " " + ver; !slices.Contains(versions, tag) {
			versions = append(versions, tag)
		}
		err = decode(show, data)
	}
	load("gemm", "vllm", "gemm_perf.parquet", func(p string, d []byte) (e error) {
		t.Gemm, e = readTable(p, d, gemmSpec)
		return
	})
	load("attention", "vllm", "context_attention_perf.parquet", func(p string, d []byte) (e error) {
		t.ContextAttn, e = readTable(p, d, contextAttnSpec)
		return
	})
	load("attention", "vllm", "generation_attention_perf.parquet", func(p string, d []byte) (e error) {
		t.GenerationAttn, e = readTable(p, d, generationAttnSpec)
		return
	})
	load("moe", "vllm", "moe_perf.parquet", func(p string, d []byte) (e error) {
		t.MoE, e = readTable(p, d, moeSpec)
		return
	})
	load("mla", "vllm", "context_mla_perf.parquet", func(p string, d []byte) (e error) {
		t.ContextMLA, e = readTable(p, d, contextMLASpec)
		return
	})
	load("mla", "vllm", "generation_mla_perf.parquet", func(p string, d []byte) (e error) {
		t.GenerationMLA, e = readTable(p, d, generationMLASpec)
		return
	})
	// vLLM's custom all-reduce: backend column vllm_graph | vllm_eager.
	load("comm", "vllm", "custom_allreduce_perf.parquet", func(p string, d []byte) error {
		rows, e := readTable(p, d, commSpec("allreduce_dtype", ""))
		t.Comm = append(t.Comm, rows...)
		return e
	})
	load("comm", "nccl", "nccl_perf.parquet", func(p string, d []byte) error {
		rows, e := readTable(p, d, commSpec("nccl_dtype", "nccl"))
		t.Comm = append(t.Comm, rows...)
		return e
	})
	if err != nil {
		return nil, err
	}
	if found == 0 {
		return nil, fmt.Errorf("load tables %s: no aiconfigurator table found (want gemm/vllm/<version>/gemm_perf.parquet ...)", display)
	}
	t.DecodeContextOffset = 1 // aiconfigurator's decode step is context − 1
	if err := readMeta(fsys, path.Join(root, "meta.yaml"), path.Join(display, "meta.yaml"), t); err != nil {
		return nil, err
	}
	t.Source = display + " (aiconfigurator: " + strings.Join(versions, ", ") + ")"
	return t, nil
}

// newestVersionWith returns the highest version-named subfolder of dir that
// holds file ("" when none does): a version folder that only declares reuse
// of another (reuse.yaml) or lacks this table falls through to the next.
func newestVersionWith(fsys fs.FS, dir, file string) (string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var vers []string
	for _, e := range entries {
		if e.IsDir() {
			vers = append(vers, e.Name())
		}
	}
	sort.Slice(vers, func(i, j int) bool { return versionLess(vers[j], vers[i]) })
	for _, v := range vers {
		if _, err := fs.Stat(fsys, path.Join(dir, v, file)); err == nil {
			return v, nil
		}
	}
	return "", nil
}

// versionLess orders dotted versions numerically; non-numeric parts compare as text.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, errA := strconv.Atoi(pa[i])
		nb, errB := strconv.Atoi(pb[i])
		if errA == nil && errB == nil {
			if na != nb {
				return na < nb
			}
			continue
		}
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

// flatTables lists the flat layout's files (without extension).
const (
	flatGemm           = "gemm_perf"
	flatContextAttn    = "context_attention_perf"
	flatGenerationAttn = "generation_attention_perf"
	flatMoE            = "moe_perf"
	flatComm           = "comm_perf"
	flatOps            = "ops_perf"
	flatMeta           = "meta.yaml"
)

// loadFlat reads the project's flat layout from the root of fsys.
func loadFlat(fsys fs.FS, display string) (*Tables, error) {
	t := &Tables{Source: display}
	found := 0
	// read finds base.csv or base.parquet and returns its display path and bytes.
	read := func(base string) (string, []byte, error) {
		var hits []string
		for _, ext := range []string{".csv", ".parquet"} {
			if _, err := fs.Stat(fsys, base+ext); err == nil {
				hits = append(hits, base+ext)
			}
		}
		switch len(hits) {
		case 0:
			return "", nil, nil
		case 2:
			return "", nil, fmt.Errorf("load tables %s: both %s and %s present; keep one", display, hits[0], hits[1])
		}
		show := filepath.Join(display, hits[0])
		data, err := fs.ReadFile(fsys, hits[0])
		if err != nil {
			return "", nil, fmt.Errorf("load tables %s: %w", show, err)
		}
		found++
		return show, data, nil
	}
	var err error
	load := func(base string, decode func(show string, data []byte) error) {
		if err != nil {
			return
		}
		var show string
		var data []byte
		if show, data, err = read(base); err == nil && show != "" {
			err = decode(show, data)
		}
	}
	load(flatGemm, func(p string, d []byte) (e error) { t.Gemm, e = readTable(p, d, gemmSpec); return })
	load(flatContextAttn, func(p string, d []byte) (e error) { t.ContextAttn, e = readTable(p, d, contextAttnSpec); return })
	load(flatGenerationAttn, func(p string, d []byte) (e error) {
		t.GenerationAttn, e = readTable(p, d, generationAttnSpec)
		return
	})
	load(flatMoE, func(p string, d []byte) (e error) { t.MoE, e = readTable(p, d, moeSpec); return })
	load(flatComm, func(p string, d []byte) (e error) { t.Comm, e = readTable(p, d, commSpec("dtype", "")); return })
	load(flatOps, func(p string, d []byte) (e error) { t.Ops, e = readTable(p, d, opsSpec); return })
	if err != nil {
		return nil, err
	}
	if found == 0 {
		return nil, fmt.Errorf("load tables %s: no table file found (want gemm_perf.csv, context_attention_perf.csv, ... or the aiconfigurator layout; see profiles/README.md)", display)
	}
	if err := readMeta(fsys, flatMeta, filepath.Join(display, flatMeta), t); err != nil {
		return nil, err
	}
	return t, nil
}

// tablesMeta is meta.yaml, written by the collector next to its tables.
type tablesMeta struct {
	Hardware string   `yaml:"hardware"` // hardware name, e.g. h200-sxm
	Notes    []string `yaml:"notes"`    // optional remarks, appended to Tables.Notes
	// DecodeContextOffset is Tables.DecodeContextOffset when the decode
	// steps are not the context length (WriteTables of aiconfigurator rows
	// writes 1); absent means the collector's convention, 0.
	DecodeContextOffset *int64 `yaml:"decode_context_offset,omitempty"`
}

// readMeta applies an optional meta.yaml to t.
func readMeta(fsys fs.FS, name, show string, t *Tables) error {
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load tables %s: %w", show, err)
	}
	var m tablesMeta
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("load tables %s: %w", show, err)
	}
	if m.Hardware != "" {
		t.Hardware = m.Hardware
	}
	if m.DecodeContextOffset != nil {
		if o := *m.DecodeContextOffset; o != 0 && o != 1 {
			return fmt.Errorf("load tables %s: decode_context_offset: want 0 (step = context) or 1 (step = context - 1), got %d", show, o)
		}
		t.DecodeContextOffset = *m.DecodeContextOffset
	}
	t.Notes = append(t.Notes, m.Notes...)
	return nil
}
