package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Row counts observed in aiconfigurator's parquet files (shared/data/profiles):
// Comm is custom_allreduce_perf (138: 69 vllm_graph + 69 vllm_eager) plus the
// newest NCCL folder, 2.29.2 (504 rows) on both machines.
func TestDefaultTablesRowCounts(t *testing.T) {
	tests := []struct {
		hardware                                  string
		gemm, context, generation, moe, comm, ops int
		measuredOn                                string
	}{
		{"h100-sxm", 26040, 10914, 10870, 37762, 642, 0, "h100-sxm"},
		{"H100", 26040, 10914, 10870, 37762, 642, 0, "h100-sxm"},
		// h200-sxm: plus our collector's 198 ops rows (profiles/measured/h200-sxm).
		{"h200-sxm", 101004, 49952, 54347, 48195, 642, 198, "h200-sxm"},
		{"h800", 26040, 10914, 10870, 37762, 0, 0, "h100-sxm"},
	}
	for _, tc := range tests {
		t.Run(tc.hardware, func(t *testing.T) {
			tb, err := DefaultTables(tc.hardware)
			require.NoError(t, err)
			assert.Equal(t, tc.measuredOn, tb.Hardware)
			assert.Len(t, tb.Gemm, tc.gemm)
			assert.Len(t, tb.ContextAttn, tc.context)
			assert.Len(t, tb.GenerationAttn, tc.generation)
			assert.Len(t, tb.MoE, tc.moe)
			assert.Len(t, tb.Comm, tc.comm)
			assert.Len(t, tb.Ops, tc.ops, "aiconfigurator has no elementwise ops table; h200-sxm's are measured")
			assert.Equal(t, int64(1), tb.DecodeContextOffset, "aiconfigurator's decode step is context - 1")
		})
	}
}

func TestDefaultTablesSpecificRows(t *testing.T) {
	tb, err := DefaultTables("h100-sxm")
	require.NoError(t, err)

	gemm := func(dtype string, m, n, k int64) []GemmRow {
		var out []GemmRow
		for _, r := range tb.Gemm {
			if r.Dtype == dtype && r.M == m && r.N == n && r.K == k {
				out = append(out, r)
			}
		}
		return out
	}
	rows := gemm("bfloat16", 4096, 4096, 4096)
	require.Len(t, rows, 1)
	assert.InDelta(t, 0.15604621834225124, rows[0].LatencyMs, 1e-15)
	rows = gemm("bfloat16", 1, 4096, 4096)
	require.Len(t, rows, 1)
	assert.InDelta(t, 0.015954666667514376, rows[0].LatencyMs, 1e-15)

	// Llama-3.1-8B decode attention at TP1: 32 query / 8 KV heads, 1023 tokens of context.
	var decode []AttnRow
	for _, r := range tb.GenerationAttn {
		if r.BatchSize == 1 && r.NumHeads == 32 && r.NumKVHeads == 8 && r.Step == 1023 && r.KVCacheDtype == "bfloat16" {
			decode = append(decode, r)
		}
	}
	require.Len(t, decode, 1)
	assert.Equal(t, AttnRow{BatchSize: 1, ISL: 1, Step: 1023, NumHeads: 32, NumKVHeads: 8, HeadDim: 128,
		AttnDtype: "bfloat16", KVCacheDtype: "bfloat16", LatencyMs: 0.013418667018413544}, decode[0])

	var nccl, graph, eager int
	for _, r := range tb.Comm {
		switch r.Backend {
		case "nccl":
			nccl++
			if r.Op == "all_reduce" && r.Dtype == "half" && r.NumGPUs == 8 && r.MessageSize == 1048576 {
				assert.InDelta(t, 0.03818, r.LatencyMs, 1e-12)
			}
		case "vllm_graph":
			graph++
		case "vllm_eager":
			eager++
		}
	}
	assert.Equal(t, []int{504, 69, 69}, []int{nccl, graph, eager})
	assert.Equal(t, CommRow{Op: "all_reduce", Backend: "vllm_graph", Dtype: "bfloat16", NumGPUs: 2,
		MessageSize: 128, LatencyMs: 0.0042835199832916265}, tb.Comm[0])
}

func TestDefaultTablesSharedAndNoted(t *testing.T) {
	a, err := DefaultTables("h100-sxm")
	require.NoError(t, err)
	b, err := DefaultTables("H100-SXM")
	require.NoError(t, err)
	assert.Same(t, a, b, "memoized per hardware")
	assert.Empty(t, a.Notes)

	h800, err := DefaultTables("h800")
	require.NoError(t, err)
	require.NotEmpty(t, h800.Notes)
	assert.Equal(t, "h800: compute tables are h100-sxm's (same SM and HBM); NVLink 200 GB/s per GPU per direction from the h800 preset (frontier hardware's unit)", h800.Notes[0])
	// newcomer3 finding 4: the notes said 400 and 900 GB/s (both directions)
	// where frontier hardware lists 200 and 450 per direction.
	assert.Equal(t, "h800: no collective tables (h100-sxm's were measured over NVLink at 450 GB/s per direction); collectives priced from the h800 preset's bandwidths", h800.Notes[1])
	assert.Same(t, &a.Gemm[0], &h800.Gemm[0], "h800 shares h100-sxm's rows")

	// H200 tables carry window_size (0 or 128); H100's predate the column.
	h200, err := DefaultTables("h200-sxm")
	require.NoError(t, err)
	windows := map[int64]bool{}
	for _, r := range h200.ContextAttn {
		windows[r.WindowSize] = true
	}
	assert.Equal(t, map[int64]bool{0: true, 128: true}, windows)
}

func TestDefaultTablesUnknownHardware(t *testing.T) {
	_, err := DefaultTables("v100")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown hardware "v100"`)
	assert.Contains(t, err.Error(), "a100-sxm, b200-sxm, gb200, h100-sxm, h200-sxm, h800, l40s, rtx-pro-6000")
}

// An aiconfigurator folder on disk: the newest version of each table, or
// the version asked for (pickVersion's rules).
func TestLoadTablesAIConfiguratorLayout(t *testing.T) {
	dir := filepath.Join("data", "aiconfigurator", "h100_sxm")
	tb, err := LoadTablesVersion(dir, "0.14.0")
	require.NoError(t, err)
	assert.Equal(t, "h100-sxm", tb.Hardware, "named after the folder")
	assert.Len(t, tb.Gemm, 26040)
	assert.Len(t, tb.Comm, 642)
	assert.Contains(t, tb.Source, "comm nccl 2.29.2")
	newest, err := LoadTables(dir)
	require.NoError(t, err)
	assert.Len(t, newest.Gemm, 107188, "vLLM 0.24.0's gemm_perf")
	assert.Contains(t, newest.Source, "gemm vllm 0.24.0")
	_, err = LoadTablesVersion(t.TempDir(), "0.14.0")
	assert.Error(t, err)
}

func sampleTables() *Tables {
	return &Tables{
		Hardware: "h200-sxm",
		Gemm: []GemmRow{
			{Dtype: "bfloat16", M: 1, N: 4096, K: 4096, LatencyMs: 0.0159, EagerMs: 0.021},
			{Dtype: "fp8", M: 8192, N: 22016, K: 4096, LatencyMs: 1.0 / 3},
		},
		ContextAttn: []AttnRow{{BatchSize: 1, ISL: 512, Step: 256, NumHeads: 32, NumKVHeads: 8, HeadDim: 128,
			AttnDtype: "bfloat16", KVCacheDtype: "fp8", WindowSize: 4096, LatencyMs: 0.05}},
		GenerationAttn: []AttnRow{{BatchSize: 64, ISL: 1, Step: 2047, NumHeads: 32, NumKVHeads: 32, HeadDim: 128,
			AttnDtype: "bfloat16", KVCacheDtype: "bfloat16", LatencyMs: 0.2, EagerMs: 0.25}},
		MoE: []MoERow{{Dtype: "bfloat16", NumTokens: 128, Hidden: 4096, Inter: 14336, TopK: 2, NumExperts: 8,
			MoETP: 2, MoEEP: 1, Distribution: "power_law_1.2", LatencyMs: 0.9}},
		Comm: []CommRow{{Op: "all_reduce", Backend: "nccl", Dtype: "bfloat16", NumGPUs: 4, MessageSize: 1 << 20,
			LatencyMs: 0.03, EagerMs: 0.04}},
		Ops:   []OpRow{{Op: "rmsnorm", Tokens: 256, Width: 4096, Dtype: "bfloat16", LatencyMs: 0.004, EagerMs: 0.012}},
		Notes: []string{"collected by test"},
	}
}

func TestLoadTablesFlatCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := sampleTables()
	require.NoError(t, WriteTables(dir, want))
	got, err := LoadTables(dir)
	require.NoError(t, err)
	want.Source = dir
	assert.Equal(t, want, got)
}

func TestLoadTablesFlatPartialAndExtraColumns(t *testing.T) {
	dir := t.TempDir()
	// Only a GEMM table, columns reordered, an unknown column, no eager_latency.
	writeFile(t, dir, "gemm_perf.csv", "m,n,k,gemm_dtype,gpu_clock_mhz,latency\n"+
		"16,4096,4096,bfloat16,1980,0.02\n"+
		"32,4096,4096,bfloat16,1980,2.5e-2\n")
	tb, err := LoadTables(dir)
	require.NoError(t, err)
	assert.Equal(t, []GemmRow{
		{Dtype: "bfloat16", M: 16, N: 4096, K: 4096, LatencyMs: 0.02},
		{Dtype: "bfloat16", M: 32, N: 4096, K: 4096, LatencyMs: 0.025},
	}, tb.Gemm)
	assert.Empty(t, tb.ContextAttn)
	assert.Empty(t, tb.Comm)
	assert.Equal(t, "", tb.Hardware, "no meta.yaml")
}

func TestLoadTablesFlatParquet(t *testing.T) {
	type gemm struct {
		GemmDtype string  `parquet:"gemm_dtype"`
		M         int64   `parquet:"m"`
		N         int64   `parquet:"n"`
		K         int64   `parquet:"k"`
		Latency   float64 `parquet:"latency"`
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "gemm_perf.parquet"))
	require.NoError(t, err)
	require.NoError(t, parquet.Write(out, []gemm{{"fp8", 64, 1024, 2048, 0.007}}))
	require.NoError(t, out.Close())
	writeFile(t, dir, "meta.yaml", "hardware: h100-sxm\n")

	tb, err := LoadTables(dir)
	require.NoError(t, err)
	assert.Equal(t, []GemmRow{{Dtype: "fp8", M: 64, N: 1024, K: 2048, LatencyMs: 0.007}}, tb.Gemm)
	assert.Equal(t, "h100-sxm", tb.Hardware)
}

func TestLoadTablesErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string // substring; {dir} is replaced by the temp dir
	}{
		{"bad integer names file and row",
			map[string]string{"gemm_perf.csv": "gemm_dtype,m,n,k,latency\nbfloat16,1,4096,4096,0.01\nbfloat16,2x,4096,4096,0.01\n"},
			`load gemm table {dir}/gemm_perf.csv row 2: m: not an integer ("2x")`},
		{"bad latency",
			map[string]string{"comm_perf.csv": "op_name,backend,dtype,num_gpus,message_size,latency\nall_reduce,nccl,half,2,1024,fast\n"},
			`load comm table {dir}/comm_perf.csv row 1: latency: not a number ("fast")`},
		{"negative latency",
			map[string]string{"ops_perf.csv": "op_name,tokens,width,dtype,latency,eager_latency\nrmsnorm,1,4096,bfloat16,-0.1,0\n"},
			`load ops table {dir}/ops_perf.csv row 1: latency: latency must be positive milliseconds, got -0.1`},
		{"empty required cell",
			map[string]string{"moe_perf.csv": "moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\n" +
				"bfloat16,1,4096,,2,8,1,1,balanced,0.3\n"},
			`load moe table {dir}/moe_perf.csv row 1: inter_size: empty`},
		{"missing column",
			map[string]string{"generation_attention_perf.csv": "batch_size,isl,step,num_heads,head_dim,attn_dtype,kv_cache_dtype,latency\n"},
			`load generation attention table {dir}/generation_attention_perf.csv: missing column(s) num_key_value_heads`},
		{"csv and parquet both present",
			map[string]string{"gemm_perf.csv": "gemm_dtype,m,n,k,latency\n", "gemm_perf.parquet": "x"},
			"both gemm_perf.csv and gemm_perf.parquet present"},
		{"no table at all",
			map[string]string{"meta.yaml": "hardware: h100-sxm\n"},
			"no table file found"},
		{"bad meta.yaml",
			map[string]string{"gemm_perf.csv": "gemm_dtype,m,n,k,latency\n", "meta.yaml": "hardware: [\n"},
			"load tables {dir}/meta.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				writeFile(t, dir, name, body)
			}
			_, err := LoadTables(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), replaceDir(tc.want, dir))
		})
	}
	_, err := LoadTables(filepath.Join(t.TempDir(), "absent"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestVersionLess(t *testing.T) {
	assert.True(t, versionLess("2.23", "2.27.3"))
	assert.True(t, versionLess("2.27.3", "2.29.2"))
	assert.True(t, versionLess("0.9.0", "0.14.0"), "numeric, not lexical")
	assert.False(t, versionLess("2.29.2", "2.29.2"))
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
}

func replaceDir(s, dir string) string { return strings.ReplaceAll(s, "{dir}", dir) }

func TestDefaultTablesConcurrent(t *testing.T) {
	done := make(chan *Tables, 8)
	for i := 0; i < 8; i++ {
		go func() {
			tb, err := DefaultTables("h800")
			assert.NoError(t, err)
			done <- tb
		}()
	}
	first := <-done
	for i := 1; i < 8; i++ {
		assert.Same(t, first, <-done)
	}
}
