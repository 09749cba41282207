package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeRecipe returns the README's `go run ./cmd/frontier SUB …` line and
// the output block that follows it.
func readmeRecipe(t *testing.T, sub string) ([]string, []string) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```sh\ngo run ./cmd/frontier (" + sub + " [^\n]*)\n```\n\n```\n(.*?)```").FindStringSubmatch(string(data))
	require.NotNil(t, m, "README has no %s recipe", sub)
	return strings.Fields(m[1]), strings.Split(strings.TrimSpace(m[2]), "\n")
}

// matchesShown checks that every shown line is the start of the printed
// line at the same place, up to a "..." where the README cuts it.
func matchesShown(t *testing.T, out string, shown []string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(out), "\n")
	for i, s := range shown {
		require.Less(t, i, len(got), "README shows more lines than printed")
		parts := strings.Split(s, "...")
		rest := got[i]
		for k, p := range parts {
			p = strings.TrimRight(p, " ")
			if k == 0 {
				require.True(t, strings.HasPrefix(rest, p), "README line %d:\n%s\nprinted:\n%s", i, s, got[i])
				rest = rest[len(p):]
				continue
			}
			p = strings.TrimSpace(p)
			j := strings.Index(rest, p)
			require.GreaterOrEqual(t, j, 0, "README line %d:\n%s\nprinted:\n%s", i, s, got[i])
			rest = rest[j+len(p):]
		}
	}
}

// The README's sweep recipe runs as written and prints what it shows.
func TestREADMESweepRecipe(t *testing.T) {
	args, shown := readmeRecipe(t, "sweep")
	t.Chdir(t.TempDir())
	out, stderr, err := run(t, append(args, "--quiet")...)
	require.NoError(t, err, stderr)
	matchesShown(t, out, shown)
	assert.FileExists(t, "sweep.csv")
}
