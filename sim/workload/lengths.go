package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"frontier/scenarios"
)

// LengthSample is one row of a lengths file: a prompt and output length,
// tokens, and optionally a prefix group sharing the first PrefixLen
// prompt tokens.
type LengthSample struct {
	PromptLen, OutputLen int
	PrefixGroup          string
	PrefixLen            int
}

// lengthColumnNames are the fields a sample may have; any other is ignored
// unless it looks like a misspelling of one of them (checkColumns).
var lengthColumnNames = []string{"prompt_len", "output_len", "prefix_group", "prefix_len"}

// lengthColumns lists a lengths file's fields, for messages.
const lengthColumns = "prompt_len, output_len[, prefix_group, prefix_len]"

// ReadLengths reads a lengths file: JSONL (one object per line with
// integer prompt_len and output_len, optional prefix_group, a string or
// number, and prefix_len; other fields are ignored, as a dataset file may
// carry them) when the name ends in .jsonl or .json or the file starts
// with '{', else CSV with a header row naming those columns. Errors name
// the file and line.
func ReadLengths(path string) ([]LengthSample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workload.lengths.path: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	ext := strings.ToLower(filepath.Ext(path))
	var rows []LengthSample
	if ext == ".jsonl" || ext == ".json" || (ext != ".csv" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))) {
		rows, err = parseLengthsJSONL(data, path)
	} else {
		rows, err = parseLengthsCSV(data, path)
	}
	if err == nil && len(rows) == 0 {
		err = fmt.Errorf("lengths %s: no samples (want %s)", path, lengthColumns)
	}
	return rows, err
}

func parseLengthsJSONL(data []byte, name string) ([]LengthSample, error) {
	var rows []LengthSample
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil {
			return nil, fmt.Errorf("lengths %s line %d: not a JSON object (want %s): %v", name, line, lengthColumns, err)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the first misspelling named is the same every run
		if err := checkColumns("lengths", "field", keys, lengthColumnNames); err != nil {
			return nil, fmt.Errorf("lengths %s line %d: %w", name, line, err)
		}
		row, err := lengthRow(func(k string) (string, bool) { // raw JSON: a quoted "12" is not an integer
			v, ok := obj[k]
			return string(v), ok && string(v) != "null"
		})
		if err != nil {
			return nil, fmt.Errorf("lengths %s line %d: %w", name, line, err)
		}
		var label string
		if json.Unmarshal([]byte(row.PrefixGroup), &label) == nil {
			row.PrefixGroup = label // a string label; a number keeps its text
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lengths %s: %w", name, err)
	}
	return rows, nil
}

func parseLengthsCSV(data []byte, name string) ([]LengthSample, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("lengths %s: empty file (want a header row: %s, or JSONL objects)", name, lengthColumns)
	}
	if err != nil {
		return nil, fmt.Errorf("lengths %s: reading header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("lengths %s: column %q appears twice in the header", name, h)
		}
		col[h] = i
		header[i] = h
	}
	if err := checkColumns("lengths", "column", header, lengthColumnNames); err != nil {
		return nil, fmt.Errorf("lengths %s: %w", name, err)
	}
	for _, need := range []string{"prompt_len", "output_len"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("lengths %s: missing column %q (columns: %s)", name, need, lengthColumns)
		}
	}
	var rows []LengthSample
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("lengths %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		row, err := lengthRow(func(c string) (string, bool) {
			if i, ok := col[c]; ok && i < len(rec) && strings.TrimSpace(rec[i]) != "" {
				return strings.TrimSpace(rec[i]), true
			}
			return "", false
		})
		if err != nil {
			return nil, fmt.Errorf("lengths %s line %d: %w", name, line, err)
		}
		rows = append(rows, row)
	}
}

// lengthRow reads one sample's fields (get returns a field's text and
// whether it is present).
func lengthRow(get func(string) (string, bool)) (LengthSample, error) {
	var row LengthSample
	for _, f := range []struct {
		key string
		dst *int
	}{{"prompt_len", &row.PromptLen}, {"output_len", &row.OutputLen}} {
		v, ok := get(f.key)
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 || n > maxTraceTokens {
			return row, fmt.Errorf("%s: must be an integer in [1, %d], got %s", f.key, maxTraceTokens, quoteOrMissing(v, ok))
		}
		*f.dst = n
	}
	if g, ok := get("prefix_group"); ok {
		v, ok := get("prefix_len")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > row.PromptLen {
			return row, fmt.Errorf("prefix_len: must be an integer in [0, prompt_len=%d] when prefix_group is set, got %s", row.PromptLen, quoteOrMissing(v, ok))
		}
		row.PrefixGroup, row.PrefixLen = g, n
	} else if v, ok := get("prefix_len"); ok {
		return row, fmt.Errorf("prefix_len: only with prefix_group (the group sharing those tokens), got %q", v)
	}
	return row, nil
}

func quoteOrMissing(v string, ok bool) string {
	if !ok {
		return "nothing (missing)"
	}
	return strconv.Quote(v)
}

// lengthsDataset draws l.NumPrompts requests from the file's samples as
// bench serve draws from a dataset file (BenchmarkDataset in
// vllm/benchmarks/datasets.py): the samples shuffled with the seed
// (unless disable_shuffle), the first num_prompts taken, then, if the
// file has fewer, random picks among them until num_prompts (unless
// no_oversample). Go's generator, so not Python's exact order. A picked
// duplicate sends the same prompt again, so it can hit the prefix cache
// in full, as the repeated prompt text does in vLLM.
func lengthsDataset(l *scenarios.LengthsData, path string, rng *rand.Rand) ([]Request, error) {
	samples, err := ReadLengths(path)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(samples))
	for i := range order {
		order[i] = i
	}
	if !l.DisableShuffle {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	if len(order) > l.NumPrompts {
		order = order[:l.NumPrompts]
	}
	for n := len(order); !l.NoOversample && len(order) < l.NumPrompts; {
		order = append(order, order[rng.IntN(n)])
	}
	uses := make([]int, len(samples))
	for _, i := range order {
		uses[i]++
	}
	groups := map[string]uint64{}
	reqs := make([]Request, len(order))
	for k, i := range order {
		s := samples[i]
		reqs[k] = Request{ID: int32(k), PromptTokens: int32(s.PromptLen), OutputTokens: int32(s.OutputLen), ContentKey: uniqueKey(i), UniquePrompt: uses[i] == 1}
		if s.PrefixGroup != "" {
			key, ok := groups[s.PrefixGroup]
			if !ok {
				key = streamKey(keySystem, 1<<40+uint64(len(groups)), 0)
				groups[s.PrefixGroup] = key
			}
			reqs[k].PrefixKey, reqs[k].PrefixTokens = key, int32(s.PrefixLen)
		}
	}
	return reqs, nil
}
