package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeRecipe returns the README's `go run ./cmd/frontier SUB…` line
// (shell quotes removed) and the lines of the output blocks that follow
// it, up to the next command.
func readmeRecipe(t *testing.T, sub string) ([]string, []string) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```sh\ngo run ./cmd/frontier (" + regexp.QuoteMeta(sub) + "[^\n]*)\n```\n(.*?)(?:```sh|\n## )").FindStringSubmatch(string(data))
	require.NotNil(t, m, "README has no %s recipe", sub)
	var shown []string
	for _, block := range regexp.MustCompile("(?s)```\n(.*?)```").FindAllStringSubmatch(m[2], -1) {
		shown = append(shown, strings.Split(strings.TrimSpace(block[1]), "\n")...)
	}
	var args []string
	for _, w := range strings.Fields(m[1]) {
		args = append(args, strings.Trim(w, "'"))
	}
	return args, shown
}

// matchesShown checks that the shown lines appear in the printed output
// in order, each up to a " ..." where the README cuts it ("..." alone
// skips lines).
func matchesShown(t *testing.T, out string, shown []string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(out), "\n")
	at := 0
	for _, s := range shown {
		if s == "..." {
			continue
		}
		head, tail, cut := strings.Cut(s, " ...")
		head = strings.TrimRight(head, " ")
		found := false
		for ; at < len(got); at++ {
			g := got[at]
			if !strings.HasPrefix(g, head) {
				continue
			}
			if cut && strings.TrimSpace(tail) != "" && !strings.Contains(g[len(head):], strings.TrimSpace(strings.Split(tail, "...")[0])) {
				continue
			}
			found = true
			at++
			break
		}
		require.True(t, found, "README line not printed (in order):\n%s\nprinted:\n%s", s, out)
	}
}

// The README's recipes run as written and print what they show.
func TestREADMESweepRecipe(t *testing.T) {
	args, shown := readmeRecipe(t, "sweep")
	t.Chdir(t.TempDir())
	out, stderr, err := run(t, append(args, "--quiet")...)
	require.NoError(t, err, stderr)
	matchesShown(t, out, shown)
	assert.FileExists(t, "sweep.csv")
}

func TestREADMECapacityRecipe(t *testing.T) {
	args, shown := readmeRecipe(t, "capacity --slo")
	out, stderr, err := run(t, args...)
	require.NoError(t, err, stderr)
	matchesShown(t, out, shown)
}

// The 8-GPU 70B search (about 20 s on 2 cores; skipped with -short).
func TestREADMEBestTopologyRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("searches 15 deployments")
	}
	args, shown := readmeRecipe(t, "capacity --model")
	t.Chdir(t.TempDir())
	out, stderr, err := run(t, append(args, "--quiet")...)
	require.NoError(t, err, stderr)
	matchesShown(t, out, shown)
	assert.FileExists(t, "front.png")
}
