package profiles

import (
	"fmt"
	"math"
)

// Bounds on a config.json's sizes, so that every byte count Frontier
// derives from them (weights per rank, KV bytes per token, activations)
// is exact in int64 and every per-layer list is small. They are far
// above any published model: the largest layer counts are ~126 (Llama-3.1
// 405B) to a few hundred, expert counts 8–512, hidden and intermediate
// sizes ≤ 53,248 and vocabularies ≤ 262,144. A value past them is a typo
// or a unit error, refused naming its key.
const (
	// MaxConfigLayers bounds num_hidden_layers.
	MaxConfigLayers = 1 << 14
	// MaxConfigExperts bounds the routed experts and top-k.
	MaxConfigExperts = 1 << 16
	// MaxConfigDim bounds every other size (hidden, intermediate,
	// vocabulary, heads, head and latent dimensions, window lengths).
	MaxConfigDim = 1 << 24
	// MaxConfigParams bounds the parameters of the language model and
	// vision tower together: 2^49 (5.6e14) parameters, 1 PiB in 16 bits,
	// so weight bytes with their scales stay far inside int64.
	MaxConfigParams = 1 << 49
)

// checkDim refuses a negative size, or one past its bound, for config key.
func checkDim(key string, v int) error {
	limit := MaxConfigDim
	switch key {
	case "num_hidden_layers":
		limit = MaxConfigLayers
	case "num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "n_shared_experts":
		limit = MaxConfigExperts
	}
	switch {
	case v < 0:
		return fmt.Errorf("%s: must be ≥ 0, got %d", key, v)
	case v > limit:
		return fmt.Errorf("%s: must be ≤ %d, got %d", key, limit, v)
	}
	return nil
}

// expertsKey is the config key that gave the routed expert count.
func expertsKey(c hfConfig) string {
	for _, k := range []string{"n_routed_experts", "num_experts", "num_local_experts"} {
		if c.has(k) {
			return k
		}
	}
	return "num_experts"
}

// checkSize refuses a model past MaxConfigParams, counted in float64 so
// that the count itself cannot wrap (each dimension is already bounded by
// checkDim, so every Weight's Out and In fit int64).
func checkSize(m ModelSpec) error {
	n := float64(m.VisionParams)
	for _, w := range m.weights(false) {
		n += float64(w.Out) * float64(w.In) * float64(w.Count)
	}
	if n > MaxConfigParams {
		return fmt.Errorf("describes %.3g parameters, past what Frontier counts exactly (at most %.3g, 1 PiB in 16 bits)", n, float64(MaxConfigParams))
	}
	if math.IsNaN(n) {
		return fmt.Errorf("describes an uncountable model")
	}
	return nil
}
