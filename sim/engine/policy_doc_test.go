package engine

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/POLICIES.md walks through the worked example by showing its files
// verbatim: each block after a `<!-- file: PATH -->` marker must equal
// PATH, so the walkthrough cannot drift from the code.
func TestPoliciesDocShowsTheFiles(t *testing.T) {
	doc, err := os.ReadFile("../../docs/POLICIES.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)<!-- file: (\\S+) -->\n```go\n(.*?)```\n").FindAllSubmatch(doc, -1)
	require.NotEmpty(t, blocks)
	for _, b := range blocks {
		src, err := os.ReadFile("../../" + string(b[1]))
		require.NoError(t, err, "docs/POLICIES.md shows %s", b[1])
		assert.Equal(t, string(src), string(b[2]), "docs/POLICIES.md's copy of %s is stale", b[1])
	}
}
