package profiles

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// tableSpec says how one kind of table file decodes into rows of T. Column
// names are those of aiconfigurator's parquet files, which the project's own
// flat layout reuses (profiles/README.md).
type tableSpec[T any] struct {
	name     string   // for errors: "load <name> table <path> row <n>: ..."
	required []string // columns that must be present
	decode   func(r *rowView) T
	bound    func(T) error // the row's physical maximum (bounds.go); nil = none
}

// readTable decodes every row of one table file. Row numbers in errors count
// data rows from 1 (a CSV header line is not a row).
func readTable[T any](path string, data []byte, spec tableSpec[T]) ([]T, error) {
	src, err := openSource(path, data)
	if err != nil {
		return nil, fmt.Errorf("load %s table %s: %w", spec.name, path, err)
	}
	index := make(map[string]int, len(src.columns()))
	for i, c := range src.columns() {
		if _, dup := index[c]; !dup {
			index[c] = i
		}
	}
	var missing []string
	for _, c := range spec.required {
		if _, ok := index[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("load %s table %s: missing column(s) %s (has %s)",
			spec.name, path, strings.Join(missing, ", "), strings.Join(src.columns(), ","))
	}
	var out []T
	view := &rowView{index: index}
	for n := 1; ; n++ {
		cells, err := src.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("load %s table %s row %d: %w", spec.name, path, n, err)
		}
		view.cells, view.err = cells, nil
		row := spec.decode(view)
		if view.err == nil && spec.bound != nil {
			view.err = spec.bound(row)
		}
		if view.err != nil {
			return nil, fmt.Errorf("load %s table %s row %d: %w", spec.name, path, n, view.err)
		}
		out = append(out, row)
	}
}

var gemmSpec = tableSpec[GemmRow]{
	name:     "gemm",
	required: []string{"gemm_dtype", "m", "n", "k", "latency"},
	decode: func(r *rowView) GemmRow {
		return GemmRow{
			Dtype:     r.str("gemm_dtype"),
			M:         r.int("m", false),
			N:         r.int("n", false),
			K:         r.int("k", false),
			LatencyMs: r.latency("latency", false),
			EagerMs:   r.latency("eager_latency", true),
		}
	},
	bound: gemmBound,
}

// attnSpec decodes context and generation attention alike. window_size is
// optional because aiconfigurator's H100 tables predate it (no window).
func attnSpec(name string) tableSpec[AttnRow] {
	return tableSpec[AttnRow]{
		name: name,
		required: []string{"batch_size", "isl", "step", "num_heads", "num_key_value_heads",
			"head_dim", "attn_dtype", "kv_cache_dtype", "latency"},
		decode: func(r *rowView) AttnRow {
			return AttnRow{
				BatchSize:    r.int("batch_size", false),
				ISL:          r.int("isl", false),
				Step:         r.int("step", false),
				NumHeads:     r.int("num_heads", false),
				NumKVHeads:   r.int("num_key_value_heads", false),
				HeadDim:      r.int("head_dim", false),
				AttnDtype:    r.str("attn_dtype"),
				KVCacheDtype: r.str("kv_cache_dtype"),
				WindowSize:   r.int("window_size", true),
				LatencyMs:    r.latency("latency", false),
				EagerMs:      r.latency("eager_latency", true),
			}
		},
		bound: attnBound,
	}
}

var (
	contextAttnSpec    = attnSpec("context attention")
	generationAttnSpec = attnSpec("generation attention")
)

// mlaSpec decodes aiconfigurator's MLA core tables (context_mla_perf,
// generation_mla_perf) into attention rows: num_heads query heads per GPU
// over one latent KV head of MLAHeadDim values.
func mlaSpec(name string) tableSpec[AttnRow] {
	return tableSpec[AttnRow]{
		name:     name,
		required: []string{"batch_size", "isl", "step", "num_heads", "mla_dtype", "kv_cache_dtype", "latency"},
		decode: func(r *rowView) AttnRow {
			return AttnRow{
				BatchSize:    r.int("batch_size", false),
				ISL:          r.int("isl", false),
				Step:         r.int("step", false),
				NumHeads:     r.int("num_heads", false),
				NumKVHeads:   1,
				HeadDim:      MLAHeadDim,
				AttnDtype:    r.str("mla_dtype"),
				KVCacheDtype: r.str("kv_cache_dtype"),
				LatencyMs:    r.latency("latency", false),
				EagerMs:      r.latency("eager_latency", true),
			}
		},
	}
}

var (
	contextMLASpec    = mlaSpec("context mla")
	generationMLASpec = mlaSpec("generation mla")
)

var moeSpec = tableSpec[MoERow]{
	name: "moe",
	required: []string{"moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk",
		"num_experts", "moe_tp_size", "moe_ep_size", "distribution", "latency"},
	decode: func(r *rowView) MoERow {
		return MoERow{
			Dtype:        r.str("moe_dtype"),
			NumTokens:    r.int("num_tokens", false),
			Hidden:       r.int("hidden_size", false),
			Inter:        r.int("inter_size", false),
			TopK:         r.int("topk", false),
			NumExperts:   r.int("num_experts", false),
			MoETP:        r.int("moe_tp_size", false),
			MoEEP:        r.int("moe_ep_size", false),
			Distribution: r.str("distribution"),
			LatencyMs:    r.latency("latency", false),
			EagerMs:      r.latency("eager_latency", true),
		}
	},
	bound: moeBound,
}

// commSpec decodes a collective table. dtypeCol is "dtype" in the flat layout,
// "nccl_dtype" or "allreduce_dtype" in aiconfigurator's files. backend, when
// not "", is the Backend of every row (nccl_perf has no backend column).
func commSpec(dtypeCol, backend string) tableSpec[CommRow] {
	required := []string{"op_name", dtypeCol, "num_gpus", "message_size", "latency"}
	if backend == "" {
		required = append(required, "backend")
	}
	return tableSpec[CommRow]{
		name:     "comm",
		required: required,
		decode: func(r *rowView) CommRow {
			row := CommRow{
				Op:          r.str("op_name"),
				Backend:     backend,
				Dtype:       r.str(dtypeCol),
				NumGPUs:     r.int("num_gpus", false),
				MessageSize: r.int("message_size", false),
				LatencyMs:   r.latency("latency", false),
				EagerMs:     r.latency("eager_latency", true),
			}
			if backend == "" {
				row.Backend = r.str("backend")
			}
			return row
		},
		bound: commBound,
	}
}

var opsSpec = tableSpec[OpRow]{
	name:     "ops",
	required: []string{"op_name", "tokens", "width", "dtype", "latency"},
	decode: func(r *rowView) OpRow {
		return OpRow{
			Op:        r.str("op_name"),
			Tokens:    r.int("tokens", false),
			Width:     r.int("width", false),
			Dtype:     r.str("dtype"),
			LatencyMs: r.latency("latency", false),
			EagerMs:   r.latency("eager_latency", true),
		}
	},
	bound: opBound,
}
