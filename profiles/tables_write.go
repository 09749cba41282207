package profiles

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"
)

// WriteTables writes t to dir in the project's flat CSV layout (one
// <table>_perf.csv per table, header included even when empty, and meta.yaml
// with the hardware, notes and any decode step offset), the layout LoadTables
// reads back. dir is created if needed; existing files of those names are
// replaced. Latencies are written in milliseconds with full float64 precision.
func WriteTables(dir string, t *Tables) error {
	mustBeDecoded(t, "WriteTables")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write tables %s: %w", dir, err)
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	files := []struct {
		name   string
		header []string
		rows   [][]string
	}{
		{name: flatGemm, header: []string{"gemm_dtype", "m", "n", "k", "latency", "eager_latency"}},
		{name: flatContextAttn, header: attnHeader},
		{name: flatGenerationAttn, header: attnHeader},
		{name: flatMoE, header: []string{"moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk",
			"num_experts", "moe_tp_size", "moe_ep_size", "distribution", "latency", "eager_latency"}},
		{name: flatComm, header: []string{"op_name", "backend", "dtype", "num_gpus", "message_size", "latency", "eager_latency"}},
		{name: flatOps, header: []string{"op_name", "tokens", "width", "dtype", "latency", "eager_latency"}},
	}
	for _, r := range t.Gemm {
		files[0].rows = append(files[0].rows, []string{r.Dtype, i(r.M), i(r.N), i(r.K), f(r.LatencyMs), f(r.EagerMs)})
	}
	attnRecord := func(r AttnRow) []string {
		return []string{i(r.BatchSize), i(r.ISL), i(r.Step), i(r.NumHeads), i(r.NumKVHeads), i(r.HeadDim),
			r.AttnDtype, r.KVCacheDtype, i(r.WindowSize), f(r.LatencyMs), f(r.EagerMs)}
	}
	for _, r := range t.ContextAttn {
		files[1].rows = append(files[1].rows, attnRecord(r))
	}
	for _, r := range t.GenerationAttn {
		files[2].rows = append(files[2].rows, attnRecord(r))
	}
	for _, r := range t.MoE {
		files[3].rows = append(files[3].rows, []string{r.Dtype, i(r.NumTokens), i(r.Hidden), i(r.Inter), i(r.TopK),
			i(r.NumExperts), i(r.MoETP), i(r.MoEEP), r.Distribution, f(r.LatencyMs), f(r.EagerMs)})
	}
	for _, r := range t.Comm {
		files[4].rows = append(files[4].rows, []string{r.Op, r.Backend, r.Dtype, i(r.NumGPUs), i(r.MessageSize),
			f(r.LatencyMs), f(r.EagerMs)})
	}
	for _, r := range t.Ops {
		files[5].rows = append(files[5].rows, []string{r.Op, i(r.Tokens), i(r.Width), r.Dtype, f(r.LatencyMs), f(r.EagerMs)})
	}
	for _, file := range files {
		p := filepath.Join(dir, file.name+".csv")
		if err := writeCSV(p, file.header, file.rows); err != nil {
			return fmt.Errorf("write tables %s: %w", p, err)
		}
	}
	m := tablesMeta{Hardware: t.Hardware, Notes: t.Notes}
	if t.DecodeContextOffset != 0 {
		m.DecodeContextOffset = &t.DecodeContextOffset
	}
	meta, err := yaml.Marshal(m)
	if err != nil {
		return fmt.Errorf("write tables %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, flatMeta), meta, 0o644); err != nil {
		return fmt.Errorf("write tables %s: %w", dir, err)
	}
	return nil
}

var attnHeader = []string{"batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim",
	"attn_dtype", "kv_cache_dtype", "window_size", "latency", "eager_latency"}

func writeCSV(path string, header []string, rows [][]string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(out)
	_ = w.Write(header)
	_ = w.WriteAll(rows) // WriteAll flushes; its error is w.Error()
	if err := w.Error(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
