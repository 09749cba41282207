package workload

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"frontier/scenarios"
)

// Class is one request class of a plan: its name in the per-class
// metrics and its priority.
type Class struct {
	Name     string
	Priority int
}

// classSeed is the PCG stream of class draws: separate from the
// workload's main stream, so a mix changes no arrival time.
const classSeed = 0xc1a55e5

// mixClasses draws each prompt's class (workload.classes, probability
// share, in prompt order) and, for the random dataset, redraws the
// lengths of a class that sets its own, as bench serve draws them:
// uniform in [⌊len·(1−r)⌋, ⌊len·(1+r)⌋] with r = random.range_ratio.
func mixClasses(prompts []Request, w *scenarios.Workload) {
	if len(w.Classes) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(w.Seed), classSeed))
	for i := range prompts {
		u, c := rng.Float64(), 0
		for acc := w.Classes[0].Share; c < len(w.Classes)-1 && u >= acc; acc += w.Classes[c].Share {
			c++
		}
		cl := &w.Classes[c]
		p := &prompts[i]
		p.Class, p.Priority = uint8(c), cl.Priority
		if w.Dataset != "random" {
			continue
		}
		if cl.InputLen > 0 {
			lo, hi := lengthRange(cl.InputLen, w.Random.RangeRatio)
			p.PromptTokens = int32(lo + rng.IntN(hi-lo+1))
		}
		if cl.OutputLen > 0 {
			lo, hi := lengthRange(cl.OutputLen, w.Random.RangeRatio)
			p.OutputTokens = int32(lo + rng.IntN(hi-lo+1))
		}
	}
}

// withClasses attaches workload.classes to a built plan (nil stays nil).
func withClasses(p *Plan, w *scenarios.Workload) *Plan {
	if p != nil {
		for _, c := range w.Classes {
			p.Classes = append(p.Classes, Class{Name: c.Name, Priority: c.Priority})
		}
	}
	return p
}

// traceClasses makes one class per distinct priority of a trace with a
// priority column, lowest first, and sets each request's Class; nil when
// every priority is 0 (no column, or a column of zeros). A trace with
// more than scenarios.MaxClasses distinct priorities (a priority per
// request: a deadline, a rank) has no classes either, and note says why:
// a per-class table of thousands of one-request rows says nothing.
func traceClasses(reqs []Request) (classes []Class, note string) {
	seen := map[int]bool{}
	for _, r := range reqs {
		seen[r.Priority] = true
	}
	if len(seen) == 1 && seen[0] {
		return nil, ""
	}
	if len(seen) > scenarios.MaxClasses {
		return nil, fmt.Sprintf("trace: %d distinct priorities, more than %d: no per-class metrics (a class per priority up to %d); the priorities still order the waiting queue", len(seen), scenarios.MaxClasses, scenarios.MaxClasses)
	}
	prios := make([]int, 0, len(seen))
	for p := range seen {
		prios = append(prios, p)
	}
	sort.Ints(prios)
	index := map[int]int{}
	classes = make([]Class, len(prios))
	for i, p := range prios {
		index[p] = i
		classes[i] = Class{Name: "priority " + strconv.Itoa(p), Priority: p}
	}
	for i := range reqs {
		reqs[i].Class = uint8(index[reqs[i].Priority])
	}
	return classes, ""
}

// parsePriority reads a trace row's optional priority column: an integer
// (vLLM's request field is an int), |priority| ≤ scenarios.MaxPriority.
func parsePriority(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	p, err := strconv.Atoi(strings.TrimPrefix(v, "+"))
	if err != nil || p > scenarios.MaxPriority || p < -scenarios.MaxPriority {
		return 0, fmt.Errorf("priority: must be an integer in [-%d, %d] (lower is served first), got %q", scenarios.MaxPriority, scenarios.MaxPriority, v)
	}
	return p, nil
}
