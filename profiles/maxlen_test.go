package profiles

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Defect 6: vLLM's derived max_model_len (vllm/config/model.py,
// _get_and_verify_max_len): the smallest length key, model_max_length
// replacing it when set, rope scaling except su/longrope/llama3, yarn from
// original_max_position_embeddings; none = 0 (vLLM: 2048 with a warning);
// a key ≤ 0 refused, naming it.
func TestDerivedMaxModelLen(t *testing.T) {
	const base = `"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,` +
		`"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000`
	tests := []struct {
		name, extra string
		want        int
		key, err    string
	}{
		{"none", ``, 0, "", ""},
		{"max_position_embeddings", `,"max_position_embeddings":4096`, 4096, "max_position_embeddings", ""},
		{"the smallest wins", `,"max_position_embeddings":8192,"seq_length":4096,"n_positions":6000`, 4096, "seq_length", ""},
		{"model_max_length replaces", `,"max_position_embeddings":4096,"model_max_length":8192`, 8192, "model_max_length", ""},
		{"linear rope × factor", `,"max_position_embeddings":4096,"rope_scaling":{"type":"linear","factor":2.0}`, 8192, "max_position_embeddings", ""},
		{"yarn from the original length", `,"max_position_embeddings":131072,"rope_scaling":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}`, 131072, "max_position_embeddings", ""},
		{"llama3 rope already counted", `,"max_position_embeddings":131072,"rope_scaling":{"rope_type":"llama3","factor":8.0}`, 131072, "max_position_embeddings", ""},
		// 2^62 × 4 is past int64: on main the float→int conversion made it
		// −2^63, a negative max_model_len that failed every request.
		{"rope past int64 saturates", `,"max_position_embeddings":4611686018427387904,"rope_scaling":{"type":"linear","factor":4.0}`, math.MaxInt64, "max_position_embeddings", ""},
		{"zero refused", `,"max_position_embeddings":0`, 0, "", "config.json max_position_embeddings: must be > 0 (vLLM derives max_model_len from it), got 0"},
		{"negative refused", `,"max_position_embeddings":4096,"max_seq_len":-1`, 0, "", "config.json max_seq_len: must be > 0 (vLLM derives max_model_len from it), got -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "config.json", "{"+base+tc.extra+"}")
			m, err := LoadModel(dir)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, m.MaxModelLen)
			assert.Equal(t, tc.key, m.MaxModelLenKey)
		})
	}
	assert.Equal(t, "The model's config.json does not contain any of the following keys to determine the original maximum length of the model: "+
		"['max_position_embeddings', 'n_positions', 'max_seq_len', 'seq_length', 'model_max_length', 'max_target_positions', 'max_sequence_length', 'max_seq_length', 'seq_len']. "+
		"Assuming the model's maximum length is 2048.", NoMaxLenWarning())
}
