package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Calibrate refuses bad flags before simulating anything, naming the flag.
func TestCalibrateFlagErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.json")
	require.NoError(t, os.WriteFile(junk, []byte("{not json"), 0o644))
	out := filepath.Join(dir, "fit.json")
	cells := "../../scenarios/gate"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no train", []string{"calibrate", "--out", out, "--cells", cells}, "--train"},
		{"no out", []string{"calibrate", "--train", "llama-2-7b", "--cells", cells}, "--out"},
		{"max evals", []string{"calibrate", "--train", "llama-2-7b", "--out", out, "--cells", cells, "--max-evals", "0"}, "--max-evals"},
		{"unknown cell", []string{"calibrate", "--train", "no-such-run", "--out", out, "--cells", cells}, "no-such-run"},
		{"start missing", []string{"calibrate", "--train", "llama-2-7b-tp1-codegen", "--out", out, "--cells", cells, "--start", filepath.Join(dir, "none.json")}, "--start"},
		{"start not json", []string{"calibrate", "--train", "llama-2-7b-tp1-codegen", "--out", out, "--cells", cells, "--start", junk}, "--start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var u usageError
			assert.ErrorAs(t, err, &u, "bad input exits 2")
			assert.NoFileExists(t, out, "nothing written on a refused run")
		})
	}
}
