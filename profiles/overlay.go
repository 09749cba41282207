package profiles

import "fmt"

// Overlay returns the tables of top with every operator family top lacks
// taken from base, so a folder holding only some tables (say a measured
// gemm_perf.csv) overrides just those. Notes say which families came from
// where. Neither input is modified.
func Overlay(top, base *Tables) *Tables {
	out := *top
	out.Notes = append([]string{}, top.Notes...)
	var taken []string
	if len(out.Gemm) == 0 {
		out.Gemm = base.Gemm
		taken = append(taken, "gemm")
	}
	if len(out.ContextAttn) == 0 {
		out.ContextAttn = base.ContextAttn
		taken = append(taken, "context attention")
	}
	if len(out.GenerationAttn) == 0 {
		out.GenerationAttn, out.DecodeContextOffset = base.GenerationAttn, base.DecodeContextOffset
		taken = append(taken, "generation attention")
	}
	if len(out.MoE) == 0 {
		out.MoE = base.MoE
		taken = append(taken, "moe")
	}
	if len(out.Comm) == 0 {
		out.Comm = base.Comm
		taken = append(taken, "collectives")
	}
	if len(out.Ops) == 0 {
		out.Ops = base.Ops
		taken = append(taken, "elementwise ops")
	}
	if len(taken) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("tables from %s; %v from the default %s set", top.Source, taken, base.Hardware))
	}
	return &out
}
