package main

import (
	"regexp"
	"strings"
	"testing"

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
