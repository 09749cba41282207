package profiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

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
func LoadTables(dir string) (*Tables, error) { return LoadTablesVersion(dir, "") }

// LoadTablesVersion is LoadTables reading an aiconfigurator folder's
// version folders for vLLM version (pickVersion's rules; "" = the newest
// of each table). The flat layout has no versions: version must be "".
func LoadTablesVersion(dir, version string) (*Tables, error) {
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
		t, err = loadAIConfigurator(fsys, ".", dir, version, ".parquet", readParquet(fsys))
		if err == nil && t.Hardware == "" {
			abs, _ := filepath.Abs(dir)
			t.Hardware = strings.ReplaceAll(filepath.Base(abs), "_", "-")
		}
	} else {
		if version != "" {
			return nil, fmt.Errorf("load tables %s: a vLLM version (%s) applies to aiconfigurator's layout, not the collector's flat tables", dir, version)
		}
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
// display replaces root in error messages and Source. Each table file is
// <family>/<framework>/<version>/<name><ext> in the version folder
// pickVersion chooses for vLLM version want ("" = the newest holding it;
// NCCL's own versions: always the newest); read decodes one into t (it
// may keep only part of its rows: see DefaultTablesFor).
func loadAIConfigurator(fsys fs.FS, root, display, want, ext string, read func(f *aicFile, t *Tables, path, show string) error) (*Tables, error) {
	t := &Tables{Version: want}
	var versions []string
	found := 0
	for i := range aicFiles {
		f := &aicFiles[i]
		dir := path.Join(root, f.family, f.framework)
		w := want
		if f.framework != "vllm" {
			w = ""
		}
		ver, why, err := pickVersion(fsys, dir, f.name+ext, w)
		if why != "" {
			t.Notes = append(t.Notes, why)
		}
		if err != nil {
			return nil, fmt.Errorf("load tables %s: %w", path.Join(display, f.family, f.framework), err)
		}
		if ver == "" {
			continue
		}
		rel := path.Join(f.family, f.framework, ver, f.name+ext)
		found++
		if tag := f.family + " " + f.framework + " " + ver; !slices.Contains(versions, tag) {
			versions = append(versions, tag)
		}
		if err := read(f, t, path.Join(root, rel), path.Join(display, rel)); err != nil {
			return nil, err
		}
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

// readParquet is loadAIConfigurator's reader for the parquet files themselves.
func readParquet(fsys fs.FS) func(f *aicFile, t *Tables, name, show string) error {
	return func(f *aicFile, t *Tables, name, show string) error {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("load tables %s: %w", show, err)
		}
		return f.parquet(t, show, data)
	}
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
	found, err := loadFlatFiles(fsys, display, t)
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

// loadFlatFiles decodes the flat layout's table files at the root of fsys
// into t (only the tables named, when names are given) and counts the
// files it found.
func loadFlatFiles(fsys fs.FS, display string, t *Tables, names ...string) (int, error) {
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
		if err != nil || (len(names) > 0 && !slices.Contains(names, base)) {
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
	return found, err
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
