package workload

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

// A two-class mix on the random dataset: each request carries its
// class's priority and lengths (the interactive class its own, within
// bench serve's range; the batch class the dataset's), the class counts
// follow the shares (binomial, within 5σ), and the send times are those
// of the same workload without classes (the draws use their own stream).
func TestRandomClassMix(t *testing.T) {
	w := randomWorkload(4000, 1000, 200, 0.1, 20, 7)
	plain := allRequests(build(t, w))
	w.Classes = []scenarios.RequestClass{
		{Name: "interactive", Priority: -1, Share: 0.25, InputLen: 100, OutputLen: 20},
		{Name: "batch", Priority: 3, Share: 0.75},
	}
	require.NoError(t, w.Validate())
	p := build(t, w)
	assert.Equal(t, []Class{{"interactive", -1}, {"batch", 3}}, p.Classes)
	reqs := allRequests(p)
	n := 0
	for i, r := range reqs {
		assert.Equal(t, plain[i].At, r.At, "send times unchanged")
		switch r.Class {
		case 0:
			n++
			assert.Equal(t, -1, r.Priority)
			assert.True(t, r.PromptTokens >= 90 && r.PromptTokens <= 110, "interactive prompt %d", r.PromptTokens)
			assert.True(t, r.OutputTokens >= 18 && r.OutputTokens <= 22, "interactive output %d", r.OutputTokens)
		case 1:
			assert.Equal(t, 3, r.Priority)
			assert.Equal(t, plain[i].PromptTokens, r.PromptTokens, "batch keeps the dataset's draw")
			assert.Equal(t, plain[i].OutputTokens, r.OutputTokens)
		default:
			t.Fatalf("class %d", r.Class)
		}
	}
	sigma := math.Sqrt(4000 * 0.25 * 0.75)
	assert.InDelta(t, 1000, n, 5*sigma)
}

// shared_prefix: the class belongs to the prompt, so every request that
// repeats prompt i mod N (stages cycle over the N prompts) has its class.
func TestSharedPrefixClassFollowsPrompt(t *testing.T) {
	w := &scenarios.Workload{Seed: 2, Dataset: "shared_prefix",
		SharedPrefix: &scenarios.SharedPrefix{NumGroups: 2, NumPromptsPerGroup: 5, SystemPromptLen: 32, QuestionLen: 64, OutputLen: 8},
		Arrivals:     scenarios.Arrivals{RequestRate: 1, Burstiness: 1, Stages: []scenarios.Stage{{Rate: 10, DurationS: 3}}},
		Classes:      []scenarios.RequestClass{{Name: "a", Share: 0.5, Priority: 1}, {Name: "b", Share: 0.5, Priority: 2}},
	}
	require.NoError(t, w.Validate())
	reqs := allRequests(build(t, w))
	require.Len(t, reqs, 30)
	byContent := map[uint64]int{}
	for _, r := range reqs {
		if c, ok := byContent[r.ContentKey]; ok {
			assert.Equal(t, c, int(r.Class))
		}
		byContent[r.ContentKey] = int(r.Class)
		assert.Equal(t, int(r.Class)+1, r.Priority)
	}
	assert.Len(t, byContent, 10)
}

// A trace's priority column makes one class per distinct priority,
// lowest first.
func TestTracePriorityClasses(t *testing.T) {
	reqs, err := parseTrace(strings.NewReader("arrival_s,prompt_tokens,output_tokens,priority\n0,10,1,7\n1,10,1,-2\n2,10,1,7\n3,10,1,0\n"), "t.csv")
	require.NoError(t, err)
	classes, note := traceClasses(reqs)
	assert.Empty(t, note)
	assert.Equal(t, []Class{{"priority -2", -2}, {"priority 0", 0}, {"priority 7", 7}}, classes)
	var got [][2]int
	for _, r := range reqs {
		got = append(got, [2]int{r.Priority, int(r.Class)})
	}
	assert.Equal(t, [][2]int{{7, 2}, {-2, 0}, {7, 2}, {0, 1}}, got)

	plain, err := parseTrace(strings.NewReader("arrival_s,prompt_tokens,output_tokens\n0,10,1\n"), "t.csv")
	require.NoError(t, err)
	classes, _ = traceClasses(plain)
	assert.Nil(t, classes, "no priority column: no classes")

	for _, bad := range []string{"x", "1.5", "1e3", "99999999999999999999"} {
		_, err := parseTrace(strings.NewReader("arrival_s,prompt_tokens,output_tokens,priority\n0,10,1,"+bad+"\n"), "t.csv")
		assert.ErrorContains(t, err, "t.csv line 2: priority: must be an integer", bad)
	}
}

// A trace may give every request a priority of its own (a deadline, an
// arrival rank): beyond scenarios.MaxClasses distinct priorities it is
// not split into classes (on main, 100,000 distinct priorities printed a
// per-class table of 100,000 rows and wrote as many to the result JSON),
// and a note says so; the priorities still order the queue.
func TestTraceManyPrioritiesMakeNoClasses(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{scenarios.MaxClasses, scenarios.MaxClasses + 1} {
		var b strings.Builder
		b.WriteString("arrival_s,prompt_tokens,output_tokens,priority\n")
		for i := range 2 * n {
			fmt.Fprintf(&b, "%d,10,1,%d\n", i, -(i % n))
		}
		path := filepath.Join(dir, "t.csv")
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		p := build(t, &scenarios.Workload{Dataset: "trace", Trace: &scenarios.TraceData{Path: path}, Arrivals: scenarios.DefaultArrivals()})
		reqs := allRequests(p)
		assert.Equal(t, -(3 % n), reqs[3].Priority)
		if n == scenarios.MaxClasses {
			assert.Len(t, p.Classes, n)
			assert.Empty(t, p.Notes)
			continue
		}
		assert.Nil(t, p.Classes)
		for _, r := range reqs {
			require.Zero(t, r.Class)
		}
		require.Len(t, p.Notes, 1)
		assert.Equal(t, "trace: 65 distinct priorities, more than 64: no per-class metrics (a class per priority up to 64); the priorities still order the waiting queue", p.Notes[0])
	}
}

func TestClassValidation(t *testing.T) {
	base := func() *scenarios.Workload { return randomWorkload(10, 10, 10, 0, 1, 0) }
	for _, c := range []struct {
		classes []scenarios.RequestClass
		dataset string
		want    string
	}{
		{[]scenarios.RequestClass{{Name: "a", Share: 1.5}}, "", "workload.classes[0].share: must be in (0, 1], got 1.5"},
		{[]scenarios.RequestClass{{Name: "a", Share: 0.5}, {Name: "a", Share: 0.5}}, "", `workload.classes[1].name: "a" names two classes`},
		{[]scenarios.RequestClass{{Name: "a", Share: 1, InputLen: -4}}, "", "workload.classes[0].input_len: must be in [1, 10000000] or omitted"},
		{[]scenarios.RequestClass{{Name: "a", Share: 1, Priority: 1 << 41}}, "", "workload.classes[0].priority: must be an integer in"},
		{[]scenarios.RequestClass{{Name: "a", Share: 1, OutputLen: 5}}, "shared_prefix", "workload.classes[0].output_len: lengths per class are for the random dataset"},
		{[]scenarios.RequestClass{{Name: "a", Share: 1}}, "trace", "workload.classes: not for the trace dataset"},
	} {
		w := base()
		w.Classes = c.classes
		if c.dataset != "" {
			w.Dataset = c.dataset
			w.SharedPrefix = &scenarios.SharedPrefix{NumGroups: 1, NumPromptsPerGroup: 1, QuestionLen: 1, OutputLen: 1}
			w.Trace = &scenarios.TraceData{Path: "t.csv"}
		}
		assert.ErrorContains(t, w.Validate(), c.want)
	}
}
