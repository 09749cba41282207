package main

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// `frontier models` lists every embedded config (profiles tests check
// they are the configs of ../shared/data/models) with the presets that
// price it, and every listed (model, hardware, TP) runs the default
// workload's shape, cut short.
func TestModelsListedPairsRun(t *testing.T) {
	out, _, err := run(t, "models")
	require.NoError(t, err)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := regexp.MustCompile(`^(\S+/\S+)\s`).FindStringSubmatch(l); f != nil {
			lines[f[1]] = l
		}
	}
	for _, id := range profiles.EmbeddedModels() {
		require.Contains(t, lines, id)
	}
	assert.Contains(t, lines["zai-org/GLM-5.2-FP8"], "not simulated: model zai-org/GLM-5.2-FP8: architecture GlmMoeDsaForCausalLM (DeepSeek sparse attention")
	assert.Contains(t, lines["RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"], "h100-sxm TP2")
	pair := regexp.MustCompile(`([a-z0-9-]+) TP(\d+)`)
	runs := 0
	for id, l := range lines {
		if strings.Contains(l, "not simulated") {
			continue
		}
		fits := pair.FindAllStringSubmatch(l[strings.Index(l, "  ")+2:], -1)
		require.NotEmpty(t, fits, "%s lists no preset:\n%s", id, l)
		for _, f := range fits {
			_, stderr, err := run(t, "simulate", "--quiet", "--model", id, "--hardware", f[1], "--tensor-parallel-size", f[2],
				"--max-model-len", "4096", "--num-prompts", "4", "--random-input-len", "64", "--random-output-len", "4")
			assert.NoError(t, err, "%s on %s TP%s: %s", id, f[1], f[2], stderr)
			runs++
		}
	}
	assert.Greater(t, runs, 30)
}

// Every column of `frontier models` starts at the same character on every
// line, however long a model's kind is (on main the Llama-4-Scout FP8
// kind, 49 characters, overflowed its 30-wide column and shifted that
// row's "priced on" list).
func TestModelsColumnsAlign(t *testing.T) {
	out, _, err := run(t, "models")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := []rune(lines[0])
	col := func(l []rune, word string) int { return strings.Index(string(l), word) }
	at := utf8.RuneCountInString(string(header[:col(header, "priced on")]))
	kindAt := utf8.RuneCountInString(string(header[:col(header, "kind")]))
	rows := 0
	for _, l := range lines[1:] {
		if strings.Contains(l, "not simulated") {
			continue
		}
		r := []rune(l)
		require.Greater(t, len(r), at, l)
		assert.Regexp(t, `^[a-z0-9-]+ TP\d`, string(r[at:]), "the presets start under their header:\n%s", l)
		assert.NotEqual(t, ' ', r[kindAt], "the kind starts under its header:\n%s", l)
		assert.Equal(t, ' ', r[kindAt-1], l)
		rows++
	}
	assert.Equal(t, len(profiles.EmbeddedModels())-1, rows, "every model but GLM-5.2 is simulated")
}
