package predictor

import "frontier/profiles"

// Template is what New derives from the operator tables for one model
// shard (interpolation grids and curves), built once and shared
// read-only by every predictor it makes. Building the grids costs far
// more than a short simulation's pricing, and a deployment builds one
// predictor per engine core per run. Safe for concurrent use.
type Template struct {
	key   templateKey
	proto *Predictor // never prices: its memos and coverage stay empty
}

// templateKey is every Config field New's table work depends on.
type templateKey struct {
	tables         *profiles.Tables
	model          profiles.ModelSpec
	dtype, kv      string
	dist           string
	tp, dp         int
	expertParallel bool
}

func keyOf(cfg Config) templateKey {
	return templateKey{
		tables: cfg.Tables, model: cfg.Model, dtype: cfg.Dtype, kv: cfg.KVDtype, dist: cfg.MoEDistribution,
		tp: cfg.TP, dp: cfg.DP, expertParallel: cfg.ExpertParallel,
	}
}

// NewTemplate builds the shared part of cfg's predictors; it fails where
// New fails.
func NewTemplate(cfg Config) (*Template, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &Template{key: keyOf(p.cfg), proto: p}, nil
}

// New returns a fresh predictor for cfg, equal to New(cfg): its own
// memos, coverage and notes over the template's grids. A nil template,
// or a cfg whose tables or shapes differ from the template's, falls back
// to New(cfg).
func (t *Template) New(cfg Config) (*Predictor, error) {
	if t == nil {
		return New(cfg)
	}
	cfg, err := withDefaults(cfg)
	if err != nil || keyOf(cfg) != t.key {
		return New(cfg)
	}
	src := t.proto
	p := newEmptyLike(cfg, src)
	p.gemms = make(map[string]*Gemm, len(src.gemms))
	for d, sg := range src.gemms {
		g := *sg
		g.Cov = Coverage{}
		p.gemms[d] = &g
	}
	p.bf16 = p.gemms["bfloat16"]
	p.attn = &Attention{PeakFLOPS: src.attn.PeakFLOPS, headDim: src.attn.headDim, prefill: src.attn.prefill, decode: src.attn.decode, latent: src.attn.latent}
	p.comm = freshComm(src.comm)
	e := *src.elem
	e.Cov = Coverage{}
	p.elem = &e
	p.moeComm = freshComm(src.moeComm)
	if src.moes != nil {
		p.moes = make(map[profiles.WeightFormat]*MoE, len(src.moes))
		for f, sm := range src.moes {
			m := *sm
			m.Cov = Coverage{}
			p.moes[f] = &m
		}
	}
	p.Notes = append(p.Notes, src.Notes...)
	return p, nil
}

func freshComm(c *Comm) *Comm {
	if c == nil {
		return nil
	}
	return &Comm{gpus: c.gpus, curves: c.curves, ncclOnly: c.ncclOnly}
}
