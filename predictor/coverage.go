package predictor

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Coverage counts the distinct shapes an operator family looked up (each
// Ms call of a memoized step shape) and those that fell outside its
// table's measured grid and were extrapolated by the family's stated rule.
// Summed over families and, in a run's result, over engines.
type Coverage struct {
	Lookups      int64
	Extrapolated int64
	// Families lists, per operator family with an extrapolated shape, how
	// many there were and the farthest one, in order of first appearance.
	Families []FamilyReach
}

// FamilyReach is one operator family's extrapolated shapes: how many, and
// the one whose coordinate lay the farthest outside the table's grid.
type FamilyReach struct {
	// Family names the table and operator: "gemm bfloat16", "decode
	// attention", "prefill attention", "moe bfloat16", "all_reduce",
	// "rmsnorm", …
	Family string
	// Shapes counts the family's extrapolated shapes.
	Shapes int64
	// Farthest is that shape, without the family ("m=8192 n=128256
	// k=4096"), and Reach how far out it lay.
	Farthest string
	Reach    Reach
	// Rule is how the family prices a shape outside its grid, as its
	// predictor's doc comment states it (gemmRule, decodeRule, …).
	Rule string
}

// Reach says how far one extrapolated shape lay outside its table: on
// Axis it asked for X where the table's nearest value is Edge (the grid's
// largest or smallest, or the nearest measured width). A shape that is
// extrapolated for another reason (a hole inside the grid, no table at
// all, a substituted expert shape) has no Axis and says Why. The zero
// Reach is a shape inside the grid.
type Reach struct {
	Axis    string
	X, Edge float64
	Why     string
	// Near says Edge is the nearest measured value inside the grid's
	// range (an unmeasured width between measured ones), not a grid edge;
	// At qualifies Edge when the axis's range depends on another
	// coordinate (", its longest at batch 1024; batch 639 is interpolated
	// between the rows at 512 and 1024": the row whose range Edge ends,
	// and how the shape's batch reads it).
	Near bool
	At   string
}

// Out says whether the shape was extrapolated.
func (r Reach) Out() bool { return r.Axis != "" || r.Why != "" }

// Factor is how many times farther than the table's value the shape
// asked, ≥ 1 (X/Edge above the grid, Edge/X below it); 1 for a shape out
// for a reason with no axis, 0 inside.
func (r Reach) Factor() float64 {
	switch {
	case r.Axis != "" && r.X > 0 && r.Edge > 0:
		return math.Max(r.X/r.Edge, r.Edge/r.X)
	case r.Out():
		return 1
	}
	return 0
}

// String is the reach as the summary prints it: "n 128256 = 1.96× the
// table's 65536", "context 620 = 4.84× the table's 128, its longest at
// batch 512",
// "width 4608 = 0.9× the nearest measured 5120", or the reason.
func (r Reach) String() string {
	if r.Axis == "" {
		return r.Why
	}
	if r.Near {
		return fmt.Sprintf("%s %.6g = %.3g× the nearest measured %.6g%s", r.Axis, r.X, r.X/r.Edge, r.Edge, r.At)
	}
	return fmt.Sprintf("%s %.6g = %.3g× the table's %.6g%s", r.Axis, r.X, r.X/r.Edge, r.Edge, r.At)
}

// beyond is the reach of x on grid axis a, named name: zero inside.
func beyond(name string, a axis, x float64) Reach {
	switch n := len(a.v); {
	case n == 0:
		return Reach{}
	case x > a.v[n-1]:
		return Reach{Axis: name, X: x, Edge: a.v[n-1]}
	case x < a.v[0]:
		return Reach{Axis: name, X: x, Edge: a.v[0]}
	}
	return Reach{}
}

// farther is the reach of the axis farthest out among rs (the first on a
// tie), zero when all are inside.
func farther(rs ...Reach) Reach {
	var best Reach
	for _, r := range rs {
		if r.Factor() > best.Factor() {
			best = r
		}
	}
	return best
}

// note counts one distinct shape of family looked up; r says whether and
// how far it was outside the grid, rule how the family prices such a
// shape. shape (the shape's coordinates, for the report) is called only
// for a family's farthest shape so far.
func (c *Coverage) note(family, rule string, r Reach, shape func() string) {
	c.Lookups++
	if !r.Out() {
		return
	}
	c.Extrapolated++
	c.addFamily(FamilyReach{Family: family, Shapes: 1, Reach: r, Rule: rule}, shape)
}

// RuleNotes states, once per rule, how the families with an extrapolated
// shape price one, naming the families that share it in order of first
// appearance: "rmsnorm, rotary: an extrapolated shape is priced so: …".
// They carry no counts (simulate's summary has them), so a planning
// command's probes give the same notes.
func (c *Coverage) RuleNotes() []string {
	notes := make([]string, 0, len(c.Families))
	for _, f := range c.Families {
		notes = append(notes, f.Family+ruleNoteMark+f.Rule)
	}
	return MergeRuleNotes(notes)
}

// ruleNoteMark separates a rule note's families from its rule.
const ruleNoteMark = ": an extrapolated shape is priced so: "

// MergeRuleNotes merges the rule notes (RuleNotes) of several runs that
// state one rule into one note naming every family of any of them, in
// order of first appearance, at the first one's place; other notes pass
// unchanged. A sweep's points price different families by one rule
// (attack12: "rmsnorm, rotary, embedding, sampler: …" and "rmsnorm,
// rotary, silu_and_mul, embedding, sampler: …", the same rule twice).
func MergeRuleNotes(notes []string) []string {
	var out []string
	at := map[string]int{}            // rule → its note's index in out
	families := map[string][]string{} // rule → families, in order
	for _, n := range notes {
		fams, rule, ok := strings.Cut(n, ruleNoteMark)
		if !ok {
			out = append(out, n)
			continue
		}
		if _, seen := at[rule]; !seen {
			at[rule] = len(out)
			out = append(out, "")
		}
		for _, f := range strings.Split(fams, ", ") {
			if !slices.Contains(families[rule], f) {
				families[rule] = append(families[rule], f)
			}
		}
	}
	for rule, i := range at {
		out[i] = strings.Join(families[rule], ", ") + ruleNoteMark + rule
	}
	return out
}

// Add sums o into c: counts, and per family the shapes and the farthest.
func (c *Coverage) Add(o Coverage) {
	c.Lookups += o.Lookups
	c.Extrapolated += o.Extrapolated
	for _, f := range o.Families {
		c.addFamily(f, func() string { return f.Farthest })
	}
}

func (c *Coverage) addFamily(f FamilyReach, shape func() string) {
	for i := range c.Families {
		g := &c.Families[i]
		if g.Family != f.Family {
			continue
		}
		g.Shapes += f.Shapes
		if f.Reach.Factor() > g.Reach.Factor() {
			g.Reach, g.Farthest = f.Reach, shape()
		}
		return
	}
	f.Farthest = shape()
	c.Families = append(c.Families, f)
}
