package profiles

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// FamilyCoverage says which shapes one operator family of a Tables holds,
// for a person deciding whether the tables cover a deployment.
type FamilyCoverage struct {
	Family string   // gemm | context attention | generation attention | moe | comm | ops | context mla | generation mla
	Rows   int      // rows as loaded (repeated shapes count each time)
	Dtypes []string // distinct dtypes: gemm/moe dtype, attention kv-cache dtype, comm dtype, ops dtype
	// Groups describes the shape ranges, one line per group (a GEMM dtype,
	// a collective, an operator) or aspect (batch and length ranges, head
	// configurations, MoE shapes).
	Groups []string
}

// Describe summarizes t's coverage per operator family, families without
// rows included (Rows 0, no Groups).
func Describe(t *Tables) []FamilyCoverage {
	mustBeDecoded(t, "Describe")
	return []FamilyCoverage{
		describeGemm(t.Gemm),
		describeAttn("context attention", t.ContextAttn, 0),
		describeAttn("generation attention", t.GenerationAttn, t.DecodeContextOffset),
		describeMoE(t.MoE),
		describeComm(t.Comm),
		describeOps(t.Ops),
		describeAttn("context mla", t.ContextMLA, 0),
		describeAttn("generation mla", t.GenerationMLA, 1),
	}
}

func describeGemm(rows []GemmRow) FamilyCoverage {
	f := FamilyCoverage{Family: "gemm", Rows: len(rows)}
	type acc struct {
		rows    int
		m, n, k intSet
		nk      map[[2]int64]bool
	}
	by := map[string]*acc{}
	for _, r := range rows {
		a := by[r.Dtype]
		if a == nil {
			a = &acc{nk: map[[2]int64]bool{}}
			by[r.Dtype] = a
		}
		a.rows++
		a.m.add(r.M)
		a.n.add(r.N)
		a.k.add(r.K)
		a.nk[[2]int64{r.N, r.K}] = true
	}
	f.Dtypes = sortedKeys(by)
	for _, d := range f.Dtypes {
		a := by[d]
		f.Groups = append(f.Groups, fmt.Sprintf("%s: %d rows, m %s, n %s, k %s, %d (n,k) pairs",
			d, a.rows, a.m.span(), a.n.span(), a.k.span(), len(a.nk)))
	}
	return f
}

// describeAttn covers prefill (offset 0: step is the cached prefix) or
// decode attention (step + offset is the context length).
func describeAttn(family string, rows []AttnRow, offset int64) FamilyCoverage {
	f := FamilyCoverage{Family: family, Rows: len(rows)}
	if len(rows) == 0 {
		return f
	}
	var batch, isl, step, dims, windows intSet
	heads := map[[2]int64]bool{}
	kv, attn := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		batch.add(r.BatchSize)
		isl.add(r.ISL)
		step.add(r.Step + offset)
		dims.add(r.HeadDim)
		windows.add(r.WindowSize)
		heads[[2]int64{r.NumHeads, r.NumKVHeads}] = true
		kv[r.KVCacheDtype] = true
		attn[r.AttnDtype] = true
	}
	f.Dtypes = sortedKeys(kv)
	if strings.HasPrefix(family, "generation") {
		conv := "step is the context length"
		if offset != 0 {
			conv = fmt.Sprintf("step + %d", offset)
		}
		f.Groups = append(f.Groups, fmt.Sprintf("batch %s, context %s (%s)", batch.span(), step.span(), conv))
	} else {
		f.Groups = append(f.Groups, fmt.Sprintf("batch %s, isl %s, cached prefix %s", batch.span(), isl.span(), step.span()))
	}
	pairs := make([][2]int64, 0, len(heads))
	for h := range heads {
		pairs = append(pairs, h)
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	hs := make([]string, len(pairs))
	for i, p := range pairs {
		hs[i] = fmt.Sprintf("%d/%d", p[0], p[1])
	}
	f.Groups = append(f.Groups,
		fmt.Sprintf("%d head configurations (query/kv heads per GPU): %s", len(hs), strings.Join(hs, " ")),
		fmt.Sprintf("head_dim %s, window %s, attn dtype %s, kv cache %s",
			dims.list(), windows.list(), strings.Join(sortedKeys(attn), " "), strings.Join(f.Dtypes, " ")))
	return f
}

// maxMoEShapes bounds the MoE shapes listed by name.
const maxMoEShapes = 12

func describeMoE(rows []MoERow) FamilyCoverage {
	f := FamilyCoverage{Family: "moe", Rows: len(rows)}
	if len(rows) == 0 {
		return f
	}
	var tokens intSet
	dtypes, dists := map[string]bool{}, map[string]bool{}
	shapes := map[[6]int64]bool{}
	for _, r := range rows {
		tokens.add(r.NumTokens)
		dtypes[r.Dtype] = true
		dists[r.Distribution] = true
		shapes[[6]int64{r.Hidden, r.Inter, r.TopK, r.NumExperts, r.MoETP, r.MoEEP}] = true
	}
	f.Dtypes = sortedKeys(dtypes)
	keys := make([][6]int64, 0, len(shapes))
	for s := range shapes {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool {
		for x := range keys[i] {
			if keys[i][x] != keys[j][x] {
				return keys[i][x] < keys[j][x]
			}
		}
		return false
	})
	var listed []string
	for i, s := range keys {
		if i == maxMoEShapes {
			listed = append(listed, fmt.Sprintf("... %d more", len(keys)-maxMoEShapes))
			break
		}
		listed = append(listed, fmt.Sprintf("(%d,%d,%d,%d,%d,%d)", s[0], s[1], s[2], s[3], s[4], s[5]))
	}
	f.Groups = append(f.Groups,
		fmt.Sprintf("tokens %s, distributions %s", tokens.span(), strings.Join(sortedKeys(dists), " ")),
		fmt.Sprintf("%d shapes (hidden, inter, topk, experts, tp, ep): %s", len(keys), strings.Join(listed, " ")))
	return f
}

func describeComm(rows []CommRow) FamilyCoverage {
	f := FamilyCoverage{Family: "comm", Rows: len(rows)}
	type acc struct {
		rows      int
		gpus, msg intSet
		dtypes    map[string]bool
	}
	by := map[string]*acc{}
	all := map[string]bool{}
	for _, r := range rows {
		g := r.Op + " " + r.Backend
		a := by[g]
		if a == nil {
			a = &acc{dtypes: map[string]bool{}}
			by[g] = a
		}
		a.rows++
		a.gpus.add(r.NumGPUs)
		a.msg.add(r.MessageSize)
		a.dtypes[r.Dtype] = true
		all[r.Dtype] = true
	}
	f.Dtypes = sortedKeys(all)
	for _, g := range sortedKeys(by) {
		a := by[g]
		f.Groups = append(f.Groups, fmt.Sprintf("%s: %d rows, %s, GPUs %s, message %s elements",
			g, a.rows, strings.Join(sortedKeys(a.dtypes), " "), a.gpus.list(), a.msg.span()))
	}
	return f
}

func describeOps(rows []OpRow) FamilyCoverage {
	f := FamilyCoverage{Family: "ops", Rows: len(rows)}
	type acc struct {
		rows          int
		tokens, width intSet
		dtypes        map[string]bool
	}
	by := map[string]*acc{}
	all := map[string]bool{}
	for _, r := range rows {
		a := by[r.Op]
		if a == nil {
			a = &acc{dtypes: map[string]bool{}}
			by[r.Op] = a
		}
		a.rows++
		a.tokens.add(r.Tokens)
		a.width.add(r.Width)
		a.dtypes[r.Dtype] = true
		all[r.Dtype] = true
	}
	f.Dtypes = sortedKeys(all)
	for _, op := range sortedKeys(by) {
		a := by[op]
		f.Groups = append(f.Groups, fmt.Sprintf("%s: %d rows, %s, tokens %s, width %s",
			op, a.rows, strings.Join(sortedKeys(a.dtypes), " "), a.tokens.span(), a.width.list()))
	}
	return f
}

// intSet collects distinct integers for span and list.
type intSet map[int64]bool

func (s *intSet) add(v int64) {
	if *s == nil {
		*s = intSet{}
	}
	(*s)[v] = true
}

func (s intSet) sorted() []int64 {
	out := make([]int64, 0, len(s))
	for v := range s {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// span is "lo..hi (n values)", or the value when there is one.
func (s intSet) span() string {
	v := s.sorted()
	switch len(v) {
	case 0:
		return "-"
	case 1:
		return strconv.FormatInt(v[0], 10)
	}
	return fmt.Sprintf("%d..%d (%d values)", v[0], v[len(v)-1], len(v))
}

// maxListed bounds list; longer sets print as a span.
const maxListed = 8

// list names every value when there are few, else the span.
func (s intSet) list() string {
	v := s.sorted()
	if len(v) > maxListed {
		return s.span()
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, " ")
}

// sortedKeys returns m's keys in order, nil when m is empty.
func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
