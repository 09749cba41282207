package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Axis is one swept flag: KEY (a `simulate` flag name without the leading dashes)
// and the values it takes, as the flag's text.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// MaxPoints bounds a sweep's size, so a typo in a range (1:1e9:1) is an
// error rather than an out-of-memory crash.
const MaxPoints = 1_000_000

// ParseVary reads one --vary: "KEY=V1,V2,…" (a list) or
// "KEY=START:STOP:STEP" (numbers; STOP included when the steps land on
// it). Errors name --vary and say what is allowed: a missing KEY or
// value, an empty list item, step 0, a step whose sign leads away from
// STOP, a range of more than MaxPoints values.
func ParseVary(s string) (Axis, error) {
	key, val, ok := strings.Cut(s, "=")
	key = FlagKey(strings.TrimPrefix(strings.TrimSpace(key), "--"))
	if !ok || key == "" {
		return Axis{}, fmt.Errorf("--vary %q: want KEY=V1,V2,… or KEY=START:STOP:STEP (KEY: a simulate flag name without the leading dashes)", s)
	}
	if strings.Count(val, ":") == 2 && !strings.Contains(val, ",") {
		vals, err := parseRange(val)
		if err != nil {
			return Axis{}, fmt.Errorf("--vary %s: %w", s, err)
		}
		return Axis{Key: key, Values: vals}, nil
	}
	var vals []string
	for _, v := range strings.Split(val, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return Axis{}, fmt.Errorf("--vary %s: empty value in the list (want KEY=V1,V2,…)", s)
		}
		vals = append(vals, v)
	}
	return Axis{Key: key, Values: vals}, nil
}

// FlagKey is an axis key as simulate's flag set names it: underscores
// read as dashes, as vLLM's parser and frontier's flags take them
// (max_num_seqs is max-num-seqs).
func FlagKey(key string) string { return strings.ReplaceAll(key, "_", "-") }

// parseRange expands START:STOP:STEP. Integers stay integers; otherwise
// each value is START + i·STEP rounded to the inputs' decimals, so
// 0.1:0.3:0.1 gives 0.1, 0.2, 0.3 (not 0.30000000000000004).
func parseRange(r string) ([]string, error) {
	parts := strings.Split(r, ":")
	var f [3]float64
	decimals := 0
	allInt := true
	for i, p := range parts {
		p = strings.TrimSpace(p)
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("START:STOP:STEP must be finite numbers, got %q", p)
		}
		f[i] = v
		if _, err := strconv.ParseInt(p, 10, 64); err != nil {
			allInt = false
		}
		if d := strings.IndexAny(p, "."); d >= 0 && !strings.ContainsAny(p, "eE") {
			decimals = max(decimals, len(p)-d-1)
		}
	}
	start, stop, step := f[0], f[1], f[2]
	switch {
	case step == 0:
		return nil, fmt.Errorf("STEP must not be 0")
	case (stop-start)*step < 0:
		return nil, fmt.Errorf("STEP %g leads away from STOP (%g → %g): give it the sign of STOP − START", step, start, stop)
	}
	n := math.Floor((stop-start)/step+1e-9) + 1
	if n > MaxPoints {
		return nil, fmt.Errorf("%g values; at most %d", n, MaxPoints)
	}
	out := make([]string, 0, int(n))
	for i := 0; i < int(n); i++ {
		v := start + float64(i)*step
		if allInt {
			out = append(out, strconv.FormatInt(int64(math.Round(v)), 10))
			continue
		}
		scale := math.Pow(10, float64(decimals))
		if decimals > 0 && decimals < 15 {
			v = math.Round(v*scale) / scale
		}
		out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return out, nil
}

// Assignment is one flag setting of a point: --Key=Value.
type Assignment struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Arg is the assignment as a command-line argument, "--KEY=VALUE".
func (a Assignment) Arg() string { return "--" + a.Key + "=" + a.Value }

// Point is one simulation of a sweep: the base scenario, then (when set)
// one of the sweep file's deployments, then the flag assignments.
type Point struct {
	Index      int          // 0-based, in the sweep's canonical order
	Deployment *Entry       // a whole deployment from the sweep file; nil = the base's
	Set        []Assignment // in axis order
}

// Args are the point's assignments as command-line arguments.
func (p Point) Args() []string {
	out := make([]string, len(p.Set))
	for i, a := range p.Set {
		out[i] = a.Arg()
	}
	return out
}

// Label names the point for tables and messages: "deployment=NAME"
// first, then KEY=VALUE per axis; "base" when nothing is set.
func (p Point) Label() string {
	var parts []string
	if p.Deployment != nil {
		parts = append(parts, "deployment="+p.Deployment.Name)
	}
	for _, a := range p.Set {
		parts = append(parts, a.Key+"="+a.Value)
	}
	if len(parts) == 0 {
		return "base"
	}
	return strings.Join(parts, " ")
}

// Expand lists a sweep's points: the cross product of the axes (the first
// axis outermost, as nested loops in the order given), or with zip the
// i-th value of every axis together; the sweep file's deployments, when
// any, are the outermost loop. Errors: zip over axes of different
// lengths, a key given twice, more than MaxPoints points (crossed or
// zipped, times the deployments).
func Expand(axes []Axis, zip bool, deployments []Entry) ([]Point, error) {
	seen := map[string]bool{}
	for _, a := range axes {
		if seen[a.Key] {
			return nil, fmt.Errorf("--vary %s: the key is varied twice; give all its values in one --vary", a.Key)
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			return nil, fmt.Errorf("--vary %s: no values", a.Key)
		}
	}
	var combos [][]Assignment
	switch {
	case len(axes) == 0:
		combos = [][]Assignment{nil}
	case zip:
		n := len(axes[0].Values)
		for _, a := range axes[1:] {
			if len(a.Values) != n {
				return nil, fmt.Errorf("--zip: every axis needs as many values (%s has %d, %s has %d)", axes[0].Key, n, a.Key, len(a.Values))
			}
		}
		if total := float64(n) * float64(max(1, len(deployments))); total > MaxPoints {
			return nil, fmt.Errorf("--vary: %g points; at most %d", total, MaxPoints)
		}
		for i := 0; i < n; i++ {
			c := make([]Assignment, len(axes))
			for k, a := range axes {
				c[k] = Assignment{a.Key, a.Values[i]}
			}
			combos = append(combos, c)
		}
	default:
		total := 1.0
		for _, a := range axes {
			total *= float64(len(a.Values))
		}
		if total*float64(max(1, len(deployments))) > MaxPoints {
			return nil, fmt.Errorf("--vary: %g points; at most %d", total*float64(max(1, len(deployments))), MaxPoints)
		}
		combos = [][]Assignment{nil}
		for _, a := range axes {
			var next [][]Assignment
			for _, c := range combos {
				for _, v := range a.Values {
					next = append(next, append(append([]Assignment{}, c...), Assignment{a.Key, v}))
				}
			}
			combos = next
		}
	}
	var points []Point
	deps := []*Entry{nil}
	if len(deployments) > 0 {
		deps = deps[:0]
		for i := range deployments {
			deps = append(deps, &deployments[i])
		}
	}
	for _, d := range deps {
		for _, c := range combos {
			points = append(points, Point{Index: len(points), Deployment: d, Set: c})
		}
	}
	return points, nil
}

// CheckKeys refuses an axis whose key is not one of allowed (the flags a
// point may set), listing them.
func CheckKeys(axes []Axis, allowed []string) error {
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	for _, a := range axes {
		if !ok[a.Key] {
			return fmt.Errorf("--vary %s: unknown KEY %q; allowed (simulate's flag names without the leading dashes): %s", a.Key, a.Key, strings.Join(allowed, ", "))
		}
	}
	return nil
}
