package predictor

import (
	"fmt"
	"math"

	"frontier/profiles"
)

// slowQuantRatio is how much dearer than the bfloat16 GEMM of the same
// shape a quantized one may be priced before a note says so. fp8 reads
// half the weight bytes and has twice the bf16 tensor-core rate on Hopper
// and Blackwell, so it should cost less at every m; an extra activation-
// quantization kernel explains a few µs (the H100 and H200 vLLM 0.19.0
// sets price fp8 up to 1.25× bf16 near m = 256), not 1.5× (Llama-3.1-70B
// TP4 on the H100 0.14.0 set: 2.28× at m = 384, 2.16× at m = 8,192; on
// B200 0.24.0: 3.02× at m = 1).
const slowQuantRatio = 1.5

// quantGemmNote compares each quantized GEMM dtype the model uses with
// bfloat16 over the model's own (n, k) shapes at every measured m (up to
// 16,384) and, where some shape is priced over slowQuantRatio × bf16,
// returns a note naming the worst; "" otherwise. It changes no price:
// the tables are what was measured, but a comparison of the two dtypes on
// them misleads, and the user should know.
func (p *Predictor) quantGemmNote() []string {
	h := p.cfg.Model.HiddenSize
	type use struct {
		dtype string
		nk    [][2]int
	}
	var uses []use
	add := func(f profiles.WeightFormat, nk ...[2]int) {
		d := profiles.GemmDtype(f)
		if d == "bfloat16" || d == "" {
			return
		}
		for i := range uses {
			if uses[i].dtype == d {
				uses[i].nk = append(uses[i].nk, nk...)
				return
			}
		}
		uses = append(uses, use{d, nk})
	}
	for _, k := range p.kinds {
		if !p.cfg.Model.IsMLA() {
			add(k.attn, [2]int{p.qkvN, h}, [2]int{h, p.oK})
		}
		if !k.moe {
			add(k.mlp, [2]int{p.upN, h}, [2]int{h, p.downK})
		} else if p.sharedN > 0 {
			add(k.mlp, [2]int{p.sharedN, h}, [2]int{h, p.sharedK})
		}
	}
	var notes []string
	for _, u := range uses {
		q := p.gemms[u.dtype]
		worst, wm, wnk := 0.0, 0, [2]int{}
		for _, mv := range q.m.v {
			m := int(mv)
			if m > 16384 {
				break
			}
			for _, nk := range u.nk {
				if nk[0] <= 0 || nk[1] <= 0 {
					continue
				}
				r := q.Ms(m, nk[0], nk[1]) / p.bf16.Ms(m, nk[0], nk[1])
				if r > worst {
					worst, wm, wnk = r, m, nk
				}
			}
		}
		if worst <= slowQuantRatio || math.IsNaN(worst) {
			continue
		}
		src := p.cfg.Hardware.Name
		if v := p.cfg.Tables.Version; v != "" {
			src += ", vLLM " + v
		}
		notes = append(notes, fmt.Sprintf("gemm %s: these tables (%s) price some of the model's %s GEMMs over %.1f× its bfloat16 GEMMs of the same shape (worst: m=%d n=%d k=%d, %.3f vs %.3f ms, %.2f×), though %s reads half the bytes at twice the tensor-core rate: an %s vs bf16 comparison on them understates %s (frontier hardware lists other --vllm-version sets)",
			u.dtype, src, u.dtype, slowQuantRatio, wm, wnk[0], wnk[1], q.Ms(wm, wnk[0], wnk[1]), p.bf16.Ms(wm, wnk[0], wnk[1]), worst, u.dtype, u.dtype, u.dtype))
	}
	return notes
}
