package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gocarina/gocsv"

	"frontier/predictor"
	"frontier/scenarios"
	"frontier/sim"
)

var metricTitles = map[string][2]string{
	"ttft": {"Time to First Token", "TTFT"},
	"tpot": {"Time per Output Token (excl. 1st token)", "TPOT"},
	"itl":  {"Inter-token Latency", "ITL"},
	"e2el": {"End-to-end Latency", "E2EL"},
}

// printSummary prints the result laid out like `vllm bench serve`.
func printSummary(w io.Writer, sc *scenarios.Scenario, st *sim.Setup, res *sim.Result, s sim.BenchSummary, shown []string) {
	line := func(k string, v any) { fmt.Fprintf(w, "%-40s %v\n", k, v) }
	f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	fmt.Fprintln(w, center(" Serving Benchmark Result (simulated) ", '='))
	line("Scenario:", sc.Name)
	for _, d := range st.Pools {
		role := "Deployment:"
		if d.Pool != "" {
			role = fmt.Sprintf("%s%s pool (%d×):", strings.ToUpper(d.Pool[:1]), d.Pool[1:], d.Instances)
		}
		desc := fmt.Sprintf("%s on %s, TP %d PP %d DP %d", d.Model.ID, d.Hardware.Name, d.Pred.TP, d.PP, d.DP)
		if d.Pred.ExpertParallel {
			desc += fmt.Sprintf(", EP %d", d.Pred.TP*d.DP)
		}
		desc += fmt.Sprintf(", weights %s, KV cache %s", d.Weights, d.KVCache)
		line(role, desc)
		line("  KV cache per engine:", fmt.Sprintf("%d blocks (%d tokens)", d.Memory.NumBlocks, d.Memory.MaxTokens(d.Engine.BlockSize)))
	}
	policyLines(line, st)
	line("Request rate:", describeRate(sc))
	if res.Growth.Growing {
		line("Load:", "overloaded, the queue still grew at the last send (see the note)")
	}
	line("Successful requests:", s.Completed)
	line("Failed requests:", s.Failed)
	if s.Rejected > 0 {
		line("  rejected (prompt + output > max_model_len):", s.Rejected)
	}
	if mc := sc.Workload.Arrivals.MaxConcurrency; mc != nil {
		line("Maximum request concurrency:", *mc) // as vllm bench serve prints it when set
	}
	line("Benchmark duration (s):", f2(s.Duration))
	line("Total input tokens:", s.TotalInputTokens)
	line("Total generated tokens:", s.TotalOutputTokens)
	line("Request throughput (req/s):", f2(s.RequestThroughput))
	if s.GoodputSet {
		line("Request goodput (req/s):", f2(s.RequestGoodput))
	}
	line("Output token throughput (tok/s):", f2(s.OutputThroughput))
	line("Peak output token throughput (tok/s):", f2(s.MaxOutputTokensPerS))
	line("Peak concurrent requests:", s.MaxConcurrentRequests)
	line("Total Token throughput (tok/s):", f2(s.TotalTokenThroughput))
	for _, m := range shown {
		t := metricTitles[m]
		fmt.Fprintln(w, center(t[0], '-'))
		line("Mean "+t[1]+" (ms):", f2(s.Latencies["mean_"+m+"_ms"]))
		line("Median "+t[1]+" (ms):", f2(s.Latencies["median_"+m+"_ms"]))
		for _, p := range s.Percentiles {
			line("P"+sim.PercentileLabel(p)+" "+t[1]+" (ms):", f2(s.Latencies["p"+sim.PercentileLabel(p)+"_"+m+"_ms"]))
		}
	}
	fmt.Fprintln(w, center("Simulator", '-'))
	line("Engine steps:", res.Steps)
	cov := res.Coverage
	line("Distinct operator shapes priced:", cov.Lookups)
	if cov.Extrapolated > 0 {
		line("  outside the tables' grids:", fmt.Sprintf("%d (extrapolated: each family's rule is in the notes)", cov.Extrapolated))
	} else {
		line("  outside the tables' grids:", 0) // no family, so no rule note to point to
	}
	for _, f := range cov.Families {
		which := "farthest" // a shape out for a reason with no axis (no table, a grid hole) is only an example
		if f.Reach.Axis == "" {
			which = "e.g."
		}
		line("    "+f.Family+":", fmt.Sprintf("%s, %s %s (%s)", plural(int(f.Shapes), "shape"), which, f.Farthest, f.Reach))
	}
	if len(res.Engines) > 1 {
		fmt.Fprintln(w, center("Per engine", '-'))
		fmt.Fprint(w, perEngine(res))
	}
	if stages := perStage(res); stages != "" {
		fmt.Fprintln(w, center("Per stage", '-'))
		fmt.Fprint(w, stages)
	}
	printReplicas(w, line, st, res)
	printClasses(w, res, s)
	if turns := perTurn(res); turns != "" {
		fmt.Fprintln(w, center("Per turn (sessions)", '-'))
		fmt.Fprint(w, turns)
	}
	fmt.Fprintln(w, strings.Repeat("=", 50))
}

// describeRate says how requests were sent.
func describeRate(sc *scenarios.Scenario) string {
	a := sc.Workload.Arrivals
	switch {
	case sc.Workload.Dataset == "trace":
		return "from the trace's arrival times"
	case sc.Workload.Dataset == "sessions":
		return describeSessions(&sc.Workload)
	case len(a.Stages) > 0:
		var parts []string
		for _, st := range a.Stages {
			parts = append(parts, fmt.Sprintf("%g req/s × %g s", st.Rate, st.DurationS))
		}
		return "stages: " + strings.Join(parts, ", ")
	case math.IsInf(float64(a.RequestRate), 1):
		return "inf (every request sent at t = 0)"
	}
	return fmt.Sprintf("%g req/s (burstiness %g)", float64(a.RequestRate), a.Burstiness)
}

// perEngine summarizes each engine core of a multi-engine run: requests
// it finished (decode side for disaggregated runs), their mean TTFT, and
// its steps.
func perEngine(res *sim.Result) string {
	done := make([]int, len(res.Engines))
	ttft := make([]float64, len(res.Engines))
	for _, r := range res.Requests {
		if e, pe := int(r.Engine), int(r.PrefillEngine); !r.Failed && r.FinishNs >= 0 && e < len(done) {
			done[e]++
			ttft[e] += float64(r.TTFTNs()) / 1e6
			if r.TransferDoneNs >= 0 && pe < len(done) && pe != e {
				done[pe]++ // prefilled there
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %-8s %7s %9s %14s %9s\n", "engine", "pool", "dp_rank", "requests", "mean TTFT ms", "steps")
	for i, e := range res.Engines {
		pool, mean := e.Pool, "-"
		if pool == "" {
			pool = "-"
		}
		if done[i] > 0 && e.Pool != "prefill" {
			mean = strconv.FormatFloat(ttft[i]/float64(done[i]), 'f', 2, 64)
		}
		fmt.Fprintf(&b, "%-7d %-8s %7d %9d %14s %9d\n", e.ID, pool, e.DPRank, done[i], mean, e.Steps)
	}
	return b.String()
}

// perStage summarizes each load stage of a staged run (empty otherwise).
func perStage(res *sim.Result) string {
	if !slices.ContainsFunc(res.Requests, func(r sim.RequestRecord) bool { return r.Stage > 0 }) {
		return "" // one stage: nothing to collect
	}
	// Counted first, then each stage's TTFTs appended into its part of one
	// flat slice and its E2EL mean summed as it goes (medianAndMean's sum,
	// in the same order): appending to two slices per stage grown by
	// doubling allocated ~570 KB for the 9,000 requests of the codegen
	// run, all fresh pages (the collector is off: ~140 page faults of the
	// process's ~2,500), where the TTFTs take 72 KB.
	var counts []int
	for i := range res.Requests {
		r := &res.Requests[i]
		for len(counts) <= int(r.Stage) {
			counts = append(counts, 0)
		}
		if !r.Failed && r.FinishNs >= 0 {
			counts[r.Stage]++
		}
	}
	if len(counts) < 2 {
		return ""
	}
	type acc struct {
		ttft []float64
		e2e  float64 // mean E2EL, ms, summed as meanCell does
	}
	stages := make([]acc, len(counts))
	ttft := make([]float64, len(res.Requests))
	for k, n := range counts {
		stages[k].ttft = ttft[:0:n]
		ttft = ttft[n:]
	}
	for i := range res.Requests {
		r := &res.Requests[i]
		if a := &stages[r.Stage]; !r.Failed && r.FinishNs >= 0 {
			a.ttft = append(a.ttft, float64(r.TTFTNs())/1e6)
			a.e2e += float64(r.E2ENs()) / 1e6 / float64(counts[r.Stage])
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %9s %16s %16s\n", "stage", "completed", "median TTFT ms", "mean E2EL ms")
	for i, a := range stages {
		mean := "-"
		if counts[i] > 0 {
			mean = strconv.FormatFloat(a.e2e, 'f', 2, 64)
		}
		fmt.Fprintf(&b, "%-6d %9d %16s %16s\n", i, counts[i], medianCell(a.ttft), mean)
	}
	return b.String()
}

// medianAndMean are the per-stage and per-replica tables' latency cells:
// the median of ttft (sorted in place) and the mean of e2e, ms with two
// decimals, "-" where there is no request to take them over.
func medianAndMean(ttft, e2e []float64) (median, mean string) {
	median, mean = medianCell(ttft), "-"
	if len(e2e) > 0 {
		m := 0.0
		for _, v := range e2e {
			m += v / float64(len(e2e))
		}
		mean = strconv.FormatFloat(m, 'f', 2, 64)
	}
	return median, mean
}

// medianCell is medianAndMean's median cell: the median of ttft (sorted
// in place), ms with two decimals, "-" for none.
func medianCell(ttft []float64) string {
	if len(ttft) == 0 {
		return "-"
	}
	sort.Float64s(ttft)
	return strconv.FormatFloat(sim.Percentile(ttft, 50), 'f', 2, 64)
}

func center(title string, fill rune) string {
	n := 50 - len([]rune(title))
	if n < 0 {
		n = 0
	}
	return strings.Repeat(string(fill), n/2) + title + strings.Repeat(string(fill), n-n/2)
}

// saveResult writes the JSON `vllm bench serve --save-result` writes, with
// its key names, plus a "frontier" object describing the simulation; with
// appendTo it appends it as one more line (--append-result).
func saveResult(path string, rf resultFlags, sc *scenarios.Scenario, st *sim.Setup, res *sim.Result, s sim.BenchSummary) error {
	data, err := json.Marshal(resultObject(rf.stamp(), rf, sc, st, res, s))
	if err != nil {
		return err
	}
	return writeResult(path, rf, data)
}

// resultObject is the result JSON of --save-result: bench serve's keys
// and the "frontier" object. date is bench serve's "date" (sweeps pass
// nil: a simulated point has no wall-clock time, and their outputs are
// byte-identical across runs).
func resultObject(date any, rf resultFlags, sc *scenarios.Scenario, st *sim.Setup, res *sim.Result, s sim.BenchSummary) map[string]any {
	out := map[string]any{
		"date":                    date,
		"backend":                 rf.backend,
		"label":                   labelJSON(rf.label),
		"model_id":                st.Model.ID,
		"tokenizer_id":            st.Model.ID,
		"num_prompts":             len(res.Requests),
		"request_rate":            rateJSON(sc),
		"burstiness":              sc.Workload.Arrivals.Burstiness,
		"max_concurrency":         sc.Workload.Arrivals.MaxConcurrency,
		"duration":                s.Duration,
		"completed":               s.Completed,
		"failed":                  s.Failed,
		"total_input_tokens":      s.TotalInputTokens,
		"total_output_tokens":     s.TotalOutputTokens,
		"request_throughput":      s.RequestThroughput,
		"output_throughput":       s.OutputThroughput,
		"total_token_throughput":  s.TotalTokenThroughput,
		"request_goodput":         goodputJSON(s),
		"max_concurrent_requests": s.MaxConcurrentRequests,
		"max_output_tokens_per_s": s.MaxOutputTokensPerS,
		"frontier": map[string]any{
			"scenario":              sc.Name,
			"arrivals":              describeRate(sc),
			"hardware":              st.Hardware.Name,
			"tensor_parallel_size":  st.Pred.TP,
			"num_gpu_blocks":        st.Memory.NumBlocks,
			"pools":                 poolsJSON(st),
			"engine_steps":          res.Steps,
			"table_lookups":         res.Coverage.Lookups,
			"extrapolated_lookups":  res.Coverage.Extrapolated,
			"extrapolated_families": familiesJSON(res.Coverage),
			"notes":                 res.Notes,
		},
	}
	policyJSON(out["frontier"].(map[string]any), st, res, s)
	if pt := perTurnJSON(res); pt != nil {
		out["frontier"].(map[string]any)["per_turn"] = pt
	}
	for k, v := range s.Latencies {
		if !math.IsNaN(v) {
			out[k] = v
		}
	}
	return out
}

func writeResult(path string, rf resultFlags, data []byte) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--result-dir: %w", err)
		}
	}
	if !rf.appendTo {
		return os.WriteFile(path, data, 0o644)
	}
	// --append-result: one JSON object per line, as bench serve appends.
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if st, err := fh.Stat(); err == nil && st.Size() > 0 {
		data = append([]byte{'\n'}, data...)
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// goodputJSON is bench serve's request_goodput: null without --goodput.
func goodputJSON(s sim.BenchSummary) any {
	if !s.GoodputSet {
		return nil
	}
	return s.RequestGoodput
}

// labelJSON is bench serve's "label": the --label value, null when unset.
func labelJSON(l string) any {
	if l == "" {
		return nil
	}
	return l
}

// singleRate is the workload's one request rate (requests/s, +Inf = all
// at t = 0); ok is false for staged, trace and sessions workloads, whose
// send times come from their stages, the trace or the closed loop.
func singleRate(sc *scenarios.Scenario) (rate float64, ok bool) {
	if d := sc.Workload.Dataset; len(sc.Workload.Arrivals.Stages) > 0 || d == "trace" || d == "sessions" {
		return 0, false
	}
	return float64(sc.Workload.Arrivals.RequestRate), true
}

// rateJSON is bench serve's request_rate: a number or "inf"; null for
// staged or trace workloads, whose rates the "frontier" object describes.
func rateJSON(sc *scenarios.Scenario) any {
	r, ok := singleRate(sc)
	switch {
	case !ok:
		return nil
	case math.IsInf(r, 1):
		return "inf"
	}
	return r
}

// requestRow is one --requests-csv row; times in seconds from the start.
type requestRow struct {
	ID           int     `csv:"request_id"`
	Stage        int     `csv:"stage"`
	Engine       int     `csv:"engine"`
	PrefillEng   int     `csv:"prefill_engine"`
	TransferDone float64 `csv:"kv_transfer_done_s"`
	Arrival      float64 `csv:"arrival_s"`
	FirstToken   float64 `csv:"first_token_s"`
	Finish       float64 `csv:"finish_s"`
	TTFTMs       float64 `csv:"ttft_ms"`
	E2EMs        float64 `csv:"e2el_ms"`
	Prompt       int     `csv:"prompt_tokens"`
	Cached       int     `csv:"cached_tokens"`
	Output       int     `csv:"output_tokens"`
	Preemptions  int     `csv:"preemptions"`
	Failed       bool    `csv:"failed"`
	Session      string  `csv:"session_id"` // 0 = not part of a session; a trace's own label, else the session's number
	Turn         int     `csv:"turn"`       // 1-based turn of the session, 0 outside sessions
	Priority     int     `csv:"priority"`   // the request's priority (0 by default)
	Replica      int     `csv:"replica"`    // the replica the router sent it to (0 with one)
}

// writeRequests writes --requests-csv; labels are a trace's session
// labels (workload.Plan.SessionLabels, nil otherwise).
func writeRequests(path string, reqs []sim.RequestRecord, labels []string) error {
	rows := make([]requestRow, len(reqs))
	for i, r := range reqs {
		session := strconv.Itoa(int(r.Session))
		if r.Session > 0 && int(r.Session) <= len(labels) {
			session = labels[r.Session-1]
		}
		rows[i] = requestRow{ID: int(r.ID), Stage: int(r.Stage), Engine: int(r.Engine), PrefillEng: int(r.PrefillEngine), TransferDone: sec(r.TransferDoneNs),
			Arrival: sec(r.SendNs), FirstToken: sec(r.FirstTokenNs),
			Finish: sec(r.FinishNs), Prompt: int(r.PromptTokens), Cached: int(r.CachedTokens), Output: int(r.OutputTokens),
			Preemptions: int(r.Preemptions), Failed: r.Failed, TTFTMs: -1, E2EMs: -1, Session: session, Turn: int(r.Turn),
			Priority: int(r.Priority), Replica: int(r.Replica)}
		if r.FirstTokenNs >= 0 {
			rows[i].TTFTMs = float64(r.TTFTNs()) / 1e6
		}
		if r.FinishNs >= 0 && r.SendNs >= 0 {
			rows[i].E2EMs = float64(r.E2ENs()) / 1e6
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := gocsv.MarshalFile(&rows, f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func sec(ns int64) float64 {
	if ns < 0 {
		return -1
	}
	return float64(ns) / 1e9
}

// stepWriter streams --steps-csv rows as steps end (runs can have
// millions of steps; nothing is kept in memory).
type stepWriter struct {
	f   *os.File
	b   *bufio.Writer
	w   *csv.Writer
	err error
	rec []string
}

var stepHeader = []string{"engine", "dp_rank", "pp_stage", "pool", "dummy", "start_s", "duration_ms", "prefill_tokens", "decode_tokens", "padded_tokens", "cuda_graph",
	"running", "waiting", "kv_blocks_used", "preempted", "device_ms", "host_ms"}

func newStepWriter(path string) (*stepWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--steps-csv: %w", err)
	}
	b := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(b)
	sw := &stepWriter{f: f, b: b, w: w, rec: make([]string, len(stepHeader))}
	sw.err = w.Write(stepHeader)
	return sw, nil
}

func (s *stepWriter) add(r sim.StepRecord) {
	if s.err != nil {
		return
	}
	ms := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 4, 64) }
	s.rec = append(s.rec[:0], strconv.Itoa(r.Engine), strconv.Itoa(r.DPRank), strconv.Itoa(r.PPStage), r.Pool,
		strconv.FormatBool(r.Dummy), strconv.FormatFloat(float64(r.StartNs)/1e9, 'f', 6, 64), ms(r.DurationNs),
		strconv.Itoa(r.PrefillTokens), strconv.Itoa(r.DecodeTokens), strconv.Itoa(r.PaddedTokens),
		strconv.FormatBool(r.Graph), strconv.Itoa(r.Running), strconv.Itoa(r.Waiting), strconv.Itoa(r.KVBlocksUsed),
		strconv.Itoa(r.Preempted), ms(r.DeviceNs), ms(r.HostNs))
	s.err = s.w.Write(s.rec)
}

func (s *stepWriter) close() error {
	s.w.Flush()
	if s.err == nil {
		s.err = s.w.Error()
	}
	if err := s.b.Flush(); s.err == nil {
		s.err = err
	}
	if err := s.f.Close(); s.err == nil {
		s.err = err
	}
	return s.err
}

// poolsJSON describes every deployment of the run (one co-located, or the
// prefill and decode pools).
func poolsJSON(st *sim.Setup) []map[string]any {
	var out []map[string]any
	for _, d := range st.Pools {
		out = append(out, map[string]any{
			"pool": d.Pool, "instances": d.Instances, "model": d.Model.ID, "hardware": d.Hardware.Name,
			"tensor_parallel_size": d.Pred.TP, "pipeline_parallel_size": d.PP, "data_parallel_size": d.DP,
			"enable_expert_parallel": d.Pred.ExpertParallel,
			"num_gpu_blocks":         d.Memory.NumBlocks,
		})
	}
	return out
}

// familiesJSON is the summary's per-family coverage lines as JSON: for
// each operator family with a shape outside its table's grid, how many
// shapes, the farthest (its coordinates, and how far: the summary's text),
// and the rule that priced them (the family's note); [] when none.
func familiesJSON(c predictor.Coverage) []map[string]any {
	out := make([]map[string]any, 0, len(c.Families))
	for _, f := range c.Families {
		out = append(out, map[string]any{"family": f.Family, "shapes": f.Shapes, "farthest": f.Farthest, "reach": f.Reach.String(), "rule": f.Rule})
	}
	return out
}
