package predictor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

// A predictor built on the rows TablesNeed selects prices every step,
// counts coverage and notes substitutions exactly as one built on every
// row, for dense, MoE, MLA and quantized models (a checkpoint's fp8 and
// fp8 applied online), bf16 and fp8 KV caches, TP, PP, DP and EP, on
// every embedded hardware; and the selection is a strict part of the
// tables (the point of it).
func TestTablesNeedPricesAsEveryRow(t *testing.T) {
	cases := []struct {
		model, hw, kv, quant string
		tp, pp, dp           int
		ep                   bool
	}{
		{"meta-llama/Llama-2-7b-hf", "h100-sxm", "bfloat16", "", 1, 1, 1, false},
		{"meta-llama/Llama-3.1-70B-Instruct", "h200-sxm", "fp8", "", 4, 1, 1, false},
		{"meta-llama/Llama-3.1-70B-Instruct", "h100-sxm", "bfloat16", "fp8", 4, 2, 1, false},
		{"meta-llama/Llama-3.1-8B-Instruct", "h800", "bfloat16", "", 2, 1, 1, false},
		{"mistralai/Mixtral-8x7B-v0.1", "h100-sxm", "bfloat16", "", 2, 1, 1, false},
		{"mistralai/Mixtral-8x7B-v0.1", "h200-sxm", "bfloat16", "fp8", 2, 1, 2, true},
		{"Qwen/Qwen3-30B-A3B", "h200-sxm", "bfloat16", "", 1, 1, 8, true},
		{"Qwen/Qwen3-14B", "h200-sxm", "fp8", "", 1, 1, 1, false},
		{"deepseek-ai/DeepSeek-V2-Lite", "h200-sxm", "bfloat16", "", 1, 1, 1, false},
		{"deepseek-ai/DeepSeek-V2-Lite", "h100-sxm", "bfloat16", "", 2, 2, 1, false},
		{"RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "h200-sxm", "bfloat16", "", 1, 1, 1, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s q=%s tp%d pp%d dp%d", c.model, c.hw, c.quant, c.tp, c.pp, c.dp), func(t *testing.T) {
			full := llamaConfig(t, c.model, c.hw, c.tp)
			full.KVDtype, full.PP, full.DP, full.ExpertParallel = c.kv, c.pp, c.dp, c.ep
			if c.quant != "" {
				q, err := profiles.QuantFromFlag("quantization", c.quant)
				require.NoError(t, err)
				full.Model.Quant = q
			}
			sel := full
			var err error
			sel.Tables, err = profiles.DefaultTablesFor(full.Hardware.TablesHardware, TablesNeed(full))
			require.NoError(t, err)
			assert.Less(t, len(sel.Tables.Gemm), len(full.Tables.Gemm))
			assert.Less(t, len(sel.Tables.GenerationAttn)+len(sel.Tables.GenerationMLA),
				len(full.Tables.GenerationAttn)+len(full.Tables.GenerationMLA))
			assert.Equal(t, full.Tables.Source, sel.Tables.Source)
			assert.Equal(t, full.Tables.Notes, sel.Tables.Notes)
			want, err := New(full)
			require.NoError(t, err)
			got, err := New(sel)
			require.NoError(t, err)
			assert.Equal(t, priceAll(want), priceAll(got))
			assert.Equal(t, want.Coverage(), got.Coverage())
			assert.Equal(t, want.AllNotes(), got.AllNotes())
		})
	}
}
