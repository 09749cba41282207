package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestReadLengthsJSONLAndCSV(t *testing.T) {
	want := []LengthSample{{100, 20, "", 0}, {300, 5, "sys", 64}, {50, 7, "7", 16}}
	j := writeFile(t, "l.jsonl", `{"prompt_len": 100, "output_len": 20, "note": "other fields are ignored"}

{"prompt_len": 300, "output_len": 5, "prefix_group": "sys", "prefix_len": 64}
{"prompt_len": 50, "output_len": 7, "prefix_group": 7, "prefix_len": 16}
`)
	got, err := ReadLengths(j)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	c := writeFile(t, "l.csv", "prompt_len,output_len,prefix_group,prefix_len\n100,20,,\n300,5,sys,64\n50,7,7,16\n")
	got, err = ReadLengths(c)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	sniffed := writeFile(t, "lengths.txt", `{"prompt_len": 100, "output_len": 20}`+"\n")
	got, err = ReadLengths(sniffed)
	require.NoError(t, err)
	assert.Equal(t, want[:1], got, "a file starting with { is JSONL")
}

func TestReadLengthsErrors(t *testing.T) {
	cases := []struct{ name, file, text, want string }{
		{"missing field", "a.jsonl", `{"prompt_len": 10}`, `line 1: output_len: must be an integer in [1, 10000000], got nothing (missing)`},
		{"float", "a.jsonl", "{\"prompt_len\": 10, \"output_len\": 5}\n{\"prompt_len\": 10.5, \"output_len\": 5}", `line 2: prompt_len: must be an integer in [1, 10000000], got "10.5"`},
		{"quoted number", "a.jsonl", `{"prompt_len": "10", "output_len": 5}`, `line 1: prompt_len: must be an integer in [1, 10000000], got "\"10\""`},
		{"zero", "a.jsonl", `{"prompt_len": 0, "output_len": 5}`, `line 1: prompt_len: must be an integer in [1, 10000000], got "0"`},
		{"not an object", "a.jsonl", `[1, 2]`, `line 1: not a JSON object`},
		{"group without length", "a.jsonl", `{"prompt_len": 10, "output_len": 5, "prefix_group": "g"}`, `line 1: prefix_len: must be an integer in [0, prompt_len=10] when prefix_group is set, got nothing (missing)`},
		{"length without group", "a.jsonl", `{"prompt_len": 10, "output_len": 5, "prefix_len": 4}`, `line 1: prefix_len: only with prefix_group`},
		{"prefix too long", "a.csv", "prompt_len,output_len,prefix_group,prefix_len\n10,5,g,11\n", `line 2: prefix_len: must be an integer in [0, prompt_len=10] when prefix_group is set, got "11"`},
		{"csv missing column", "a.csv", "prompt_len\n10\n", `missing column "output_len"`},
		{"csv non-integer", "a.csv", "prompt_len,output_len\n10,5\n\n10,five\n", `line 4: output_len: must be an integer in [1, 10000000], got "five"`},
		{"csv empty cell", "a.csv", "prompt_len,output_len\n,5\n", `line 2: prompt_len: must be an integer in [1, 10000000], got nothing (missing)`},
		{"empty", "a.csv", "", `empty file`},
		{"header only", "a.csv", "prompt_len,output_len\n", `no samples`},
		// on main the second prompt_len column won silently (as a trace refuses it)
		{"csv column twice", "a.csv", "prompt_len,output_len,prompt_len\n10,5,7\n", `column "prompt_len" appears twice in the header`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, c.file, c.text)
			_, err := ReadLengths(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "lengths "+p)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := ReadLengths(filepath.Join(t.TempDir(), "none.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.True(t, strings.HasPrefix(err.Error(), "workload.lengths.path: "))
}

func lengthsPlan(t *testing.T, l scenarios.LengthsData, seed int64) []Request {
	t.Helper()
	w := &scenarios.Workload{Seed: seed, Dataset: "lengths", Lengths: &l, Arrivals: scenarios.DefaultArrivals()}
	plan, err := Build(w, nil)
	require.NoError(t, err)
	return plan.Stages[0].Requests
}

// Drawn as bench serve draws from a file: shuffled by the seed, the first
// num_prompts; with fewer samples than num_prompts, repeats picked at
// random, each a repeat of the same prompt (same content, so it can hit
// the prefix cache in full).
func TestLengthsSampling(t *testing.T) {
	var b strings.Builder
	b.WriteString("prompt_len,output_len\n")
	for i := 1; i <= 5; i++ {
		b.WriteString(strings.Repeat("1", i) + "0,1\n") // 10, 110, 1110, …
	}
	p := writeFile(t, "five.csv", b.String())
	prompts := func(reqs []Request) []int {
		var out []int
		for _, r := range reqs {
			out = append(out, int(r.PromptTokens))
		}
		return out
	}
	inOrder := lengthsPlan(t, scenarios.LengthsData{Path: p, NumPrompts: 3, DisableShuffle: true}, 0)
	assert.Equal(t, []int{10, 110, 1110}, prompts(inOrder), "--disable-shuffle keeps file order")
	a := lengthsPlan(t, scenarios.LengthsData{Path: p, NumPrompts: 5}, 1)
	assert.ElementsMatch(t, []int{10, 110, 1110, 11110, 111110}, prompts(a), "a permutation of the file")
	assert.Equal(t, prompts(a), prompts(lengthsPlan(t, scenarios.LengthsData{Path: p, NumPrompts: 5}, 1)), "same seed, same draw")

	over := lengthsPlan(t, scenarios.LengthsData{Path: p, NumPrompts: 12}, 3)
	require.Len(t, over, 12)
	assert.ElementsMatch(t, []int{10, 110, 1110, 11110, 111110}, prompts(over[:5]), "every sample once first")
	content := map[uint64]int{}
	for _, r := range over {
		content[r.ContentKey]++
	}
	assert.Len(t, content, 5, "a repeat is the same prompt")
	for _, r := range over {
		assert.Equal(t, content[r.ContentKey] == 1, r.UniquePrompt, "a prompt sent twice is indexed for reuse")
	}
	assert.Len(t, lengthsPlan(t, scenarios.LengthsData{Path: p, NumPrompts: 12, NoOversample: true}, 3), 5, "--no-oversample sends what the file has")
}

// --random-prefix-len: every prompt starts with the same prefix_len
// tokens, then its own input_len tokens; the lengths drawn are unchanged.
func TestRandomPrefixLen(t *testing.T) {
	build := func(prefix int) []Request {
		w := &scenarios.Workload{Seed: 4, Dataset: "random", Arrivals: scenarios.DefaultArrivals(),
			Random: &scenarios.RandomData{NumPrompts: 20, InputLen: 100, OutputLen: 10, RangeRatio: 0.5, PrefixLen: prefix}}
		plan, err := Build(w, nil)
		require.NoError(t, err)
		return plan.Stages[0].Requests
	}
	plain, prefixed := build(0), build(64)
	for i := range plain {
		assert.Equal(t, plain[i].PromptTokens+64, prefixed[i].PromptTokens)
		assert.Equal(t, plain[i].OutputTokens, prefixed[i].OutputTokens)
		assert.Equal(t, 64, int(prefixed[i].PrefixTokens))
		assert.Equal(t, prefixed[0].PrefixKey, prefixed[i].PrefixKey, "one prefix for all")
		assert.NotZero(t, prefixed[i].PrefixKey)
		assert.Zero(t, plain[i].PrefixTokens)
	}
}

// As a trace (TestParseTraceRefusesMisspeltColumns): a misspelt field
// would leave every sample without it.
func TestReadLengthsRefusesMisspeltFields(t *testing.T) {
	for _, c := range []struct{ file, text, want string }{
		{"a.csv", "prompt_len,output_len,prefix_group,prefix_lens\n10,5,g,4\n", `: column "prefix_lens" is not a lengths column; did you mean "prefix_len"? (lengths columns: prompt_len, output_len, prefix_group, prefix_len; others are ignored)`},
		{"a.jsonl", "{\"prompt_len\": 10, \"output_len\": 5}\n{\"prompt_len\": 10, \"output_lens\": 5, \"output_len\": 5, \"Prefix_Group\": 1}\n", ` line 2: field "Prefix_Group" is not a lengths field; did you mean "prefix_group"?`},
	} {
		p := writeFile(t, c.file, c.text)
		_, err := ReadLengths(p)
		require.Error(t, err)
		assert.Equal(t, "lengths "+p+c.want, err.Error()[:min(len(err.Error()), len("lengths "+p+c.want))])
	}
	// dataset fields far from these are ignored
	p := writeFile(t, "b.jsonl", `{"id": "x", "conversations": [], "prompt_len": 10, "output_len": 5}`)
	s, err := ReadLengths(p)
	require.NoError(t, err)
	assert.Equal(t, 10, s[0].PromptLen)
}
