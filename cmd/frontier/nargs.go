package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// vLLM's list flags take space-separated values (argparse nargs="+"):
// vllm bench serve's --goodput ttft:500 tpot:50 and vllm serve's
// --cuda-graph-sizes 1 2 4 8 (vllm/benchmarks/serve.py,
// vllm/engine/arg_utils.py). pflag ends a flag's value at the first space,
// so the later values arrive as arguments; listArgs gives each back to
// the flag it belongs to, so a vLLM command line works as typed. The
// comma-separated and repeated forms work as before.
//
// goodputValue and sizeValue are the tests the regexps ^(ttft|tpot|e2el):
// and ^[0-9]+$ made, written out: compiling those at package init cost
// every process (--help included) ~40 k instructions.
func goodputValue(a string) bool {
	return strings.HasPrefix(a, "ttft:") || strings.HasPrefix(a, "tpot:") || strings.HasPrefix(a, "e2el:")
}

func sizeValue(a string) bool {
	if a == "" {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] < '0' || a[i] > '9' {
			return false
		}
	}
	return true
}

// listArgs appends to --goodput each argument of the form KEY:VALUE (KEY
// ttft, tpot or e2el) and to --cuda-graph-sizes each whole number, when
// that flag was given; any other argument is refused as cobra.NoArgs
// refuses it (bad input, exit 2).
func listArgs(cmd *cobra.Command, args []string) error {
	var rest []string
	for _, a := range args {
		flag := ""
		switch {
		case goodputValue(a):
			flag = "goodput"
		case sizeValue(a):
			flag = "cuda-graph-sizes"
		}
		if flag != "" && cmd.Flags().Lookup(flag) != nil && cmd.Flags().Changed(flag) {
			// pflag's slice values append once set.
			if err := cmd.Flags().Set(flag, a); err != nil {
				return bad(err)
			}
			continue
		}
		rest = append(rest, a)
	}
	return bad(cobra.NoArgs(cmd, rest))
}
