package profiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// embeddedModel names one embedded config.json (models/<folder>) and the
// HuggingFace ids that resolve to it; ids[0] is the canonical one.
type embeddedModel struct {
	folder string
	ids    []string
}

// embeddedModelIDs lists the embedded configs. Matching is case-insensitive
// and the folder name is accepted too.
var embeddedModelIDs = []embeddedModel{
	{"llama-2-7b-hf", []string{"meta-llama/Llama-2-7b-hf"}},
	{"llama-2-70b-hf", []string{"meta-llama/Llama-2-70b-hf"}},
	{"codellama-34b-instruct-hf", []string{"codellama/CodeLlama-34b-Instruct-hf"}},
	{"llama-3.1-8b-instruct", []string{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B",
		"meta-llama/Meta-Llama-3.1-8B-Instruct", "Meta-Llama-3.1-8B-Instruct"}},
	{"llama-3.1-70b-instruct", []string{"meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B",
		"meta-llama/Meta-Llama-3.1-70B-Instruct", "Meta-Llama-3.1-70B-Instruct"}},
	{"mixtral-8x7b-v0.1", []string{"mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"}},
	{"qwen2.5-7b-instruct", []string{"Qwen/Qwen2.5-7B-Instruct"}},
	{"qwen3-14b", []string{"Qwen/Qwen3-14B"}},
	{"qwen3-30b-a3b", []string{"Qwen/Qwen3-30B-A3B"}},
	{"mistral-nemo-instruct-2407", []string{"mistralai/Mistral-Nemo-Instruct-2407"}},
	{"yi-34b", []string{"01-ai/Yi-34B"}},
	{"llama-4-scout-17b-16e-instruct-fp8-dynamic", []string{"RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"}},
	// Multi-head latent attention (DeepSeek-V2-Lite); GLM-5.2 is known so
	// that it fails as unsupported (sparse attention) rather than unknown.
	{"deepseek-v2-lite", []string{"deepseek-ai/DeepSeek-V2-Lite"}},
	{"glm-5.2-fp8", []string{"zai-org/GLM-5.2-FP8"}},
}

// supportedArchitectures is what every "not supported" error offers instead.
const supportedArchitectures = "supported: dense Llama/Mistral/Qwen-style GQA, Mixtral/Qwen-MoE/Llama-4 MoE, and DeepSeek-V2/V3 multi-head latent attention with shared experts"

// EmbeddedModel reports whether LoadModel(idOrPath) reads an embedded
// config (a known id or folder name), not a file: its spec is then the
// same in every call of the process.
func EmbeddedModel(idOrPath string) bool {
	key := strings.ToLower(strings.TrimSpace(idOrPath))
	for _, m := range embeddedModelIDs {
		if key == m.folder || containsFold(m.ids, key) {
			return true
		}
	}
	return false
}

// LoadModel returns the spec of a known HuggingFace id (KnownModels, matched
// case-insensitively, or the embedded folder name such as llama-2-7b-hf), else
// of the config.json at idOrPath (a file, or a directory holding one).
// Architectures the predictor cannot price (sparse attention, interleaved
// dense/MoE layer stacks, configs lacking a required field) and
// quantization schemes it cannot read are errors.
func LoadModel(idOrPath string) (ModelSpec, error) {
	key := strings.ToLower(strings.TrimSpace(idOrPath))
	for _, m := range embeddedModelIDs {
		if key == m.folder || containsFold(m.ids, key) {
			if v, ok := embeddedSpecs.Load(m.folder); ok {
				spec := v.(ModelSpec)
				spec.ID = idOrPath
				return spec, nil
			}
			data, err := embeddedModels.ReadFile(path.Join("models", m.folder, "config.json"))
			if err != nil {
				return ModelSpec{}, fmt.Errorf("model %s: %w", idOrPath, err)
			}
			spec, err := parseModelConfig(idOrPath, data)
			if err == nil {
				embeddedSpecs.Store(m.folder, spec)
			}
			return spec, err
		}
	}
	file := idOrPath
	st, err := os.Stat(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return ModelSpec{}, fmt.Errorf("model %q: not a known model id nor an existing config.json path (known: %s)",
				idOrPath, strings.Join(KnownModels(), ", "))
		}
		return ModelSpec{}, fmt.Errorf("model %s: %w", idOrPath, err)
	}
	if st.IsDir() {
		file = filepath.Join(file, "config.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return ModelSpec{}, fmt.Errorf("model %s: %w", idOrPath, err)
	}
	spec, err := parseModelConfig(idOrPath, data)
	if err == nil && spec.Quant == nil {
		if spec.Quant, err = hfQuantConfig(filepath.Dir(file)); err != nil {
			return ModelSpec{}, fmt.Errorf("model %s: %w", idOrPath, err)
		}
	}
	return spec, err
}

// embeddedSpecs caches the parsed embedded configs by folder, so that
// every load of one model shares its Quant (deployments of the same model
// then share predictor templates, which key on the spec).
var embeddedSpecs sync.Map

func containsFold(ids []string, key string) bool {
	for _, id := range ids {
		if strings.EqualFold(id, key) {
			return true
		}
	}
	return false
}

// EmbeddedModels lists the canonical HuggingFace id of every embedded
// config, supported or not, sorted (LoadModel says why one is not).
func EmbeddedModels() []string {
	out := make([]string, 0, len(embeddedModelIDs))
	for _, m := range embeddedModelIDs {
		out = append(out, m.ids[0])
	}
	sort.Strings(out)
	return out
}

var knownModels struct {
	once sync.Once
	ids  []string
}

// KnownModels lists the canonical HuggingFace ids of the embedded configs that
// LoadModel supports, sorted.
func KnownModels() []string {
	knownModels.once.Do(func() {
		for _, m := range embeddedModelIDs {
			data, err := embeddedModels.ReadFile(path.Join("models", m.folder, "config.json"))
			if err != nil {
				continue
			}
			if _, err := parseModelConfig(m.ids[0], data); err == nil {
				knownModels.ids = append(knownModels.ids, m.ids[0])
			}
		}
		sort.Strings(knownModels.ids)
	})
	return append([]string(nil), knownModels.ids...)
}

// hfConfig is a config.json as a generic object. Numbers stay json.Number.
type hfConfig map[string]any

func (c hfConfig) has(key string) bool { v, ok := c[key]; return ok && v != nil }

func (c hfConfig) str(key string) string {
	s, _ := c[key].(string)
	return s
}

// int reads an integer field; absent or null gives (0, false).
func (c hfConfig) int(key string) (int, bool, error) {
	v, ok := c[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, false, fmt.Errorf("%s: want an integer, got %v", key, v)
	}
	i, err := n.Int64()
	if err != nil {
		return 0, false, fmt.Errorf("%s: want an integer, got %v", key, n)
	}
	return int(i), true, nil
}

func parseModelConfig(id string, data []byte) (ModelSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top hfConfig
	if err := dec.Decode(&top); err != nil {
		return ModelSpec{}, fmt.Errorf("model %s: parse config.json: %w", id, err)
	}
	spec := ModelSpec{ID: id, ModelType: top.str("model_type")}
	if archs, ok := top["architectures"].([]any); ok && len(archs) > 0 {
		spec.Architecture, _ = archs[0].(string)
	}
	// Multimodal wrappers (Llama-4) keep the language model in text_config;
	// its fields win, the architecture, model_type and quantization stay the wrapper's.
	c := hfConfig{}
	for k, v := range top {
		c[k] = v
	}
	if text, ok := top["text_config"].(map[string]any); ok {
		for k, v := range text {
			c[k] = v
		}
	}
	unsupported := func(why string) error {
		arch := spec.Architecture
		if arch == "" {
			arch = spec.ModelType
		}
		if arch == "" {
			return fmt.Errorf("model %s: config.json names no architecture (neither architectures nor model_type) and %s; %s", id, why, supportedArchitectures)
		}
		return fmt.Errorf("model %s: architecture %s (%s) is not supported; %s", id, arch, why, supportedArchitectures)
	}
	if c.has("index_topk") {
		return ModelSpec{}, unsupported("DeepSeek sparse attention (index_topk): no operator table prices its indexer")
	}
	var err error
	need := func(dst *int, key string) {
		if err != nil {
			return
		}
		v, ok, e := c.int(key)
		if e == nil && ok && v > 0 {
			e = checkDim(key, v)
		}
		switch {
		case e != nil:
			err = fmt.Errorf("model %s: config.json %w", id, e)
		case !ok || v <= 0:
			err = unsupported("config.json lacks " + key)
		default:
			*dst = v
		}
	}
	optional := func(dst *int, key string) {
		if err != nil {
			return
		}
		if v, ok, e := c.int(key); e != nil {
			err = fmt.Errorf("model %s: config.json %w", id, e)
		} else if ok {
			*dst = v
		}
	}
	// dim reads an optional size or count: absent or 0 leaves *dst, a
	// negative or implausibly large value is refused naming the key
	// (checkDim), before any byte count multiplies it.
	dim := func(dst *int, key string) {
		if err != nil {
			return
		}
		v, ok, e := c.int(key)
		if e == nil && ok {
			e = checkDim(key, v)
		}
		switch {
		case e != nil:
			err = fmt.Errorf("model %s: config.json %w", id, e)
		case ok:
			*dst = v
		}
	}
	need(&spec.HiddenSize, "hidden_size")
	need(&spec.NumLayers, "num_hidden_layers")
	need(&spec.NumHeads, "num_attention_heads")
	need(&spec.VocabSize, "vocab_size")
	dim(&spec.NumKVHeads, "num_key_value_heads")
	dim(&spec.HeadDim, "head_dim")
	optional(&spec.MaxPositionEmbeddings, "max_position_embeddings")
	if err == nil {
		var e error
		if spec.MaxModelLen, spec.MaxModelLenKey, e = derivedMaxLen(c, spec.ModelType); e != nil {
			err = fmt.Errorf("model %s: config.json %w", id, e)
		}
	}
	if _, isBool := c["sliding_window"].(bool); !isBool { // some configs write false for none
		optional(&spec.SlidingWindow, "sliding_window")
	}
	dim(&spec.NumExperts, "num_local_experts") // Mixtral, Llama-4
	dim(&spec.NumExperts, "num_experts")       // Qwen-MoE
	dim(&spec.NumExperts, "n_routed_experts")  // DeepSeek
	dim(&spec.NumExpertsPerToken, "num_experts_per_tok")
	if spec.NumExperts > 0 {
		if err := checkAllLayersMoE(c, unsupported); err != nil {
			return ModelSpec{}, err
		}
		dim(&spec.IntermediateSize, "intermediate_size")
		spec.MoEIntermediateSize = spec.IntermediateSize // Mixtral, Llama-4: experts use intermediate_size
		dim(&spec.MoEIntermediateSize, "moe_intermediate_size")
		dim(&spec.SharedExpertIntermediateSize, "shared_expert_intermediate_size") // Qwen2-MoE
		var shared int
		dim(&shared, "n_shared_experts") // DeepSeek: n shared experts of moe_intermediate_size
		spec.SharedExpertIntermediateSize += shared * spec.MoEIntermediateSize
		dim(&spec.FirstDenseLayers, "first_k_dense_replace")
		if strings.HasPrefix(spec.ModelType, "llama4") {
			// Llama-4's shared expert is an MLP of intermediate_size;
			// intermediate_size_mlp sizes its dense layers.
			spec.SharedExpertIntermediateSize = spec.IntermediateSize
			dim(&spec.IntermediateSize, "intermediate_size_mlp")
		}
		if err == nil && (spec.MoEIntermediateSize <= 0 || spec.NumExpertsPerToken <= 0) {
			err = unsupported("MoE config lacks moe_intermediate_size/intermediate_size or num_experts_per_tok")
		}
		if err == nil && spec.NumExpertsPerToken > spec.NumExperts {
			err = fmt.Errorf("model %s: config.json num_experts_per_tok: %d experts per token of %d (%s)", id,
				spec.NumExpertsPerToken, spec.NumExperts, expertsKey(c))
		}
		if err == nil && spec.FirstDenseLayers >= spec.NumLayers {
			err = unsupported(fmt.Sprintf("first_k_dense_replace %d leaves no MoE layer of %d", spec.FirstDenseLayers, spec.NumLayers))
		}
	} else {
		need(&spec.IntermediateSize, "intermediate_size")
	}
	dim(&spec.KVLoraRank, "kv_lora_rank")
	if spec.KVLoraRank > 0 {
		dim(&spec.QLoraRank, "q_lora_rank")
		need(&spec.QKNopeHeadDim, "qk_nope_head_dim")
		need(&spec.QKRopeHeadDim, "qk_rope_head_dim")
		need(&spec.VHeadDim, "v_head_dim")
	}
	dim(&spec.AttentionChunkSize, "attention_chunk_size")
	if spec.AttentionChunkSize > 0 {
		spec.NoPELayerInterval = 4 // transformers' Llama4TextConfig default no_rope_layer_interval
		optional(&spec.NoPELayerInterval, "no_rope_layer_interval")
		if layers := c["no_rope_layers"]; layers != nil {
			// An explicit list (1 = rope, 0 = NoPE); empty means the default.
			if arr, _ := layers.([]any); len(arr) > 0 {
				spec.NoPELayerInterval = 0
				for i, v := range arr {
					if n, _ := v.(json.Number); n.String() == "0" {
						spec.NoPELayerInterval = i + 1
						break
					}
				}
			}
		}
	}
	if err != nil {
		return ModelSpec{}, err
	}
	if spec.NumKVHeads == 0 {
		spec.NumKVHeads = spec.NumHeads
	}
	if spec.HeadDim == 0 {
		if spec.HiddenSize%spec.NumHeads != 0 {
			return ModelSpec{}, unsupported("no head_dim and hidden_size not a multiple of num_attention_heads")
		}
		spec.HeadDim = spec.HiddenSize / spec.NumHeads
	}
	if spec.NumHeads%spec.NumKVHeads != 0 {
		return ModelSpec{}, unsupported(fmt.Sprintf("num_attention_heads %d not a multiple of num_key_value_heads %d",
			spec.NumHeads, spec.NumKVHeads))
	}
	if use, ok := c["use_sliding_window"].(bool); ok && !use {
		spec.SlidingWindow = 0 // Qwen2/3 state a window but do not use it
	}
	spec.TieWordEmbeddings, _ = c["tie_word_embeddings"].(bool)
	spec.TorchDtype = c.str("torch_dtype")
	if spec.TorchDtype == "" {
		spec.TorchDtype = c.str("dtype") // newer transformers write "dtype"
	}
	spec.RotaryDim = spec.HeadDim
	if spec.IsMLA() {
		spec.RotaryDim = spec.QKRopeHeadDim
		spec.HeadDim = spec.QKNopeHeadDim + spec.QKRopeHeadDim
	}
	if f, ok := c["partial_rotary_factor"].(json.Number); ok {
		if v, e := f.Float64(); e == nil && v > 0 && v < 1 {
			spec.RotaryDim = int(float64(spec.HeadDim) * v)
		}
	}
	if vc, ok := top["vision_config"].(map[string]any); ok {
		spec.VisionParams = visionParams(hfConfig(vc), spec.HiddenSize)
	}
	if spec.Quant, err = parseQuant(top); err != nil {
		return ModelSpec{}, fmt.Errorf("model %s: config.json %w", id, err)
	}
	if err := checkSize(spec); err != nil {
		return ModelSpec{}, fmt.Errorf("model %s: config.json %w", id, err)
	}
	return spec, nil
}

// checkAllLayersMoE rejects MoE models whose stack interleaves dense and
// MoE layers; leading dense layers (first_k_dense_replace) are supported.
func checkAllLayersMoE(c hfConfig, unsupported func(string) error) error {
	if layers, ok := c["mlp_only_layers"].([]any); ok && len(layers) > 0 {
		return unsupported("mixed dense and MoE layers (mlp_only_layers)")
	}
	for _, key := range []string{"decoder_sparse_step", "interleave_moe_layer_step", "moe_layer_freq"} {
		if v, ok, _ := c.int(key); ok && v > 1 {
			return unsupported(fmt.Sprintf("mixed dense and MoE layers (%s %d)", key, v))
		}
	}
	return nil
}
