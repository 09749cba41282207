package profiles

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// MaxLenKeys are the config.json keys vLLM reads a model's maximum length
// from, in its order (vllm/config/model.py, _get_and_verify_max_len,
// possible_keys): the smallest one present wins.
var MaxLenKeys = []string{
	"max_position_embeddings", // OPT
	"n_positions",             // GPT-2
	"max_seq_len",             // MPT
	"seq_length",              // ChatGLM2
	"model_max_length",        // Command-R
	"max_target_positions",    // Whisper
	"max_sequence_length",
	"max_seq_length",
	"seq_len",
}

// DefaultMaxModelLen is what vLLM assumes, with a warning, when none of
// MaxLenKeys is in the config and --max-model-len is not given.
const DefaultMaxModelLen = 2048

// NoMaxLenWarning is vLLM's warning for a config without any MaxLenKeys.
func NoMaxLenWarning() string {
	return fmt.Sprintf("The model's config.json does not contain any of the following keys to determine the original maximum length of the model: %s. Assuming the model's maximum length is %d.",
		"['"+strings.Join(MaxLenKeys, "', '")+"']", DefaultMaxModelLen)
}

// derivedMaxLen is vLLM's derived max_model_len for config c: the smallest
// of MaxLenKeys present; model_max_length, when set, replaces it (vLLM:
// Command-R, Cohere); then a rope_scaling (or rope_parameters) factor
// multiplies it, except for rope types su, longrope and llama3 (whose
// max_position_embeddings already counts it) and Gemma-3, and yarn starts
// from original_max_position_embeddings. 0 and "" when no key is present
// (the caller applies DefaultMaxModelLen). A key that is 0 or negative is
// an error naming it: every request would be refused (vLLM itself would
// derive a non-positive length and serve nothing).
func derivedMaxLen(c hfConfig, modelType string) (int, string, error) {
	best, key := 0, ""
	for _, k := range MaxLenKeys {
		v, ok, err := c.int(k)
		if err != nil {
			return 0, "", err
		}
		if !ok {
			continue
		}
		if v <= 0 {
			return 0, "", fmt.Errorf("%s: must be > 0 (vLLM derives max_model_len from it), got %d", k, v)
		}
		if key == "" || v < best {
			best, key = v, k
		}
	}
	if v, ok, _ := c.int("model_max_length"); ok && v > 0 {
		best, key = v, "model_max_length"
	}
	if key == "" {
		return 0, "", nil
	}
	rope, _ := c["rope_scaling"].(map[string]any)
	if rope == nil {
		rope, _ = c["rope_parameters"].(map[string]any)
	}
	if rope == nil || strings.Contains(modelType, "gemma3") {
		return best, key, nil
	}
	kind, _ := rope["rope_type"].(string)
	if kind == "" {
		kind, _ = rope["type"].(string)
	}
	switch kind {
	case "su", "longrope", "llama3":
		return best, key, nil
	}
	factor := 1.0
	if f, ok := rope["factor"].(json.Number); ok {
		if v, err := f.Float64(); err == nil && v > 0 {
			factor = v
		}
	}
	if kind == "yarn" {
		if o, ok := rope["original_max_position_embeddings"].(json.Number); ok {
			if v, err := o.Int64(); err == nil && v > 0 {
				best = int(v)
			}
		}
	}
	// A length past int64 (2^62 positions × 4, say) saturates: vLLM's
	// Python int has no bound, and the KV-cache check refuses it anyway.
	if scaled := float64(best) * factor; scaled < math.MaxInt64 {
		return int(scaled), key, nil
	}
	return math.MaxInt64, key, nil
}
