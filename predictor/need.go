package predictor

import (
	"slices"

	"frontier/profiles"
)

// TablesNeed is the part of an embedded table set that New reads for cfg
// (cfg.Tables is not used): GEMM rows of bfloat16 (LM head, router) and
// of every stored weight format of the priced stage's layers,
// full-attention rows (window_size 0) of the model's head_dim (MLA rows
// for an MLA model) and cfg.KVDtype, and for a MoE model the MoE rows of every dtype its
// experts' format may be priced from (profiles.MoEDtypes, all of them, so
// the choice among them is the one every row gives).
// profiles.DefaultTablesFor loads just those, so start-up decodes a
// fraction of the tables. A change to what New reads must change this
// too: TestTablesNeedPricesAsEveryRow compares both on every kind of
// model and deployment (and sim prices from every row when the part
// fails to build).
func TablesNeed(cfg Config) profiles.Need {
	m := cfg.Model
	n := profiles.Need{KVDtype: cfg.KVDtype, GemmDtypes: []string{"bfloat16"}}
	if n.KVDtype == "" {
		n.KVDtype = "bfloat16"
	}
	if m.IsMLA() {
		n.MLA = true
	} else {
		n.HeadDim = m.HeadDim
	}
	add := func(list *[]string, d string) {
		if d != "" && !slices.Contains(*list, d) {
			*list = append(*list, d)
		}
	}
	kinds, _, _ := stageKinds(m, max(cfg.PP, 1))
	for _, k := range kinds {
		add(&n.GemmDtypes, profiles.GemmDtype(k.attn))
		add(&n.GemmDtypes, profiles.GemmDtype(k.mlp))
		if k.moe {
			for _, d := range profiles.MoEDtypes(k.expert) {
				add(&n.MoEDtypes, d)
			}
		}
	}
	return n
}
