package profiles

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// WeightFormat is how vLLM stores one quantized linear (or expert) weight
// after loading; it sets the weight bytes (WeightBytes) and the operator
// table rows that price the GEMM (GemmDtype, MoEDtype).
type WeightFormat string

// The weight formats of the quantization methods Frontier reads.
const (
	// FormatBF16 is an unquantized 16-bit weight (bf16 or fp16): 2 bytes.
	FormatBF16 WeightFormat = "bf16"
	// FormatFP8Tensor is fp8 e4m3 with one fp32 scale per tensor (per
	// fused shard): vLLM's fp8 method, modelopt FP8, compressed-tensors
	// "tensor" strategy, and --quantization fp8 (online).
	FormatFP8Tensor WeightFormat = "fp8"
	// FormatFP8Channel is fp8 e4m3 with one fp32 scale per output channel:
	// compressed-tensors "channel" (the FP8-dynamic checkpoints) and
	// fbgemm_fp8.
	FormatFP8Channel WeightFormat = "fp8_channel"
	// FormatFP8Block is fp8 e4m3 with one fp32 scale per 128 × 128 block
	// (weight_block_size; DeepSeek-V3 style).
	FormatFP8Block WeightFormat = "fp8_block"
	// FormatInt4 is 4-bit integer weights with an fp16 scale (and, when
	// asymmetric, a 4-bit zero point) per group of GroupSize inputs:
	// AWQ, GPTQ, compressed-tensors W4A16 (Marlin kernels).
	FormatInt4 WeightFormat = "int4"
	// FormatInt8 is 8-bit integer weights (W8A8 or W8A16), one fp32 scale
	// per output channel.
	FormatInt8 WeightFormat = "int8"
	// FormatNVFP4 is 4-bit float (e2m1) with an fp8 scale per 16 weights
	// and an fp32 global scale: modelopt NVFP4, compressed-tensors nvfp4.
	FormatNVFP4 WeightFormat = "nvfp4"
	// FormatMXFP4 is 4-bit float with an e8m0 scale per 32 weights
	// (OCP MX; gpt-oss experts).
	FormatMXFP4 WeightFormat = "mxfp4"
)

// Quant is a model's weight quantization as vLLM loads it: the method,
// the format of its quantized linear layers and experts, and the modules
// it leaves in 16 bits. The embedding, the LM head, the MoE router and
// the norms are never quantized by these methods (vLLM quantizes
// LinearBase and FusedMoE layers only; routers are built with
// quant_config=None); Ignore lists what the checkpoint keeps 16-bit on
// top of that.
type Quant struct {
	// Method is vLLM's quantization method name: fp8, fbgemm_fp8,
	// compressed-tensors, modelopt, modelopt_fp4, awq, awq_marlin, gptq,
	// gptq_marlin, mxfp4.
	Method string
	// Linear is the format of quantized dense linear layers (attention
	// projections, dense MLPs, shared experts); FormatBF16 when the method
	// quantizes experts only (mxfp4).
	Linear WeightFormat
	// Experts is the format of the routed experts of MoE layers.
	Experts WeightFormat
	// Block is FormatFP8Block's weight_block_size [n, k] (output rows ×
	// input columns per scale); zero means 128 × 128 (BlockDims).
	Block [2]int
	// GroupSize is the inputs per scale of FormatInt4 (128 typically).
	GroupSize int
	// ZeroPoints: asymmetric int4 (AWQ) stores a 4-bit zero per group.
	ZeroPoints bool
	// Activations is the input activations' quantized type where the
	// config states one ("int" or "float" for compressed-tensors W8A8);
	// "" for weight-only or unstated.
	Activations string
	// Ignore lists the modules kept 16-bit, as the config writes them
	// (compressed-tensors "ignore", Fp8Config "ignored_layers", modelopt
	// "exclude_modules", "modules_to_not_convert"): full names, parent
	// modules, or "re:" regular expressions.
	Ignore []string
	// Source says where it came from: "quantization_config" or
	// "--quantization" (online quantization of a 16-bit checkpoint).
	Source string
	// KVCache is the KV cache dtype the checkpoint asks for when
	// --kv-cache-dtype is auto: "fp8" (or "nvfp4") for a ModelOpt
	// checkpoint whose kv_cache_quant_algo or kv_cache_scheme says so
	// (vllm/utils/torch_utils.py resolve_kv_cache_dtype_string), else "".
	KVCache string

	ignoreRE []*regexp.Regexp
	// ignoreStems holds moduleStem of every plain (not "re:") Ignore
	// entry, and ignoreFrom the Ignore slice they were made from
	// (compileIgnore): Skips compares against them without building a
	// string per entry and call. A capacity search on Llama-4-Scout
	// FP8-dynamic (449 entries) spent ~70 % of its CPU time in Skips
	// concatenating stem+"." for every entry of every module asked.
	ignoreStems map[string]struct{}
	ignoreFrom  []string
	// substr: an Ignore entry also matches as a substring of the module
	// name (AWQ: is_layer_skipped_awq; ModelOpt: is_layer_excluded).
	substr bool
	// wildcard: Ignore entries are fnmatch patterns (ModelOpt).
	wildcard bool
}

// Quantized reports whether any weight is quantized.
func (q *Quant) Quantized() bool { return q != nil && q.Method != "" }

// knownQuantMethods are the vLLM quantization methods Frontier reads, with
// what they mean; --quantization and quant_method accept these names.
var knownQuantMethods = []string{"awq", "awq_marlin", "compressed-tensors", "fbgemm_fp8", "fp8", "gptq",
	"gptq_marlin", "modelopt", "modelopt_fp4", "mxfp4"}

// KnownQuantMethods lists the quantization methods Frontier reads, sorted.
func KnownQuantMethods() []string { return append([]string(nil), knownQuantMethods...) }

// IsQuantMethod reports whether method is a vLLM quantization method
// Frontier knows: one it prices (KnownQuantMethods) or one it recognises
// and cannot price (refused with the kernels it lacks).
func IsQuantMethod(method string) bool {
	_, unpriced := unpricedQuantMethods[method]
	return unpriced || slices.Contains(knownQuantMethods, method)
}

// unpricedQuantMethods are vLLM methods Frontier recognises but cannot
// price (their kernels are in no operator table).
var unpricedQuantMethods = map[string]string{
	"bitsandbytes":   "bitsandbytes NF4/int8 kernels",
	"gguf":           "GGUF dequantizing kernels",
	"experts_int8":   "int8 expert kernels",
	"ptpc_fp8":       "per-token-per-channel fp8 (ROCm) kernels",
	"quark":          "AMD Quark kernels",
	"torchao":        "torchao kernels",
	"hqq":            "HQQ kernels",
	"bitblas":        "BitBLAS kernels",
	"marlin":         "Marlin kernels",
	"gptq_marlin_24": "2:4 sparse Marlin kernels",
	"deepspeedfp":    "DeepSpeed fp kernels",
	"inc":            "Intel Neural Compressor kernels",
	"auto-round":     "AutoRound kernels",
	"moe_wna16":      "MoE WNA16 kernels",
	"rtn":            "RTN kernels",
	"petit_nvfp4":    "Petit NVFP4 (ROCm) kernels",
}

// unknownQuantError is the refusal for a method Frontier does not read;
// key names where the user wrote it.
func unknownQuantError(key, method string) error {
	if why, ok := unpricedQuantMethods[method]; ok {
		return fmt.Errorf("%s: quantization method %q is not priced: no operator table measures vLLM's %s (priced: %s)",
			key, method, why, strings.Join(knownQuantMethods, ", "))
	}
	unset := ""
	if strings.HasSuffix(key, "quantization") { // a flag or key the user wrote, not a config.json's quant_method
		unset = "; or null, --quantization None: the checkpoint's own, as vLLM reads an unset optional argument"
	}
	return fmt.Errorf("%s: unknown quantization method %q (allowed: %s%s)", key, method, strings.Join(knownQuantMethods, ", "), unset)
}

// QuantFromFlag is the quantization `vllm serve --quantization METHOD`
// asks of a checkpoint without quantization_config: vLLM quantizes only
// fp8 online (per-tensor fp8 weights, dynamic activation scales; every
// linear layer and expert, never the embedding, LM head or router). The
// other methods need a checkpoint quantized that way. flag is what the
// error names ("--quantization" or "deployment.quantization").
func QuantFromFlag(flag, method string) (*Quant, error) {
	if !slices.Contains(knownQuantMethods, method) {
		return nil, unknownQuantError(flag, method)
	}
	if method != "fp8" {
		return nil, fmt.Errorf("%s %s: the model's config.json has no quantization_config; vLLM quantizes a 16-bit checkpoint online only with fp8 (a checkpoint quantized with %s carries its own quantization_config)", flag, method, method)
	}
	return &Quant{Method: "fp8", Linear: FormatFP8Tensor, Experts: FormatFP8Tensor, Source: "--quantization"}, nil
}

// CheckQuantFlag applies vLLM's rule for --quantization on a checkpoint
// that carries quantization_config (vllm/config/model.py
// _verify_quantization): the same method, or a kernel variant vLLM
// upgrades it to (awq → awq_marlin, gptq → gptq_marlin), is accepted;
// another is refused with vLLM's words.
func CheckQuantFlag(flag, method string, q *Quant) error {
	if !slices.Contains(knownQuantMethods, method) {
		return unknownQuantError(flag, method)
	}
	same := method == q.Method || method+"_marlin" == q.Method || q.Method+"_marlin" == method ||
		(q.Method == "modelopt_fp4" && method == "modelopt")
	if !same {
		return fmt.Errorf("%s: Quantization method specified in the model config (%s) does not match the quantization method specified in the `quantization` argument (%s).", flag, q.Method, method)
	}
	return nil
}

// parseQuant reads a config.json quantization_config (nil when absent).
// Errors name the key: quantization_config.quant_method for an unknown
// method, the offending field for a scheme vLLM's method cannot load.
func parseQuant(top hfConfig) (*Quant, error) {
	v := quantConfigOf(top)
	if v == nil {
		return nil, nil
	}
	raw, ok := v.(map[string]any)
	if !ok {
		// vLLM reads it with .get: anything but an object fails there.
		if s, isStr := v.(string); isStr {
			v = fmt.Sprintf("%q", s)
		}
		return nil, fmt.Errorf("quantization_config: want an object with quant_method, got %v", v)
	}
	qc := hfConfig(raw)
	method := strings.ToLower(qc.str("quant_method"))
	if method == "" {
		// ModelOpt's hf_quant_config.json names no method: vLLM's
		// _parse_quant_hf_config sets it from the producer.
		if p, _ := qc["producer"].(map[string]any); p != nil && p["name"] == "modelopt" {
			method = "modelopt"
		}
	}
	q := &Quant{Method: method, Source: "quantization_config"}
	key := "quantization_config"
	switch method {
	case "fp8":
		q.Linear = FormatFP8Tensor
		if qc.has("weight_block_size") {
			q.Linear = FormatFP8Block
			if err := readBlock(qc["weight_block_size"], &q.Block); err != nil {
				return nil, fmt.Errorf("%s.weight_block_size: %w", key, err)
			}
		}
		q.Experts = q.Linear
		q.Ignore = append(stringList(qc["ignored_layers"]), stringList(qc["modules_to_not_convert"])...)
	case "fbgemm_fp8":
		q.Linear, q.Experts = FormatFP8Channel, FormatFP8Channel
		q.Ignore = stringList(qc["modules_to_not_convert"])
	case "awq", "awq_marlin", "gptq", "gptq_marlin":
		bits, _, err := qc.int("bits")
		if err == nil && bits == 0 {
			bits, _, err = qc.int("w_bit") // AutoAWQ spelling
		}
		if err != nil {
			return nil, fmt.Errorf("%s.%w", key, err)
		}
		switch bits {
		case 4:
			q.Linear = FormatInt4
		case 8:
			q.Linear = FormatInt8
		default:
			return nil, fmt.Errorf("%s.bits: %s with %d-bit weights is not priced (4 or 8)", key, method, bits)
		}
		q.Experts = q.Linear
		q.GroupSize, err = groupSize(qc, "group_size")
		if err == nil && q.GroupSize == 0 {
			q.GroupSize, err = groupSize(qc, "q_group_size") // AutoAWQ spelling
		}
		if err != nil {
			return nil, fmt.Errorf("%s.%w", key, err)
		}
		if strings.HasPrefix(method, "awq") {
			q.ZeroPoints = true
			if zp, ok := qc["zero_point"].(bool); ok {
				q.ZeroPoints = zp
			}
		} else if sym, ok := qc["sym"].(bool); ok {
			q.ZeroPoints = !sym
		}
		q.Ignore = stringList(qc["modules_to_not_convert"])
		q.substr = strings.HasPrefix(method, "awq")
	case "mxfp4":
		// vLLM's Mxfp4Config quantizes FusedMoE layers only; linear
		// layers stay 16-bit (gpt-oss).
		q.Linear, q.Experts = FormatBF16, FormatMXFP4
		q.Ignore = stringList(qc["modules_to_not_convert"])
	case "modelopt", "modelopt_fp4":
		// vLLM's ModelOptQuantConfigBase.from_config: the hf_quant_config
		// form keeps everything under "quantization" (exclude_modules),
		// config.json's compressed-tensors-style form at the top
		// ("ignore"); entries match exactly, as substrings and as fnmatch
		// wildcards (is_layer_excluded).
		inner := qc
		q.Ignore = append(stringList(qc["exclude_modules"]), stringList(qc["ignore"])...)
		if sub, ok := qc["quantization"].(map[string]any); ok && qc.str("quant_algo") == "" {
			inner = hfConfig(sub)
			q.Ignore = append(stringList(sub["exclude_modules"]), q.Ignore...)
		}
		algo := strings.ToUpper(inner.str("quant_algo"))
		q.substr, q.wildcard = true, true
		q.KVCache = modelOptKVCache(qc, inner)
		switch {
		case algo == "FP8":
			q.Linear = FormatFP8Tensor
		case algo == "FP8_PER_CHANNEL_PER_TOKEN":
			q.Linear = FormatFP8Channel
		case algo == "NVFP4" || method == "modelopt_fp4":
			q.Method, q.Linear = "modelopt_fp4", FormatNVFP4
		default:
			return nil, fmt.Errorf("%s.quant_algo: modelopt %q is not priced (FP8, FP8_PER_CHANNEL_PER_TOKEN, NVFP4)", key, algo)
		}
		q.Experts = q.Linear
	case "compressed-tensors":
		if err := parseCompressedTensors(qc, q); err != nil {
			return nil, err
		}
	case "":
		return nil, fmt.Errorf("%s.quant_method: missing (allowed: %s)", key, strings.Join(knownQuantMethods, ", "))
	default:
		return nil, unknownQuantError(key+".quant_method", method)
	}
	if err := q.compileIgnore(); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return q, nil
}

// parseCompressedTensors reads a compressed-tensors scheme: the config
// group that targets Linear layers sets the format.
func parseCompressedTensors(qc hfConfig, q *Quant) error {
	key := "quantization_config.config_groups"
	groups, _ := qc["config_groups"].(map[string]any)
	if len(groups) == 0 {
		return fmt.Errorf("%s: missing (compressed-tensors needs one scheme)", key)
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	pick := names[0]
	for _, n := range names {
		g, _ := groups[n].(map[string]any)
		if slices.Contains(stringList(g["targets"]), "Linear") {
			pick = n
			break
		}
	}
	g, _ := groups[pick].(map[string]any)
	w := hfConfig(asMap(g["weights"]))
	q.Activations = hfConfig(asMap(g["input_activations"])).str("type")
	bits, _, _ := w.int("num_bits")
	kind, strategy := w.str("type"), w.str("strategy")
	gkey := key + "." + pick + ".weights"
	switch {
	case kind == "float" && bits == 8 && strategy == "block":
		q.Linear = FormatFP8Block
	case kind == "float" && bits == 8 && strategy == "channel":
		q.Linear = FormatFP8Channel
	case kind == "float" && bits == 8:
		q.Linear = FormatFP8Tensor
	case kind == "float" && bits == 4:
		q.Linear = FormatNVFP4
		if gs, _, _ := w.int("group_size"); gs == 32 {
			q.Linear = FormatMXFP4
		}
	case kind == "int" && bits == 4:
		q.Linear = FormatInt4
		var err error
		if q.GroupSize, err = groupSize(w, "group_size"); err != nil {
			return fmt.Errorf("%s.%w", gkey, err)
		}
		if sym, ok := w["symmetric"].(bool); ok {
			q.ZeroPoints = !sym
		}
	case kind == "int" && bits == 8:
		q.Linear = FormatInt8
	default:
		return fmt.Errorf("%s: %s %d-bit weights (strategy %q) are not priced (fp8 tensor/channel/block, int4 group, int8, nvfp4)",
			gkey, kind, bits, strategy)
	}
	q.Experts = q.Linear
	q.Ignore = stringList(qc["ignore"])
	return nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// stringList reads a JSON array of strings (nil when absent).
func stringList(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// groupSize reads an int4 scheme's inputs per scale from key of qc: -1
// (one group per row) or > 0, 0 when absent; an error names the key.
func groupSize(qc hfConfig, key string) (int, error) {
	g, _, err := qc.int(key)
	if err == nil && g < -1 {
		err = fmt.Errorf("%s: must be -1 (one group per row) or > 0, got %d", key, g)
	}
	return g, err
}

// FormatOf is the stored format of a linear module: the method's Linear
// format, or FormatBF16 when unquantized or skipped.
func (q *Quant) FormatOf(module string) WeightFormat {
	if !q.Quantized() || q.Linear == "" || q.Skips(module) {
		return FormatBF16
	}
	return q.Linear
}

// ExpertFormatOf is the stored format of a MoE layer's routed experts
// (module is the experts' parent, e.g. "model.layers.3.mlp.experts").
func (q *Quant) ExpertFormatOf(module string) WeightFormat {
	if !q.Quantized() || q.Experts == "" || q.Skips(module) {
		return FormatBF16
	}
	return q.Experts
}

// GemmDtype is the gemm_perf gemm_dtype that prices a dense GEMM with
// weights in format f ("" when no aiconfigurator GEMM table measures it:
// int4/int8 weight-only Marlin, MXFP4 linear).
func GemmDtype(f WeightFormat) string {
	switch f {
	case FormatBF16:
		return "bfloat16"
	case FormatFP8Tensor, FormatFP8Channel:
		return "fp8"
	case FormatFP8Block:
		return "fp8_block"
	case FormatNVFP4:
		return "nvfp4"
	}
	return ""
}

// MoEDtypes are the moe_perf moe_dtype values that can price experts in
// format f, preferred first ("" entries never appear).
func MoEDtypes(f WeightFormat) []string {
	switch f {
	case FormatBF16:
		return []string{"bfloat16"}
	case FormatFP8Tensor, FormatFP8Channel:
		return []string{"fp8"}
	case FormatFP8Block:
		return []string{"fp8_block"}
	case FormatInt4:
		return []string{"int4_wo"}
	case FormatMXFP4:
		return []string{"w4a16_mxfp4", "w4a8_mxfp4_mxfp8"}
	case FormatNVFP4:
		return []string{"nvfp4"}
	}
	return nil
}

// Describe is a short text of the quantization for the summary, e.g.
// "fp8 per-channel (compressed-tensors)" or "fp8 per-tensor (fp8, online)".
func (q *Quant) Describe() string {
	if !q.Quantized() {
		return "bf16"
	}
	f := q.Linear
	if f == FormatBF16 || f == "" {
		f = q.Experts
	}
	var what string
	switch f {
	case FormatFP8Tensor:
		what = "fp8 per-tensor"
	case FormatFP8Channel:
		what = "fp8 per-channel"
	case FormatFP8Block:
		what = "fp8 128×128 blocks"
	case FormatInt4:
		what = fmt.Sprintf("int4 group %d", q.GroupSize)
	default:
		what = string(f)
	}
	src := q.Method
	if q.Source == "--quantization" {
		src += ", online"
	}
	return fmt.Sprintf("%s (%s)", what, src)
}

// BlockDims is the fp8 block shape, output rows × input columns
// (weight_block_size; vLLM's DeepSeek-style default 128 × 128).
func (q *Quant) BlockDims() (n, k int64) {
	if q == nil || q.Block[0] <= 0 || q.Block[1] <= 0 {
		return 128, 128
	}
	return int64(q.Block[0]), int64(q.Block[1])
}
