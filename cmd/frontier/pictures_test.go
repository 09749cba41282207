package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// picturesDir holds the README's "Looking at a run" pictures.
const picturesDir = "../../docs/pictures"

// pictureArgs is the run the README pictures show: the Llama-3.1-8B
// default on one H200 at 26 req/s, 2,000 requests of 1024 in / 256 out.
var pictureArgs = []string{"simulate", "--quiet", "--request-rate", "26", "--num-prompts", "2000",
	"--random-input-len", "1024", "--random-output-len", "256"}

// TestREADMEPicturesAreCurrent regenerates the README's pictures and
// compares them with the committed ones. PNG bytes depend on the
// rasterizer's float arithmetic, which may differ across CPU
// architectures, so the check compares what the PNGs are drawn from: the
// timeline CSV and the SVGs (same figures, vector text). With
// UPDATE_PICTURES=1 (scripts/update-pictures.sh) it writes them instead.
func TestREADMEPicturesAreCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the README pictures")
	}
	update := os.Getenv("UPDATE_PICTURES") == "1"
	dir := t.TempDir()
	if update {
		dir = picturesDir
	}
	args := append(append([]string{}, pictureArgs...), "--timeline", filepath.Join(dir, "timeline.csv"), "--plot", dir, "--plot-format", "png,svg")
	_, errOut, err := run(t, args...)
	require.NoError(t, err, errOut)
	if update {
		return
	}
	for _, name := range []string{"timeline.csv", "timeline.svg", "latency-cdf.svg", "ttft-vs-arrival.svg"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join(picturesDir, name))
		require.NoError(t, err, "run scripts/update-pictures.sh")
		require.True(t, string(got) == string(want), "docs/pictures/%s is stale: run scripts/update-pictures.sh", name)
	}
}
