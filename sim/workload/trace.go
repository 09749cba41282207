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
	"sync"

	"frontier/sim/engine"
)

// decimal is a plain decimal number (no hex, no digit separators).
var decimal = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`) })

// Bounds of trace values (the same as the scenario's: scenarios.MaxSeconds,
// scenarios.MaxTokens), keeping the nanosecond clock far from overflow.
const (
	maxArrivalS    = 100_000_000.0
	maxTraceTokens = 10_000_000
)

// traceColumns lists the columns a trace may have, for messages.
const traceColumns = "arrival_s, prompt_tokens, output_tokens[, prefix_group, prefix_tokens][, session_id, turn, think_s][, priority]"

// traceColumnNames are the columns a trace may have; any other is ignored
// unless it looks like a misspelling of one of them (checkColumns).
var traceColumnNames = []string{"arrival_s", "prompt_tokens", "output_tokens", "prefix_group", "prefix_tokens", "session_id", "turn", "think_s", "priority"}

// ReadTrace reads a request trace CSV with a header row and columns
// arrival_s (seconds from the start), prompt_tokens, output_tokens, and
// optionally prefix_group (any label; equal labels share a prefix),
// prefix_tokens (how many leading prompt tokens the group shares) and
// priority (an integer; lower is served first under --scheduling-policy
// priority).
//
// Session rows also have session_id (any label but empty or 0), turn
// (1, 2, … within the session, each once) and, after the first turn,
// think_s: turn k is sent closed-loop, think_s seconds after turn k−1's
// last token arrived, and arrival_s is not used for it (turn 1 is sent at
// its arrival_s). Turn k's prompt repeats turn k−1's prompt and output
// (the conversation so far) when it is at least that long, so their full
// blocks can be prefix-cache hits; a shorter prompt (a cut conversation)
// shares only the session's prefix group. Rows without session_id keep
// the open-loop meaning.
//
// Requests are sorted by arrival (stable); a session's turns follow its
// first turn. Errors name the file and line.
func ReadTrace(path string) ([]Request, error) {
	reqs, _, err := ReadTraceSessions(path)
	return reqs, err
}

// ReadTraceSessions is ReadTrace, also returning each session's label as
// the trace wrote it: labels[n-1] is session n's (Request.Session).
func ReadTraceSessions(path string) ([]Request, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("workload.trace.path: %w", err)
	}
	defer f.Close()
	return parseTraceSessions(f, path)
}

// traceRow is one parsed row before sessions are assembled.
type traceRow struct {
	req     Request
	line    int
	session string
	group   string
	think   string // think_s as written ("" when absent)
}

func parseTrace(r io.Reader, name string) ([]Request, error) {
	reqs, _, err := parseTraceSessions(r, name)
	return reqs, err
}

func parseTraceSessions(r io.Reader, name string) ([]Request, []string, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("trace %s: empty file (want a header row: %s)", name, traceColumns)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("trace %s: reading header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) // a UTF-8 BOM before the first column
		if _, dup := col[h]; dup {
			return nil, nil, fmt.Errorf("trace %s: column %q appears twice in the header", name, h)
		}
		col[h] = i
		header[i] = h
	}
	if err := checkColumns("trace", "column", header, traceColumnNames); err != nil {
		return nil, nil, fmt.Errorf("trace %s: %w", name, err)
	}
	for _, need := range []string{"arrival_s", "prompt_tokens", "output_tokens"} {
		if _, ok := col[need]; !ok {
			return nil, nil, fmt.Errorf("trace %s: missing column %q (columns: %s)", name, need, traceColumns)
		}
	}
	groups := map[string]uint64{}
	var rows []traceRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("trace %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0) // the file's line: csv skips blank lines
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row, err := parseTraceRow(get, len(rows), groups)
		if err != nil {
			return nil, nil, fmt.Errorf("trace %s line %d: %w", name, line, err)
		}
		row.line = line
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("trace %s: no requests", name)
	}
	return assembleTrace(rows, name)
}

// parseTraceRow reads one row; id is its index in the file.
func parseTraceRow(get func(string) string, id int, groups map[string]uint64) (traceRow, error) {
	row := traceRow{session: get("session_id"), think: get("think_s")}
	if row.session == "0" {
		row.session = "" // 0 = not part of a session (as --requests-csv writes it)
	}
	turn := 0
	if row.session != "" {
		t, err := strconv.Atoi(get("turn"))
		if err != nil || t < 1 || t > maxTraceTokens {
			return row, fmt.Errorf("turn: must be an integer ≥ 1 on a session row (session_id %q), got %q", row.session, get("turn"))
		}
		turn = t
	} else if v := get("turn"); v != "" && v != "0" {
		return row, fmt.Errorf("turn: only on session rows; give session_id too (got turn %q)", v)
	} else if row.think != "" {
		return row, fmt.Errorf("think_s: only on session rows; give session_id and turn too (got %q)", row.think)
	}
	at := 0.0
	if s := get("arrival_s"); turn <= 1 || s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !decimal().MatchString(s) || !(v >= 0 && v <= maxArrivalS) {
			return row, fmt.Errorf("arrival_s: must be a decimal number of seconds in [0, %g], got %q", maxArrivalS, s)
		}
		if turn <= 1 {
			at = v // a later turn's arrival_s is checked, not used
		}
	}
	p, err := strconv.Atoi(get("prompt_tokens"))
	if err != nil || p < 1 || p > maxTraceTokens {
		return row, fmt.Errorf("prompt_tokens: must be an integer in [1, %d], got %q", maxTraceTokens, get("prompt_tokens"))
	}
	o, err := strconv.Atoi(get("output_tokens"))
	if err != nil || o < 1 || o > maxTraceTokens {
		return row, fmt.Errorf("output_tokens: must be an integer in [1, %d], got %q", maxTraceTokens, get("output_tokens"))
	}
	row.req = Request{ID: int32(id), At: int64(math.Round(at * 1e9)), PromptTokens: int32(p), OutputTokens: int32(o), ContentKey: uniqueKey(id), UniquePrompt: true}
	if turn > 0 {
		row.req.turnOf().turn = int32(turn)
	}
	if row.req.Priority, err = parsePriority(get("priority")); err != nil {
		return row, err
	}
	if g := get("prefix_group"); g != "" {
		pt, err := strconv.Atoi(get("prefix_tokens"))
		if err != nil || pt < 0 || pt > p {
			return row, fmt.Errorf("prefix_tokens: must be an integer in [0, prompt_tokens=%d] when prefix_group is set, got %q", p, get("prefix_tokens"))
		}
		key, ok := groups[g]
		if !ok {
			key = 0x7f4a_7c15_9e37_79b9 ^ uint64(len(groups)+1)*0xbf58_476d_1ce4_e5b9
			groups[g] = key
		}
		row.group = g
		row.req.PrefixKey, row.req.PrefixTokens = key, int32(pt)
	}
	switch {
	case turn > 1:
		v, err := strconv.ParseFloat(row.think, 64)
		if err != nil || !decimal().MatchString(row.think) || !(v >= 0 && v <= maxArrivalS) {
			return row, fmt.Errorf("think_s: must be a decimal number of seconds in [0, %g] after a session's first turn (the delay after turn %d's last token), got %q", maxArrivalS, turn-1, row.think)
		}
		row.req.ClosedLoop, row.req.turnOf().thinkNs = true, int64(math.Round(v*1e9))
	case turn == 1 && row.think != "" && !isZero(row.think):
		return row, fmt.Errorf("think_s: turn 1 has no earlier turn (it is sent at arrival_s); leave think_s empty, got %q", row.think)
	}
	return row, nil
}

// assembleTrace orders the rows (by arrival, stable; a session's turns
// right after its first turn), numbers requests and sessions, checks each
// session's turns, and links each turn to the next.
func assembleTrace(rows []traceRow, name string) ([]Request, []string, error) {
	bySession := map[string][]int{} // row indexes of each session
	var heads []int                 // ordinary rows and first turns
	for i, r := range rows {
		if r.session == "" {
			heads = append(heads, i)
			continue
		}
		if _, ok := bySession[r.session]; !ok {
			heads = append(heads, i) // stands for the session until sorted
		}
		bySession[r.session] = append(bySession[r.session], i)
	}
	for s, idx := range bySession {
		sort.SliceStable(idx, func(a, b int) bool { return rows[idx[a]].req.Turn() < rows[idx[b]].req.Turn() })
		for k, i := range idx {
			r := &rows[i]
			switch {
			case int(r.req.Turn()) == k: // the same turn as the row before
				return nil, nil, fmt.Errorf("trace %s line %d: turn: session %q has turn %d twice (lines %d and %d)", name, r.line, s, k, rows[idx[k-1]].line, r.line)
			case int(r.req.Turn()) != k+1:
				return nil, nil, fmt.Errorf("trace %s line %d: turn: session %q skips turn %d (its turns: %s)", name, r.line, s, k+1, turnList(rows, idx))
			}
			first := &rows[idx[0]]
			if k > 0 && r.group != "" && (r.group != first.group || r.req.PrefixTokens != first.req.PrefixTokens) {
				return nil, nil, fmt.Errorf("trace %s line %d: prefix_group: a session's prefix group is its first turn's (line %d: %q, %d tokens); leave it empty on later turns", name, r.line, first.line, first.group, first.req.PrefixTokens)
			}
		}
	}
	for h, i := range heads { // a session stands at its first turn
		if s := rows[i].session; s != "" {
			heads[h] = bySession[s][0]
		}
	}
	sort.SliceStable(heads, func(a, b int) bool { return rows[heads[a]].req.At < rows[heads[b]].req.At })
	var reqs []Request
	var labels []string
	session := 0
	for _, i := range heads {
		if rows[i].session == "" {
			reqs = append(reqs, rows[i].req)
			continue
		}
		session++
		labels = append(labels, rows[i].session)
		reqs = appendSession(reqs, rows, bySession[rows[i].session], session)
	}
	for i := range reqs {
		reqs[i].ID = int32(i)
	}
	return reqs, labels, nil
}

// appendSession appends one session's turns (rows idx, in turn order) as
// session number n: each turn triggers the next, and a turn whose prompt
// is at least the previous turn's prompt + output repeats it.
func appendSession(reqs []Request, rows []traceRow, idx []int, n int) []Request {
	first := rows[idx[0]].req
	var segs []engine.Segment
	if first.PrefixTokens > 0 {
		segs = append(segs, engine.Segment{Key: first.PrefixKey, End: int(first.PrefixTokens)})
	}
	prevEnd := 0 // previous turn's prompt + output
	for k, i := range idx {
		r := rows[i].req
		r.PrefixKey, r.PrefixTokens = first.PrefixKey, min(first.PrefixTokens, r.PromptTokens)
		r.turn = &turnFields{outputKey: streamKey(keyReply, uint64(n), uint64(k+1)), thinkNs: r.ThinkNs(), session: int32(n), turn: r.Turn()}
		if k > 0 {
			prev := &reqs[len(reqs)-1]
			prev.Next = int32(len(reqs))
			if int(r.PromptTokens) >= prevEnd {
				prev.turn.reusedTokens = int32(prevEnd)
				segs = append(segs, engine.Segment{Key: prev.OutputKey(), End: prevEnd})
			} else {
				// A cut conversation: only the prefix group is shared. A new
				// list: earlier turns' prompts keep the old one.
				segs = append([]engine.Segment(nil), segs[:min(len(segs), 1)]...)
				if first.PrefixTokens == 0 {
					segs = segs[:0]
				}
			}
		}
		if len(segs) == 0 || int(r.PromptTokens) > segs[len(segs)-1].End {
			segs = append(segs, engine.Segment{Key: streamKey(keyMessage, uint64(n), uint64(k+1)), End: int(r.PromptTokens)})
		}
		r.turn.segments = segs[:len(segs):len(segs)]
		prevEnd = int(r.PromptTokens) + int(r.OutputTokens)
		reqs = append(reqs, r)
	}
	return reqs
}

// isZero reports whether v is a decimal number equal to 0 (0, 0.0, +0):
// the think_s a generator writes for a session's first turn.
func isZero(v string) bool {
	x, err := strconv.ParseFloat(v, 64)
	return err == nil && decimal().MatchString(v) && x == 0
}

func turnList(rows []traceRow, idx []int) string {
	var s []string
	for _, i := range idx {
		s = append(s, strconv.Itoa(int(rows[i].req.Turn())))
	}
	return strings.Join(s, ", ")
}
