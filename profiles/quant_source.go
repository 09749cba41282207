package profiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// quantConfigOf is the quantization config vLLM finds in a config.json
// (vllm/config/model.py _parse_quant_hf_config): quantization_config,
// else the older compressed-tensors key compression_config, else a
// multimodal config's text_config.quantization_config; nil when none.
func quantConfigOf(top hfConfig) any {
	for _, k := range []string{"quantization_config", "compression_config"} {
		if v := top[k]; v != nil {
			return v
		}
	}
	if text, ok := top["text_config"].(map[string]any); ok {
		return quantConfigOf(hfConfig(text))
	}
	return nil
}

// hfQuantConfig reads dir's hf_quant_config.json, the quantization of a
// checkpoint whose config.json has none, as vLLM's get_config does for
// ModelOpt ≤ 0.29 checkpoints (vllm/transformers_utils/config.py:
// "ModelOpt 0.29.0 and before saves the quantization config in a separate
// hf_quant_config.json in the same directory as the model config file").
// nil when the file is absent; errors name it.
func hfQuantConfig(dir string) (*Quant, error) {
	const name = "hf_quant_config.json"
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var qc any
	if err := dec.Decode(&qc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	q, err := parseQuant(hfConfig{"quantization_config": qc})
	if err != nil {
		return nil, fmt.Errorf("%s %w", name, err)
	}
	return q, nil
}

// modelOptKVCache is the KV cache dtype vLLM gives a ModelOpt checkpoint
// under --kv-cache-dtype auto (get_kv_cache_quant_algo_string): the first
// of kv_cache_scheme and kv_cache_quant_algo, in "quantization" then at
// the top; a static 8-bit float scheme or "fp8" is fp8, a 4-bit float
// scheme or "nvfp4" nvfp4, anything else vLLM's fallback to auto ("").
func modelOptKVCache(top, inner hfConfig) string {
	var v any
	for _, c := range []any{inner["kv_cache_scheme"], top["kv_cache_scheme"], inner["kv_cache_quant_algo"], top["kv_cache_quant_algo"]} {
		if c != nil && c != "" {
			v = c
			break
		}
	}
	switch x := v.(type) {
	case string:
		switch strings.ToLower(x) {
		case "fp8":
			return "fp8"
		case "nvfp4":
			return "nvfp4"
		}
	case map[string]any:
		bits, _, _ := hfConfig(x).int("num_bits")
		dynamic, _ := x["dynamic"].(bool)
		switch {
		case x["type"] == "float" && bits == 8 && x["dynamic"] != nil && !dynamic:
			return "fp8"
		case x["type"] == "float" && bits == 4:
			return "nvfp4"
		}
	}
	return ""
}

// readBlock reads a weight_block_size: two positive integers [n, k]
// (vLLM's Fp8Config refuses another length; a zero divides by zero in
// its shape checks).
func readBlock(v any, dst *[2]int) error {
	arr, _ := v.([]any)
	if len(arr) == 2 {
		n, _ := arr[0].(json.Number)
		k, _ := arr[1].(json.Number)
		bn, e1 := n.Int64()
		bk, e2 := k.Int64()
		if e1 == nil && e2 == nil && bn > 0 && bk > 0 && bn <= MaxConfigDim && bk <= MaxConfigDim {
			*dst = [2]int{int(bn), int(bk)}
			return nil
		}
	}
	return fmt.Errorf("must be two positive integers [n, k] (vLLM: 128 × 128 blocks), got %v", v)
}
