package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocarina/gocsv"

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
	line("Model / hardware:", fmt.Sprintf("%s on %s (TP %d)", st.Model.ID, st.Hardware.Name, st.Pred.TP))
	line("KV cache blocks:", fmt.Sprintf("%d (%d tokens)", st.Memory.NumBlocks, st.Memory.MaxTokens(st.Engine.BlockSize)))
	line("Successful requests:", s.Completed)
	line("Failed requests:", s.Failed)
	line("Benchmark duration (s):", f2(s.Duration))
	line("Total input tokens:", s.TotalInputTokens)
	line("Total generated tokens:", s.TotalOutputTokens)
	line("Request throughput (req/s):", f2(s.RequestThroughput))
	line("Output token throughput (tok/s):", f2(s.OutputThroughput))
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
	line("Table lookups (extrapolated):", fmt.Sprintf("%d (%d)", cov.Lookups, cov.Extrapolated))
	for _, e := range cov.Examples {
		line("  extrapolated e.g.:", e)
	}
	fmt.Fprintln(w, strings.Repeat("=", 50))
}

func center(title string, fill rune) string {
	n := 50 - len([]rune(title))
	if n < 0 {
		n = 0
	}
	return strings.Repeat(string(fill), n/2) + title + strings.Repeat(string(fill), n-n/2)
}

// saveResult writes the JSON `vllm bench serve --save-result` writes, with
// its key names, plus a "frontier" object describing the simulation.
func saveResult(path string, sc *scenarios.Scenario, st *sim.Setup, res *sim.Result, s sim.BenchSummary) error {
	out := map[string]any{
		"date":                   time.Now().UTC().Format("20060102-150405"),
		"backend":                "vllm",
		"model_id":               st.Model.ID,
		"tokenizer_id":           st.Model.ID,
		"num_prompts":            len(res.Requests),
		"request_rate":           rateJSON(float64(sc.Workload.Arrivals.RequestRate)),
		"burstiness":             sc.Workload.Arrivals.Burstiness,
		"max_concurrency":        sc.Workload.Arrivals.MaxConcurrency,
		"duration":               s.Duration,
		"completed":              s.Completed,
		"failed":                 s.Failed,
		"total_input_tokens":     s.TotalInputTokens,
		"total_output_tokens":    s.TotalOutputTokens,
		"request_throughput":     s.RequestThroughput,
		"output_throughput":      s.OutputThroughput,
		"total_token_throughput": s.TotalTokenThroughput,
		"frontier": map[string]any{
			"scenario":             sc.Name,
			"hardware":             st.Hardware.Name,
			"tensor_parallel_size": st.Pred.TP,
			"num_gpu_blocks":       st.Memory.NumBlocks,
			"engine_steps":         res.Steps,
			"table_lookups":        res.Coverage.Lookups,
			"extrapolated_lookups": res.Coverage.Extrapolated,
			"notes":                res.Notes,
		},
	}
	for k, v := range s.Latencies {
		if !math.IsNaN(v) {
			out[k] = v
		}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func rateJSON(r float64) any {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return r
}

// requestRow is one --requests-csv row; times in seconds from the start.
type requestRow struct {
	ID          int     `csv:"request_id"`
	Stage       int     `csv:"stage"`
	Engine      int     `csv:"engine"`
	Arrival     float64 `csv:"arrival_s"`
	FirstToken  float64 `csv:"first_token_s"`
	Finish      float64 `csv:"finish_s"`
	TTFTMs      float64 `csv:"ttft_ms"`
	E2EMs       float64 `csv:"e2el_ms"`
	Prompt      int     `csv:"prompt_tokens"`
	Cached      int     `csv:"cached_tokens"`
	Output      int     `csv:"output_tokens"`
	Preemptions int     `csv:"preemptions"`
	Failed      bool    `csv:"failed"`
}

func writeRequests(path string, reqs []sim.RequestRecord) error {
	rows := make([]requestRow, len(reqs))
	for i, r := range reqs {
		rows[i] = requestRow{ID: r.ID, Stage: r.Stage, Engine: r.Engine, Arrival: sec(r.SendNs), FirstToken: sec(r.FirstTokenNs),
			Finish: sec(r.FinishNs), Prompt: r.PromptTokens, Cached: r.CachedTokens, Output: r.OutputTokens,
			Preemptions: r.Preemptions, Failed: r.Failed, TTFTMs: -1, E2EMs: -1}
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

var stepHeader = []string{"engine", "start_s", "duration_ms", "prefill_tokens", "decode_tokens", "padded_tokens", "cuda_graph",
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
	s.rec[0] = strconv.Itoa(r.Engine)
	s.rec[1] = strconv.FormatFloat(float64(r.StartNs)/1e9, 'f', 6, 64)
	s.rec[2] = ms(r.DurationNs)
	s.rec[3] = strconv.Itoa(r.PrefillTokens)
	s.rec[4] = strconv.Itoa(r.DecodeTokens)
	s.rec[5] = strconv.Itoa(r.PaddedTokens)
	s.rec[6] = strconv.FormatBool(r.Graph)
	s.rec[7] = strconv.Itoa(r.Running)
	s.rec[8] = strconv.Itoa(r.Waiting)
	s.rec[9] = strconv.Itoa(r.KVBlocksUsed)
	s.rec[10] = strconv.Itoa(r.Preempted)
	s.rec[11] = ms(r.DeviceNs)
	s.rec[12] = ms(r.HostNs)
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
