package profiles

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// compileIgnore prepares the "re:" patterns of Ignore and the stems of
// its plain entries. Run it again after changing Ignore.
func (q *Quant) compileIgnore() error {
	q.ignoreRE, q.ignoreFrom = nil, q.Ignore
	q.ignoreStems = make(map[string]struct{}, len(q.Ignore))
	for _, e := range q.Ignore {
		if !strings.HasPrefix(e, "re:") {
			q.ignoreStems[moduleStem(e)] = struct{}{}
		}
		if pat, ok := strings.CutPrefix(e, "re:"); ok {
			// Python's re.match, as compressed-tensors applies the
			// pattern: anchored at the start of the name.
			re, err := regexp.Compile(`^(?:` + pat + `)`)
			if err != nil {
				return fmt.Errorf("ignore pattern %q: %w", e, err)
			}
			q.ignoreRE = append(q.ignoreRE, re)
		}
	}
	return nil
}

// moduleStem drops the wrapper prefixes checkpoints put before the layer
// stack ("language_model.", "model."), so "language_model.model.layers.3.
// self_attn.q_proj" and "model.layers.3.self_attn.q_proj" compare equal.
func moduleStem(name string) string {
	for {
		switch {
		case strings.HasPrefix(name, "language_model."):
			name = strings.TrimPrefix(name, "language_model.")
		case strings.HasPrefix(name, "model."):
			name = strings.TrimPrefix(name, "model.")
		default:
			return name
		}
	}
}

// Skips reports whether the module (its checkpoint name, e.g.
// "model.layers.3.self_attn.q_proj") stays 16-bit: an Ignore entry names
// it, names a parent module of it ("model.layers.0.mlp"), or is a "re:"
// pattern matching it (compressed-tensors). Fused modules (qkv_proj,
// gate_up_proj) are asked by their shards' names; vLLM refuses
// checkpoints whose shards disagree, so one shard decides.
func (q *Quant) Skips(module string) bool {
	if q == nil {
		return true
	}
	stem := moduleStem(module)
	if q.compiled() && !q.substr && !q.wildcard {
		// An entry names the module or a parent: the stem or one of its
		// prefixes that ends before a ".".
		if _, ok := q.ignoreStems[stem]; ok {
			return true
		}
		for i := range len(stem) {
			if stem[i] == '.' {
				if _, ok := q.ignoreStems[stem[:i]]; ok {
					return true
				}
			}
		}
		return q.skipsRE(module, stem)
	}
	for _, e := range q.Ignore {
		if strings.HasPrefix(e, "re:") {
			continue
		}
		es := moduleStem(e)
		switch {
		case stem == es || parentOf(es, stem):
			return true
		case q.substr && (strings.Contains(module, e) || strings.Contains(stem, es)):
			return true
		case q.wildcard && (fnmatch(e, module) || fnmatch(es, stem)):
			return true
		}
	}
	return q.skipsRE(module, stem)
}

// skipsRE reports whether a "re:" entry of Ignore matches the module or
// its stem.
func (q *Quant) skipsRE(module, stem string) bool {
	for _, re := range q.ignoreRE {
		if re.MatchString(module) || re.MatchString(stem) {
			return true
		}
	}
	return false
}

// compiled reports whether compileIgnore made ignoreStems from the
// current Ignore slice.
func (q *Quant) compiled() bool {
	return q.ignoreStems != nil && len(q.ignoreFrom) == len(q.Ignore) &&
		(len(q.Ignore) == 0 || &q.ignoreFrom[0] == &q.Ignore[0])
}

// parentOf reports whether module p is a parent of module m
// ("model.layers.0.mlp" of "model.layers.0.mlp.gate_proj", not of
// "model.layers.0.mlp2").
func parentOf(p, m string) bool {
	return len(m) > len(p) && m[len(p)] == '.' && strings.HasPrefix(m, p)
}

// fnmatch is Python's fnmatch.fnmatch on module names (which hold no
// "/"): *, ? and [seq] wildcards; a malformed pattern matches nothing.
func fnmatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
