package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// goodputValue and sizeValue accept exactly what the regexps they replace
// matched.
func TestListArgTestsAreTheRegexps(t *testing.T) {
	goodput, size := regexp.MustCompile(`^(ttft|tpot|e2el):`), regexp.MustCompile(`^[0-9]+$`)
	for _, a := range []string{"", "0", "8", "16", "0016", "1 2", "1\n", "\n1", "+1", "-1", "1.5", "1e3", "١٢", "x", "8x",
		"ttft:", "ttft:500", "tpot:50", "e2el:1000", "itl:5", "TTFT:5", "ttft", " ttft:5", "ttft :5", "ttftx:5", "tpot:", "e2el"} {
		require.Equal(t, goodput.MatchString(a), goodputValue(a), "goodput %q", a)
		require.Equal(t, size.MatchString(a), sizeValue(a), "size %q", a)
	}
}
