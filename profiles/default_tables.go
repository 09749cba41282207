package profiles

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// h800Notes are the stated substitutions behind DefaultTables("h800").
var h800Notes = []string{
	"h800: compute tables are h100-sxm's (same SM and HBM); NVLink 200 GB/s per GPU per direction from the h800 preset (frontier hardware's unit)",
	"h800: no collective tables (h100-sxm's were measured over NVLink at 450 GB/s per direction); collectives priced from the h800 preset's bandwidths",
}

// Need names the rows of an embedded table set that one deployment prices
// from (predictor.TablesNeed says which for a predictor configuration):
// GEMM rows of some gemm_dtypes, the full-attention rows (window_size 0)
// of one head_dim and kv_cache_dtype (or the MLA rows of that
// kv_cache_dtype), and the
// fused-MoE rows of some moe_dtypes (none for a dense model). Collectives
// and elementwise ops are small and always loaded. A table family added
// to Tables needs a field here and a partition key in aicFiles.
type Need struct {
	GemmDtypes []string // gemm_dtype of the GEMM rows
	HeadDim    int      // head_dim of the attention rows (0: none); window_size 0 only
	KVDtype    string   // kv_cache_dtype of the attention and MLA rows
	MLA        bool     // the MLA rows (multi-head latent attention)
	MoEDtypes  []string // moe_dtype of the MoE rows; none for a dense model
}

// key is the need as a map key.
func (n *Need) key() string {
	return fmt.Sprintf("%q %d %q %v %q", n.GemmDtypes, n.HeadDim, n.KVDtype, n.MLA, n.MoEDtypes)
}

// aicFile is one table file of an aiconfigurator system folder:
// <family>/<framework>/<version>/<name>.parquet, and its rows form
// <name>.rows next to it (rows.go).
type aicFile struct {
	family, framework, name string
	// parquet decodes the parquet file into t.
	parquet func(t *Tables, show string, data []byte) error
	// encode turns the parquet file into its rows form.
	encode func(show string, data []byte) ([]byte, error)
	// rows decodes the rows form into t: every row when need is nil, else
	// the partition need selects, decoded once per process and shared.
	rows func(t *Tables, name string, need *Need) error
	// decode decodes the part of the rows form that rows(t, name, need)
	// then takes (embeddedPart's memo: on another goroutine, rows waits
	// for it).
	decode func(name string, need *Need)
	// keep, for the GEMM and attention tables, keeps the part of the
	// rows form that need selects in t's lazy rows, undecoded, for a
	// LazyTablesFor set (nil: the table is decoded by rows); parse reads
	// that part up to its values (parsedPart's memo, as decode's).
	keep  func(t *Tables, name string, need *Need) error
	parse func(name string, need *Need)
	// need is aic's: the partition keys a Need takes (nil: every row).
	need func(*Need) []string
}

// aicFiles are the tables read from an aiconfigurator system folder, in
// load order.
var aicFiles = []aicFile{
	lazily[GemmRow](aic("gemm", "vllm", "gemm_perf", gemmSpec,
		func(r *GemmRow) string { return r.Dtype },
		func(n *Need) []string { return n.GemmDtypes },
		func(t *Tables) *[]GemmRow { return &t.Gemm }),
		func(l *lazyRows) **lazyPart { return &l.gemm }),
	lazily[AttnRow](aic("attention", "vllm", "context_attention_perf", contextAttnSpec, attnRowKey, attnNeed,
		func(t *Tables) *[]AttnRow { return &t.ContextAttn }),
		func(l *lazyRows) **lazyPart { return &l.context }),
	lazily[AttnRow](aic("attention", "vllm", "generation_attention_perf", generationAttnSpec, attnRowKey, attnNeed,
		func(t *Tables) *[]AttnRow { return &t.GenerationAttn }),
		func(l *lazyRows) **lazyPart { return &l.generation }),
	aic("moe", "vllm", "moe_perf", moeSpec,
		func(r *MoERow) string { return r.Dtype },
		func(n *Need) []string { return n.MoEDtypes },
		func(t *Tables) *[]MoERow { return &t.MoE }),
	aic("mla", "vllm", "context_mla_perf", contextMLASpec, mlaRowKey, mlaNeed,
		func(t *Tables) *[]AttnRow { return &t.ContextMLA }),
	aic("mla", "vllm", "generation_mla_perf", generationMLASpec, mlaRowKey, mlaNeed,
		func(t *Tables) *[]AttnRow { return &t.GenerationMLA }),
	// vLLM's custom all-reduce: backend column vllm_graph | vllm_eager.
	aic("comm", "vllm", "custom_allreduce_perf", commSpec("allreduce_dtype", ""), nil, nil,
		func(t *Tables) *[]CommRow { return &t.Comm }),
	aic("comm", "nccl", "nccl_perf", commSpec("nccl_dtype", "nccl"), nil, nil,
		func(t *Tables) *[]CommRow { return &t.Comm }),
}

// attnKey is an attention row's partition: head_dim, kv_cache_dtype and
// sliding window.
func attnKey(headDim int64, kvDtype string, window int64) string {
	return strconv.FormatInt(headDim, 10) + "/" + kvDtype + "/" + strconv.FormatInt(window, 10)
}

func attnRowKey(r *AttnRow) string { return attnKey(r.HeadDim, r.KVCacheDtype, r.WindowSize) }

func attnNeed(n *Need) []string {
	if n.HeadDim == 0 {
		return nil
	}
	return []string{attnKey(int64(n.HeadDim), n.KVDtype, 0)}
}

func mlaRowKey(r *AttnRow) string { return r.KVCacheDtype }

func mlaNeed(n *Need) []string {
	if !n.MLA {
		return nil
	}
	return []string{n.KVDtype}
}

// aic describes one table file whose rows are T, partitioned by key (nil:
// one partition) and selected by need (the partition keys a Need takes;
// nil need: every row, always); dst is where its rows go in Tables.
func aic[T any](family, framework, name string, spec tableSpec[T], key func(*T) string,
	need func(*Need) []string, dst func(*Tables) *[]T) aicFile {
	add := func(t *Tables, rows []T) {
		if d := dst(t); len(*d) == 0 {
			*d = slices.Clip(rows)
		} else {
			*d = append(*d, rows...)
		}
	}
	return aicFile{
		family: family, framework: framework, name: name, need: need,
		parquet: func(t *Tables, show string, data []byte) error {
			rows, err := readTable(show, data, spec)
			add(t, rows)
			return err
		},
		encode: func(show string, data []byte) ([]byte, error) {
			rows, err := readTable(show, data, spec)
			if err != nil {
				return nil, err
			}
			return encodeRows(rows, key)
		},
		rows: func(t *Tables, file string, n *Need) error {
			keys, ok := partKeys(n, need)
			if !ok {
				return nil // no row of this table is needed
			}
			rows, err := embeddedPart[T](file, keys)
			add(t, rows)
			return err
		},
		decode: func(file string, n *Need) {
			if keys, ok := partKeys(n, need); ok {
				embeddedPart[T](file, keys)
			}
		},
	}
}

// lazily is f (of rows T, selected by f.need) with a LazyTablesFor slot.
func lazily[T any](f aicFile, slot lazySlot) aicFile {
	need := f.need
	f.parse = func(file string, n *Need) {
		if keys, ok := partKeys(n, need); ok {
			parsedPart[T](file, keys)
		}
	}
	f.keep = func(t *Tables, file string, n *Need) error {
		keys, ok := partKeys(n, need)
		if !ok {
			return nil // no row of this table is needed
		}
		if _, err := parsedPart[T](file, keys); err != nil {
			return err
		}
		if t.lazy == nil {
			t.lazy = &lazyRows{}
		}
		*slot(t.lazy) = &lazyPart{file: file, keys: keys}
		return nil
	}
	return f
}

// partKeys are the partition keys of a table that n needs (nil: every
// row), false when it needs none of its rows.
func partKeys(n *Need, need func(*Need) []string) ([]string, bool) {
	if n == nil || need == nil {
		return nil, true
	}
	keys := need(n)
	return keys, len(keys) > 0
}

// decodeEmbedded decodes the embedded rows file, keeping the partitions
// keep accepts (nil: all). It reads the file in place, in the binary's
// read-only data (embeddedRows; rows_embed.go), where embed.FS.ReadFile
// would copy it: a run's start-up then faults in a few file-backed pages
// instead of megabytes of fresh heap.
func decodeEmbedded[T any](file string, keep func(string) bool) ([]T, error) {
	data, err := embeddedData(file)
	if err != nil {
		return nil, err
	}
	rows, err := decodeRows[T](data, keep)
	if err != nil {
		return nil, fmt.Errorf("embedded tables %s: %w", file, err)
	}
	return rows, nil
}

// embeddedData is the embedded rows file, in place where rows_embed.go
// holds it (read only).
func embeddedData(file string) ([]byte, error) {
	if s, ok := embeddedRows[file]; ok {
		return unsafe.Slice(unsafe.StringData(s), len(s)), nil
	}
	// Not in rows_embed.go (stale: TestEmbeddedRowsCurrent).
	data, err := embeddedTables.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("embedded tables %s: %w", file, err)
	}
	return data, nil
}

// parts memoizes decoded (and parsed: parsedPart) parts of the embedded
// rows files, by file and partition keys: deployments that need the same
// rows share them.
var parts = struct {
	mu sync.Mutex
	m  map[[2]string]*partEntry
}{m: map[[2]string]*partEntry{}}

type partEntry struct {
	once sync.Once
	rows any
	err  error
}

// embeddedPart returns the rows of file in the partitions keys names (nil:
// every row), in file order, decoded once per process.
func embeddedPart[T any](file string, keys []string) ([]T, error) {
	e := partOf(file, keys, "")
	e.once.Do(func() { e.rows, e.err = decodeEmbedded[T](file, keepKeys(keys)) })
	rows, _ := e.rows.([]T)
	return rows, e.err
}

// partOf is the memo entry of file's part in the partitions keys names
// (nil: every row), in the form kind names ("": decoded rows).
func partOf(file string, keys []string, kind string) *partEntry {
	id := [2]string{file, kind + fmt.Sprintf("%q", keys)}
	if keys == nil {
		id[1] = kind + "all"
	}
	parts.mu.Lock()
	defer parts.mu.Unlock()
	e := parts.m[id]
	if e == nil {
		e = &partEntry{}
		parts.m[id] = e
	}
	return e
}

// keepKeys accepts the partition keys keys names (nil: every key).
func keepKeys(keys []string) func(string) bool {
	if keys == nil {
		return nil
	}
	return func(k string) bool { return slices.Contains(keys, k) }
}

// defaultTables memoizes DefaultTables and DefaultTablesFor per canonical
// hardware name and need.
var defaultTables = struct {
	mu     sync.Mutex
	byName map[tablesKey]*tablesEntry
}{byName: map[tablesKey]*tablesEntry{}}

type tablesKey struct {
	name    string
	version string // vLLM version of the set (never "": the default is resolved first)
	need    string // Need.key(); "" for every row
	lazy    bool   // LazyTablesFor's set
}

type tablesEntry struct {
	once sync.Once
	t    *Tables
	err  error
}

// DefaultTables returns the embedded operator tables for hardware
// (KnownHardware, case-insensitive): aiconfigurator's vLLM tables of the
// preset's default version (defaultVersions: h100-sxm 0.14.0, h200-sxm
// 0.19.0, a100-sxm 0.14.0, the others 0.24.0) with the newest NCCL
// collection; h800 shares h100-sxm's compute tables and says so in Notes.
// Rows of every dtype are kept; consumers filter. A run needs only part of
// them: DefaultTablesFor loads that part; TablesFor and TablesForNeed
// pick another embedded vLLM version.
//
// Where our collector measured the hardware (MeasuredTables: h200-sxm), the
// tables also carry its Ops rows, the elementwise operators aiconfigurator
// lacks, and a Note saying so; GEMM, attention, MoE and collectives stay
// aiconfigurator's.
//
// Tables are loaded once per hardware and shared: callers must not modify them.
func DefaultTables(hardware string) (*Tables, error) {
	return TablesForNeed(hardware, "", nil)
}

// TablesFor returns the embedded table set of hardware for vLLM version
// ("" = the preset's default; TableVersions lists them), every row. A
// table the version did not collect comes from the version pickVersion
// names, noted; a MoE expert shape its table lacks comes from another
// embedded version that measured it (Tables.MoEFallback).
func TablesFor(hardware, version string) (*Tables, error) {
	return TablesForNeed(hardware, version, nil)
}

// DefaultTablesFor is DefaultTables holding only the rows need selects
// (in the tables' order), and every collective and elementwise row: what
// a deployment's predictor reads, decoded in about a millisecond where
// every row of the H200 set takes tens. Source and Notes are
// DefaultTables'. Each partition is decoded once per process and shared:
// callers must not modify the tables.
func DefaultTablesFor(hardware string, need Need) (*Tables, error) {
	return TablesForNeed(hardware, "", &need)
}

// TablesForNeed is TablesFor holding only the rows need selects (nil:
// every row), as DefaultTablesFor.
func TablesForNeed(hardware, version string, need *Need) (*Tables, error) {
	return tablesFor(hardware, version, need, false)
}

// LazyTablesFor is TablesForNeed(hardware, version, &need) keeping the
// GEMM and attention rows in the embedded rows form: Gemm, ContextAttn
// and GenerationAttn are nil, and EachGemm, EachContextAttn and
// EachGenerationAttn read them (the predictor's grids, built straight
// from them; rows_lazy.go). For the predictor only: a reader of those
// fields (Overlay, predictor.RegressionTables, Coverage, ...) takes
// TablesForNeed's set.
func LazyTablesFor(hardware, version string, need Need) (*Tables, error) {
	return tablesFor(hardware, version, &need, true)
}

func tablesFor(hardware, version string, need *Need, lazy bool) (*Tables, error) {
	name, ok := canonicalHardware(hardware)
	if !ok {
		return nil, fmt.Errorf("default tables: unknown hardware %q (allowed: %s)",
			hardware, strings.Join(KnownHardware(), ", "))
	}
	if version == "" {
		_, version, _ = TableVersions(name)
	} else if err := CheckVersion(name, version); err != nil {
		return nil, err
	}
	key := tablesKey{name: name, version: version, lazy: lazy}
	if need != nil {
		key.need = need.key()
	}
	defaultTables.mu.Lock()
	e := defaultTables.byName[key]
	if e == nil {
		e = &tablesEntry{}
		defaultTables.byName[key] = e
	}
	defaultTables.mu.Unlock()
	e.once.Do(func() { e.t, e.err = loadDefaultTables(name, version, need, lazy) })
	return e.t, e.err
}

func loadDefaultTables(name, version string, need *Need, lazy bool) (*Tables, error) {
	if name == "h800" {
		h100, err := tablesFor("h100-sxm", version, need, lazy)
		if err != nil {
			return nil, err
		}
		t := *h100
		t.Source = h100.Source + " (for h800)"
		t.Comm = nil
		t.Notes = append(append([]string(nil), h100.Notes...), h800Notes...)
		return &t, nil
	}
	hw, err := LookupHardware(name)
	if err != nil {
		return nil, err
	}
	root := path.Join(embeddedTablesRoot, hw.System)
	// The GEMM part (the first file, ~5 M instructions for a one-request
	// run) is decoded on a goroutine while this one decodes the others
	// (the attention parts, as much again) and reads the measured ops;
	// then the parts are added to the tables in load order, as read in
	// turn. Two workers for the two cores of a small machine: a goroutine
	// a file was no faster and took more CPU time (idle threads woken).
	// A lazy set parses its GEMM and attention parts the same way (a
	// selection, no rows) and keeps them for EachGemm and the like.
	type read struct {
		f    *aicFile
		file string
	}
	var reads []read
	prepare := func(r read) {
		if lazy && r.f.keep != nil {
			r.f.parse(r.file, need)
		} else {
			r.f.decode(r.file, need)
		}
	}
	t, err := loadAIConfigurator(embeddedTables, root, "embedded:"+root, version, rowsExt,
		func(f *aicFile, t *Tables, file, _ string) error {
			if len(reads) == 0 {
				go prepare(read{f, file})
			}
			reads = append(reads, read{f, file})
			return nil
		})
	if err != nil {
		return nil, err
	}
	for i := len(reads) - 1; i > 0; i-- { // the GEMM part's goroutine starts at the front
		prepare(reads[i])
	}
	ops, note, opsErr := withMeasuredOps(name)
	for _, r := range reads {
		if lazy && r.f.keep != nil {
			if err := r.f.keep(t, r.file, need); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.f.rows(t, r.file, need); err != nil {
			return nil, err
		}
	}
	if err := moeFromOtherVersions(t, root, version); err != nil {
		return nil, err
	}
	t.Hardware = name
	if opsErr != nil {
		return nil, opsErr
	}
	t.Ops = ops
	if note != "" {
		t.Notes = append(t.Notes, note)
	}
	return t, nil
}
