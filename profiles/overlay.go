package profiles

import (
	"fmt"
	"strings"
)

// Overlay returns the tables of top with every operator family top lacks
// taken from base, so a folder holding only some tables (say a measured
// gemm_perf.csv) overrides just those. Notes say which families came from
// where. Neither input is modified.
func Overlay(top, base *Tables) *Tables {
	mustBeDecoded(top, "Overlay")
	mustBeDecoded(base, "Overlay")
	out := *top
	out.Notes = append([]string{}, top.Notes...)
	var taken []string
	fill(&out.Gemm, base.Gemm, "gemm", &taken)
	fill(&out.ContextAttn, base.ContextAttn, "context attention", &taken)
	if fill(&out.GenerationAttn, base.GenerationAttn, "generation attention", &taken) {
		out.DecodeContextOffset = base.DecodeContextOffset
	}
	fill(&out.MoE, base.MoE, "moe", &taken)
	fill(&out.ContextMLA, base.ContextMLA, "context mla", &taken)
	fill(&out.GenerationMLA, base.GenerationMLA, "generation mla", &taken)
	fill(&out.Comm, base.Comm, "collectives", &taken)
	fill(&out.Ops, base.Ops, "elementwise ops", &taken)
	if len(taken) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("tables from %s; %s from the default %s set", top.Source, andList(taken), base.Hardware))
	}
	return &out
}

// fill sets *dst to src when *dst is empty, records name in taken, and
// reports whether it did.
func fill[T any](dst *[]T, src []T, name string, taken *[]string) bool {
	if len(*dst) > 0 {
		return false
	}
	*dst = src
	*taken = append(*taken, name)
	return true
}

// andList writes names as prose: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
