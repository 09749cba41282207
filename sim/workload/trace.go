package workload

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// decimal is a plain decimal number (no hex, no digit separators).
var decimal = regexp.MustCompile(`^[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Bounds of trace values (the same as the scenario's: scenarios.MaxSeconds,
// scenarios.MaxTokens), keeping the nanosecond clock far from overflow.
const (
	maxArrivalS    = 100_000_000.0
	maxTraceTokens = 10_000_000
)

// ReadTrace reads a request trace CSV with a header row and columns
// arrival_s (seconds from the start), prompt_tokens, output_tokens, and
// optionally prefix_group (any label; equal labels share a prefix) and
// prefix_tokens (how many leading prompt tokens the group shares).
// Requests are sorted by arrival (stable).
func ReadTrace(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workload.trace.path: %w", err)
	}
	defer f.Close()
	return parseTrace(f, path)
}

func parseTrace(r io.Reader, name string) ([]Request, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trace %s: empty file (want a header row: arrival_s, prompt_tokens, output_tokens[, prefix_group, prefix_tokens])", name)
	}
	if err != nil {
		return nil, fmt.Errorf("trace %s: reading header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) // a UTF-8 BOM before the first column
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("trace %s: column %q appears twice in the header", name, h)
		}
		col[h] = i
	}
	for _, need := range []string{"arrival_s", "prompt_tokens", "output_tokens"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("trace %s: missing column %q (columns: arrival_s, prompt_tokens, output_tokens[, prefix_group, prefix_tokens])", name, need)
		}
	}
	groups := map[string]uint64{}
	var reqs []Request
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0) // the file's line: csv skips blank lines
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		at, err := strconv.ParseFloat(get("arrival_s"), 64)
		if err != nil || !decimal.MatchString(get("arrival_s")) || !(at >= 0 && at <= maxArrivalS) {
			return nil, fmt.Errorf("trace %s line %d: arrival_s: must be a decimal number of seconds in [0, %g], got %q", name, line, maxArrivalS, get("arrival_s"))
		}
		p, err := strconv.Atoi(get("prompt_tokens"))
		if err != nil || p < 1 || p > maxTraceTokens {
			return nil, fmt.Errorf("trace %s line %d: prompt_tokens: must be an integer in [1, %d], got %q", name, line, maxTraceTokens, get("prompt_tokens"))
		}
		o, err := strconv.Atoi(get("output_tokens"))
		if err != nil || o < 1 || o > maxTraceTokens {
			return nil, fmt.Errorf("trace %s line %d: output_tokens: must be an integer in [1, %d], got %q", name, line, maxTraceTokens, get("output_tokens"))
		}
		id := len(reqs)
		req := Request{ID: id, At: int64(math.Round(at * 1e9)), PromptTokens: p, OutputTokens: o, ContentKey: uniqueKey(id), UniquePrompt: true}
		if g := get("prefix_group"); g != "" {
			pt, err := strconv.Atoi(get("prefix_tokens"))
			if err != nil || pt < 0 || pt > p {
				return nil, fmt.Errorf("trace %s line %d: prefix_tokens: must be an integer in [0, prompt_tokens=%d] when prefix_group is set, got %q", name, line, p, get("prefix_tokens"))
			}
			key, ok := groups[g]
			if !ok {
				key = 0x7f4a_7c15_9e37_79b9 ^ uint64(len(groups)+1)*0xbf58_476d_1ce4_e5b9
				groups[g] = key
			}
			req.PrefixKey, req.PrefixTokens = key, pt
		}
		reqs = append(reqs, req)
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("trace %s: no requests", name)
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].At < reqs[j].At })
	for i := range reqs {
		reqs[i].ID = i
	}
	return reqs, nil
}
