package profiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Defect 3: a latency past its row's physical maximum is refused at load,
// naming the table, the row and the value. By hand: gemm m=1 n=8 k=4096 is
// 65,536 FLOPs and 4 × (4,096 + 32,768 + 8) = 147,488 bytes, so its
// maximum is 0.065536 + 0.147488 + 1,000 ms = 1,000.213024 ms.
func TestTableLatencyBounds(t *testing.T) {
	load := func(t *testing.T, file, body string) error {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644))
		_, err := LoadTables(dir)
		return err
	}
	const gemmHead = "gemm_dtype,m,n,k,latency\n"
	for _, v := range []string{"1e12", "1e9"} {
		err := load(t, "gemm_perf.csv", gemmHead+"bfloat16,1,8,4096,0.005\nbfloat16,1,8,4096,"+v+"\n")
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), "load gemm table ")
		assert.Contains(t, err.Error(), "gemm_perf.csv row 2: latency: "+map[string]string{"1e12": "1e+12", "1e9": "1e+09"}[v]+" ms is past the physical maximum 1000 ms for gemm m=1 n=8 k=4096")
	}
	assert.InDelta(t, 1000.213024, maxLatencyMs(2*1*8*4096, 4*(4096+8*4096+8)), 1e-9)
	require.NoError(t, load(t, "gemm_perf.csv", gemmHead+"bfloat16,1,8,4096,1000.2\n"), "just under the bound")

	err := load(t, "ops_perf.csv", "op_name,tokens,width,dtype,latency,eager_latency\nrmsnorm,1,4096,bfloat16,0.002,1e10\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ops_perf.csv row 1: eager_latency: 1e+10 ms is past the physical maximum")

	err = load(t, "generation_attention_perf.csv", "batch_size,isl,step,num_heads,num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,latency\n1,1,128,32,8,128,bfloat16,bfloat16,+Inf\n")
	require.Error(t, err, "an infinite latency is no latency")

	// Every embedded table is inside its bounds (they load).
	for _, hw := range []string{"h100-sxm", "h200-sxm"} {
		_, err := DefaultTables(hw)
		require.NoError(t, err, hw)
	}
	_, err = MeasuredTables("h200-sxm")
	require.NoError(t, err)
}
