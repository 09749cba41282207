package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's router recipe runs as written, and the table below it is
// what its --out-jsonl holds. FRONTIER_UPDATE_README=1 rewrites the table
// (scripts/update-routers.sh). About 10 s on 2 cores; skipped with -short.
func TestREADMERouterRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 7 × 5,120 requests")
	}
	args, _ := readmeRecipe(t, "sweep --scenario scenarios/examples/llama-3.1-8b-h200-chat-4-replicas.yaml")
	for i, a := range args {
		if strings.HasPrefix(a, "scenarios/") {
			args[i] = "../../" + a
		}
	}
	dir := t.TempDir()
	for i, a := range args {
		if a == "routers.jsonl" {
			args[i] = filepath.Join(dir, a)
		}
	}
	_, stderr, err := run(t, append(args, "--quiet")...)
	require.NoError(t, err, stderr)
	table := routerTable(t, filepath.Join(dir, "routers.jsonl"))
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	begin, end := "<!-- routers:begin -->\n", "<!-- routers:end -->"
	head, rest, ok := strings.Cut(string(data), begin)
	require.True(t, ok, "README lacks the routers markers")
	shown, tail, ok := strings.Cut(rest, end)
	require.True(t, ok)
	if os.Getenv("FRONTIER_UPDATE_README") == "1" {
		require.NoError(t, os.WriteFile("../../README.md", []byte(head+begin+table+end+tail), 0o644))
		return
	}
	require.Equal(t, table, shown, "README router table is stale: run scripts/update-routers.sh")
}

// routerTable formats the sweep's points as the README's table.
func routerTable(t *testing.T, path string) string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	b.WriteString("| router | TTFT p50 (ms) | TTFT p99 (ms) | prefix-cache hit rate | throughput (req/s) | output (tok/s) | mean TPOT (ms) | requests per replica |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var p struct {
			Keys   map[string]string
			Result struct {
				MedianTTFT float64 `json:"median_ttft_ms"`
				P99TTFT    float64 `json:"p99_ttft_ms"`
				ReqTput    float64 `json:"request_throughput"`
				OutTput    float64 `json:"output_throughput"`
				MeanTPOT   float64 `json:"mean_tpot_ms"`
				Frontier   struct {
					Replicas struct {
						Hit float64 `json:"prefix_cache_hit_rate"`
						Per []struct {
							Requests int
						} `json:"per_replica"`
					}
				}
			}
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p))
		r := p.Result
		var per []int
		for _, x := range r.Frontier.Replicas.Per {
			per = append(per, x.Requests)
		}
		fmt.Fprintf(&b, "| `%s` | %.1f | %.1f | %.1f %% | %.2f | %.0f | %.2f | %d–%d |\n", p.Keys["router"], r.MedianTTFT, r.P99TTFT,
			100*r.Frontier.Replicas.Hit, r.ReqTput, r.OutTput, r.MeanTPOT, slices.Min(per), slices.Max(per))
	}
	require.NoError(t, sc.Err())
	return b.String()
}
