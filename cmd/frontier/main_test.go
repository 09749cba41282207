package main

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A root built with only the command a command line names (main's) gives
// that command line what the root with every command gives: the help of
// every command and subcommand, and the errors of a bad flag, a stray
// argument and a bad value; a line naming no command builds them all.
func TestRootOfOneCommandIsTheFullRoot(t *testing.T) {
	exec := func(root *cobra.Command, args []string) (string, string, string) {
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(args)
		err := root.Execute()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		return out.String(), errOut.String(), msg
	}
	var lines [][]string
	for _, c := range newRoot().Commands() {
		lines = append(lines, []string{c.Name(), "--help"}, []string{c.Name(), "--no-such-flag"}, []string{c.Name(), "stray", "words"})
		for _, sub := range c.Commands() {
			lines = append(lines, []string{c.Name(), sub.Name(), "--help"})
		}
	}
	lines = append(lines, []string{"simulate", "--num-prompts", "x"}, []string{"simulate", "--cuda-graph-sizes", "1", "2", "x"})
	for _, args := range lines {
		require.NotEmpty(t, invoked(args), "%v names a command", args)
		wantOut, wantErr, wantMsg := exec(newRoot(), args)
		gotOut, gotErr, gotMsg := exec(newRootOf(invoked(args)), args)
		if args[len(args)-1] == "--help" {
			assert.Contains(t, wantOut, "Usage:", "%v", args)
		} else {
			assert.NotEmpty(t, wantMsg, "%v", args)
		}
		assert.Equal(t, wantOut, gotOut, "%v: stdout", args)
		assert.Equal(t, wantErr, gotErr, "%v: stderr", args)
		assert.Equal(t, wantMsg, gotMsg, "%v: error", args)
	}
	for _, args := range [][]string{nil, {"--help"}, {"help", "simulate"}, {"simulat"}, {"completion", "bash"}, {"__complete", "sim"}} {
		assert.Empty(t, invoked(args), "%v: every command", args)
	}
	assert.Len(t, newRootOf("").Commands(), len(subcommands))
	assert.Len(t, newRootOf("gate").Commands(), 1)
}
