package profiles

import (
	"fmt"
	"math"
	"sort"
)

// FamilyRatio is the latency ratio A/B over the shapes two tables share in
// one operator family (one group: a GEMM dtype, an MoE dtype and routing
// distribution, a collective and backend, an elementwise operator).
type FamilyRatio struct {
	Family       string // e.g. "gemm bfloat16", "generation attention", "moe bfloat16 balanced", "comm all_reduce nccl", "ops rmsnorm"
	Shared       int    // distinct shapes both tables hold
	OnlyA, OnlyB int    // distinct shapes one table holds and the other lacks
	// Median, P10 and P90 of latency A / latency B over the shared shapes
	// (linear-interpolated quantiles, as profiles/collect/compare.py); 0
	// when Shared is 0.
	Median, P10, P90 float64
}

// Comparison is CompareTables' result.
type Comparison struct {
	Families []FamilyRatio // groups both tables hold rows of, gemm, attention, moe, comm, ops in turn
	OnlyA    []string      // groups only A holds rows of
	OnlyB    []string      // groups only B holds rows of
}

// CompareTables compares the latencies of a and b at identical keys, per
// operator family. Keys are every column but the latencies:
//
//   - gemm: (m, n, k), one group per gemm_dtype;
//   - context attention: (batch, isl, prefix step, heads, kv heads, head_dim,
//     attn dtype, kv-cache dtype, window);
//   - generation attention: the same with the context length in place of
//     step, context = Step + DecodeContextOffset of each table, so the
//     collector's step 1024 (the context length) meets aiconfigurator's step
//     1023 (context − 1);
//   - moe: (tokens, hidden, inter, topk, experts, tp, ep), one group per
//     dtype and distribution;
//   - comm: (dtype, GPUs, message elements), one group per op and backend;
//     half, float16 and bfloat16 count as one dtype (NCCL moves the same
//     bytes; aiconfigurator's NCCL table is in half, the collector's in
//     bfloat16);
//   - ops: (tokens, width, dtype), one group per operator name.
//
// A key measured more than once in one table (aiconfigurator's H200
// attention and MoE tables repeat some shapes) counts once, at the median
// of its repeats.
func CompareTables(a, b *Tables) Comparison {
	mustBeDecoded(a, "CompareTables")
	mustBeDecoded(b, "CompareTables")
	var c Comparison
	type gemmKey struct{ m, n, k int64 }
	compareGroups(&c, a.Gemm, b.Gemm,
		func(r GemmRow) string { return "gemm " + r.Dtype },
		func(r GemmRow) gemmKey { return gemmKey{r.M, r.N, r.K} },
		func(r GemmRow) float64 { return r.LatencyMs })

	type attnKey struct {
		batch, isl, step, heads, kv, dim, window int64
		attnDtype, kvDtype                       string
	}
	attn := func(offset int64) func(AttnRow) attnKey {
		return func(r AttnRow) attnKey {
			return attnKey{r.BatchSize, r.ISL, r.Step + offset, r.NumHeads, r.NumKVHeads, r.HeadDim, r.WindowSize,
				r.AttnDtype, r.KVCacheDtype}
		}
	}
	attnMs := func(r AttnRow) float64 { return r.LatencyMs }
	compareGroups(&c, a.ContextAttn, b.ContextAttn,
		func(AttnRow) string { return "context attention" }, attn(0), attnMs)
	compareKeyed(&c,
		groupRows(a.GenerationAttn, func(AttnRow) string { return "generation attention" }, attn(a.DecodeContextOffset), attnMs),
		groupRows(b.GenerationAttn, func(AttnRow) string { return "generation attention" }, attn(b.DecodeContextOffset), attnMs))

	type moeKey struct{ tokens, hidden, inter, topk, experts, tp, ep int64 }
	compareGroups(&c, a.MoE, b.MoE,
		func(r MoERow) string { return "moe " + r.Dtype + " " + r.Distribution },
		func(r MoERow) moeKey {
			return moeKey{r.NumTokens, r.Hidden, r.Inter, r.TopK, r.NumExperts, r.MoETP, r.MoEEP}
		},
		func(r MoERow) float64 { return r.LatencyMs })

	type commKey struct {
		dtype         string
		gpus, message int64
	}
	compareGroups(&c, a.Comm, b.Comm,
		func(r CommRow) string { return "comm " + r.Op + " " + r.Backend },
		func(r CommRow) commKey { return commKey{commDtype(r.Dtype), r.NumGPUs, r.MessageSize} },
		func(r CommRow) float64 { return r.LatencyMs })

	type opKey struct {
		tokens, width int64
		dtype         string
	}
	compareGroups(&c, a.Ops, b.Ops,
		func(r OpRow) string { return "ops " + r.Op },
		func(r OpRow) opKey { return opKey{r.Tokens, r.Width, r.Dtype} },
		func(r OpRow) float64 { return r.LatencyMs })
	return c
}

// commDtype folds the 16-bit float names into one (see CompareTables).
func commDtype(d string) string {
	switch d {
	case "half", "float16", "fp16", "bfloat16", "bf16":
		return "16-bit float"
	}
	return d
}

// groupRows indexes rows by group, then key, keeping every latency of a
// repeated key.
func groupRows[R any, K comparable](rows []R, group func(R) string, key func(R) K, ms func(R) float64) map[string]map[K][]float64 {
	out := map[string]map[K][]float64{}
	for _, r := range rows {
		g := group(r)
		if out[g] == nil {
			out[g] = map[K][]float64{}
		}
		k := key(r)
		out[g][k] = append(out[g][k], ms(r))
	}
	return out
}

func compareGroups[R any, K comparable](c *Comparison, a, b []R, group func(R) string, key func(R) K, ms func(R) float64) {
	compareKeyed(c, groupRows(a, group, key, ms), groupRows(b, group, key, ms))
}

// compareKeyed appends one family's groups to c, sorted by name.
func compareKeyed[K comparable](c *Comparison, a, b map[string]map[K][]float64) {
	var names []string
	for g := range a {
		names = append(names, g)
	}
	for g := range b {
		if _, ok := a[g]; !ok {
			names = append(names, g)
		}
	}
	sort.Strings(names)
	for _, g := range names {
		ga, gb := a[g], b[g]
		switch {
		case gb == nil:
			c.OnlyA = append(c.OnlyA, g)
			continue
		case ga == nil:
			c.OnlyB = append(c.OnlyB, g)
			continue
		}
		fr := FamilyRatio{Family: g}
		var ratios []float64
		for k, la := range ga {
			lb, ok := gb[k]
			if !ok {
				fr.OnlyA++
				continue
			}
			ratios = append(ratios, median(la)/median(lb))
		}
		fr.Shared = len(ratios)
		fr.OnlyB = len(gb) - fr.Shared
		if len(ratios) > 0 {
			sort.Float64s(ratios)
			fr.Median, fr.P10, fr.P90 = quantile(ratios, 0.5), quantile(ratios, 0.1), quantile(ratios, 0.9)
		}
		c.Families = append(c.Families, fr)
	}
}

// median of a non-empty slice (not modified).
func median(v []float64) float64 {
	if len(v) == 1 {
		return v[0]
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return quantile(s, 0.5)
}

// quantile of sorted values, linear between neighbours (numpy's default).
func quantile(sorted []float64, q float64) float64 {
	pos := float64(len(sorted)-1) * q
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// String renders one ratio line for logs and tests.
func (f FamilyRatio) String() string {
	if f.Shared == 0 {
		return fmt.Sprintf("%s: no shared shapes", f.Family)
	}
	return fmt.Sprintf("%s: %d shared, median %.3f (p10 %.3f, p90 %.3f)", f.Family, f.Shared, f.Median, f.P10, f.P90)
}
