package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// typoDistance is how many single-letter edits (Levenshtein) may separate
// a header column from known column k for it to count as a misspelling
// of k: 2 ("priorty", "prefix_token", "sesion_id", "think"), 1 for a
// name under 6 letters ("turns"). Every column of --requests-csv (a file
// users send back as a trace) is at least 3 edits from every trace column.
func typoDistance(k string) int {
	if len(k) < 6 {
		return 1
	}
	return 2
}

// checkColumns refuses a header column (noun "column"; a JSONL key:
// "field") that is a misspelling of a known column the header does not
// have (the same letters in another case, or at most typoDistance edits
// away): ignored, it would leave that
// column's meaning silently at its default (every request priority 0,
// say). Any other column is ignored, so that files carrying more
// (request ids, measured latencies) read as they are.
func checkColumns(kind, noun string, header []string, known []string) error {
	have := map[string]bool{}
	for _, h := range header {
		have[h] = true
	}
	for _, h := range header {
		if slices.Contains(known, h) {
			continue
		}
		for _, k := range known {
			if have[k] {
				continue
			}
			if strings.EqualFold(h, k) || levenshtein.ComputeDistance(strings.ToLower(h), k) <= typoDistance(k) {
				return fmt.Errorf("%s %q is not a %s %s; did you mean %q? (%s %ss: %s; others are ignored)", noun, h, kind, noun, k, kind, noun, strings.Join(known, ", "))
			}
		}
	}
	return nil
}
