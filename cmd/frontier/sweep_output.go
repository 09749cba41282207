package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"frontier/sim/plan"
)

// sweepLine is one --out-jsonl line: the point (sweep fingerprint, index,
// count, its flag settings), its GPUs, the refusal reason or the run's
// notes, and the bench serve result object simulate's --save-result
// writes (with "date" null: see resultObject). Every sweep output (table,
// CSV, result files, plot) is rendered from these lines, so merged shards
// render exactly as the unsharded sweep.
type sweepLine struct {
	plan.LineHead
	Keys    orderedKeys `json:"keys"`
	GPUs    int         `json:"gpus"`
	Refused *string     `json:"refused"`
	Notes   []string    `json:"notes"`
	Launch  []string    `json:"launch,omitempty"`
	// Goodput is the sweep's --goodput bounds, ms by metric (ttft, tpot,
	// e2el), when given: --plot draws them as SLO lines, so a merge
	// draws what the unsharded sweep draws.
	Goodput map[string]float64 `json:"goodput,omitempty"`
	Result  map[string]any     `json:"result"`
}

// orderedKeys is a point's settings as a JSON object in axis order.
type orderedKeys []plan.Assignment

// MarshalJSON writes {"KEY": "VALUE", …} in order.
func (k orderedKeys) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, a := range k {
		if i > 0 {
			b.WriteByte(',')
		}
		kk, _ := json.Marshal(a.Key)
		vv, _ := json.Marshal(a.Value)
		b.Write(kk)
		b.WriteByte(':')
		b.Write(vv)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object back, keeping its order.
func (k *orderedKeys) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("keys: want an object")
	}
	*k = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		*k = append(*k, plan.Assignment{Key: t.(string), Value: v})
	}
	return nil
}

// pointKeys are the point's settings as the line shows them: the sweep
// file's deployment first, then the axes.
func pointKeys(p plan.Point) orderedKeys {
	var k orderedKeys
	if p.Deployment != nil {
		k = append(k, plan.Assignment{Key: "deployment", Value: p.Deployment.Name})
	}
	return append(k, p.Set...)
}

// decodeLines parses raw --out-jsonl lines (already checked by
// plan.ReadLines or written by this sweep).
func decodeLines(raw [][]byte) ([]sweepLine, error) {
	out := make([]sweepLine, len(raw))
	for i, r := range raw {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&out[i]); err != nil {
			return nil, fmt.Errorf("sweep line %d: %w", i, err)
		}
	}
	return out, nil
}

// num reads a number of the result object (NaN when absent or null).
func (l *sweepLine) num(key string) (float64, bool) {
	v, ok := l.Result[key].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := v.Float64()
	return f, err == nil
}

func (l *sweepLine) frontier(key string) (float64, bool) {
	m, ok := l.Result["frontier"].(map[string]any)
	if !ok {
		return 0, false
	}
	v, ok := m[key].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := v.Float64()
	return f, err == nil
}

var pctKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^p([0-9.]+)_ttft_ms$`) })

// percentiles are the --metric-percentiles the lines' results report.
func percentiles(lines []sweepLine) []float64 {
	var pcts []float64
	seen := map[string]bool{}
	for i := range lines {
		for k := range lines[i].Result {
			if m := pctKey().FindStringSubmatch(k); m != nil && !seen[m[1]] {
				seen[m[1]] = true
				p, _ := strconv.ParseFloat(m[1], 64)
				pcts = append(pcts, p)
			}
		}
	}
	sort.Float64s(pcts)
	return pcts
}

// columns are the table's and CSV's metric columns, bench serve's keys:
// throughputs, goodput when any line has it, then mean, median and every
// reported percentile of TTFT, TPOT, ITL and E2EL.
func columns(lines []sweepLine) []string {
	pcts := percentiles(lines)
	goodput := false
	for i := range lines {
		if v, ok := lines[i].Result["request_goodput"]; ok && v != nil {
			goodput = true
		}
	}
	cols := []string{"completed", "failed", "request_throughput", "output_throughput"}
	if goodput {
		cols = append(cols, "request_goodput")
	}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		cols = append(cols, "mean_"+m+"_ms", "median_"+m+"_ms")
		for _, p := range pcts {
			cols = append(cols, "p"+strconv.FormatFloat(p, 'f', -1, 64)+"_"+m+"_ms")
		}
	}
	return cols
}

// keyNames are the point keys of the sweep, in order of first appearance.
func keyNames(lines []sweepLine) []string {
	var out []string
	for i := range lines {
		for _, a := range lines[i].Keys {
			if !slices.Contains(out, a.Key) {
				out = append(out, a.Key)
			}
		}
	}
	return out
}

func (l *sweepLine) key(name string) string {
	for _, a := range l.Keys {
		if a.Key == name {
			return a.Value
		}
	}
	return "-"
}

// cell formats a metric: integers as integers, others with 2 decimals as
// bench serve prints them; "-" for a refused point.
func (l *sweepLine) cell(col string) string {
	v, ok := l.num(col)
	if !ok {
		return "-"
	}
	if col == "completed" || col == "failed" {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func (l *sweepLine) blocks() string {
	if v, ok := l.frontier("num_gpu_blocks"); ok {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return "-"
}

// cells are a row's point, keys, GPUs and metric columns (format writes
// one metric).
func (l *sweepLine) cells(keys, cols []string, format func(*sweepLine, string) string) []string {
	row := []string{strconv.Itoa(l.Point)}
	for _, k := range keys {
		row = append(row, l.key(k))
	}
	row = append(row, strconv.Itoa(l.GPUs))
	for _, c := range cols {
		row = append(row, format(l, c))
	}
	return row
}

// writeTable prints the sweep table: one row per point, notes as
// footnotes below it (a refusal reason is a note).
func writeTable(w io.Writer, lines []sweepLine) error {
	keys, cols := keyNames(lines), columns(lines)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := append(append(append([]string{"point"}, keys...), "gpus"), cols...)
	fmt.Fprintln(tw, strings.Join(append(head, "num_gpu_blocks", "notes"), "\t"))
	var notes []string
	ref := func(n string) string {
		i := slices.Index(notes, n)
		if i < 0 {
			notes = append(notes, n)
			i = len(notes) - 1
		}
		return "[" + strconv.Itoa(i+1) + "]"
	}
	for i := range lines {
		l := &lines[i]
		row := append(l.cells(keys, cols, (*sweepLine).cell), l.blocks())
		var refs []string
		if l.Refused != nil {
			refs = append(refs, "refused"+ref("refused: "+*l.Refused))
		}
		for _, n := range l.Notes {
			refs = append(refs, ref(n))
		}
		row = append(row, strings.Join(refs, " "))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, n := range notes {
		fmt.Fprintf(w, "[%d] %s\n", i+1, n)
	}
	for i := range lines {
		if len(lines[i].Launch) == 0 {
			continue
		}
		fmt.Fprintf(w, "# point %d: %s\n", lines[i].Point, lines[i].label())
		for _, s := range lines[i].Launch {
			fmt.Fprintln(w, s)
		}
	}
	return nil
}

// label is the point's keys as KEY=VALUE, "base" without any.
func (l *sweepLine) label() string {
	var parts []string
	for _, a := range l.Keys {
		parts = append(parts, a.Key+"="+a.Value)
	}
	if len(parts) == 0 {
		return "base"
	}
	return strings.Join(parts, " ")
}

// csvBytes is --out-csv: the table's columns, notes and the refusal
// reason in full.
func csvBytes(lines []sweepLine) ([]byte, error) {
	keys, cols := keyNames(lines), columns(lines)
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := append(append(append([]string{"point"}, keys...), "gpus"), cols...)
	if err := w.Write(append(head, "num_gpu_blocks", "refused", "notes")); err != nil {
		return nil, err
	}
	for i := range lines {
		l := &lines[i]
		row := l.cells(keys, cols, func(l *sweepLine, c string) string {
			if v, ok := l.num(c); ok {
				return strconv.FormatFloat(v, 'g', -1, 64)
			}
			return ""
		})
		blocks := l.blocks()
		if blocks == "-" {
			blocks = ""
		}
		refused := ""
		if l.Refused != nil {
			refused = *l.Refused
		}
		row = append(row, blocks, refused, strings.Join(l.Notes, " | "))
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// resultFileName is a point's --result-dir file: its index (zero-padded
// to the sweep's size, so names sort in point order) and bench serve's
// default name without the date: {label}-{rate}qps[-concurrency{N}]-{model}.
func resultFileName(l *sweepLine) string {
	width := len(strconv.Itoa(max(l.Points-1, 0)))
	label := "openai"
	if s, ok := l.Result["label"].(string); ok && s != "" {
		label = s
	} else if s, ok := l.Result["backend"].(string); ok && s != "" {
		label = s
	}
	rate := "stages"
	switch r := l.Result["request_rate"].(type) {
	case string:
		rate = r
	case json.Number:
		f, _ := r.Float64()
		rate = pyFloat(f)
	}
	conc := ""
	if c, ok := l.Result["max_concurrency"].(json.Number); ok {
		conc = "-concurrency" + c.String()
	}
	model, _ := l.Result["model_id"].(string)
	model = model[strings.LastIndex(model, "/")+1:]
	return fmt.Sprintf("%0*d-%s-%sqps%s-%s.json", width, l.Point, label, rate, conc, model)
}

// writeAtomic writes data to path through a temporary file in the same
// folder, so a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
