package predictor

import (
	"fmt"
	"strings"

	"frontier/profiles"
)

// BlockShardError is vLLM's refusal of fp8-block weights whose
// tensor-parallel shard cuts a quantization block: the deployment does
// not start (another split, or expert parallelism, may fix it).
type BlockShardError struct{ msg string }

// Error is vLLM's text, then the module and split Frontier found it at.
func (e *BlockShardError) Error() string { return e.msg }

// CheckBlockShards applies vLLM's shape checks to the weights stored in
// fp8 blocks (profiles.FormatFP8Block, block n × k from Quant.Block),
// layer by layer in the order vLLM builds them; nil when every shard
// holds whole blocks. The rules and texts are vLLM's
// (vllm/model_executor/layers/quantization/fp8.py Fp8MoEMethod.
// create_weights and utils/fp8_utils.py validate_fp8_block_shape):
//
//   - routed experts: the intermediate size per MoE rank (divided over
//     TP × DP ranks, whole under expert parallelism) must hold whole
//     blocks of n, and of k when it is split;
//   - row-parallel layers (o_proj, down_proj) under TP: their input
//     shard must hold whole blocks of k;
//   - column-parallel layers: under TP every output shard, and in a fused
//     layer (qkv_proj, gate_up_proj) every shard but the last even at
//     TP 1, must hold whole blocks of n.
func CheckBlockShards(cfg Config) error {
	m := cfg.Model
	q := m.Quant
	if !q.Quantized() || (q.Linear != profiles.FormatFP8Block && q.Experts != profiles.FormatFP8Block) {
		return nil
	}
	bn, bk := q.BlockDims()
	tp := int64(max(1, cfg.TP))
	moeTP := tp * int64(max(1, cfg.DP))
	if cfg.ExpertParallel {
		moeTP = 1
	}
	refuse := func(text string, size, block int64, where string) error {
		return &BlockShardError{fmt.Sprintf("%s = %d is not divisible by weight quantization %s. (%s)", text, size, block2(text, block), where)}
	}
	kvRepl := !m.IsMLA() && int64(m.NumKVHeads) < tp
	for _, w := range m.Weights() {
		if formatOf(q, w) != profiles.FormatFP8Block {
			continue
		}
		name := w.Name
		if w.Expert {
			inter := ceilDiv(int64(m.MoEIntermediateSize), moeTP)
			module := strings.TrimSuffix(strings.TrimSuffix(name, ".w13"), ".w2")
			where := fmt.Sprintf("%s over a MoE group of %d GPUs: --enable-expert-parallel keeps experts whole", module, moeTP)
			if moeTP == 1 {
				where = module
			}
			switch {
			case strings.HasSuffix(name, ".w13") && inter%bn != 0:
				return refuse("The output_size of gate's and up's weight", inter, bn, where)
			case strings.HasSuffix(name, ".w2") && moeTP > 1 && inter%bk != 0:
				return refuse("The input_size of down's weight", inter, bk, where)
			}
			continue
		}
		where := fmt.Sprintf("%s at tensor_parallel_size %d", name, tp)
		switch w.Split {
		case profiles.SplitRow:
			if in := w.In / tp; tp > 1 && in%bk != 0 {
				return refuse("Weight input_size_per_partition", in, bk, where)
			}
		case profiles.SplitColumn:
			out := w.Out / tp
			if kvRepl && (strings.HasSuffix(name, ".k_proj") || strings.HasSuffix(name, ".v_proj")) {
				out = int64(m.HeadDim)
			}
			// The last shard of a fused layer is exempt at TP 1.
			fusedHead := !m.IsMLA() && (strings.HasSuffix(name, ".q_proj") || strings.HasSuffix(name, ".k_proj")) ||
				strings.HasSuffix(name, ".gate_proj")
			if (tp > 1 || fusedHead) && out%bn != 0 {
				return refuse("Weight output_partition_size", out, bn, where)
			}
		}
	}
	return nil
}

// block2 names the block dimension a check divides by, as vLLM's text
// does: block_n for outputs, block_k for inputs.
func block2(text string, block int64) string {
	if strings.Contains(text, "input_size") {
		return fmt.Sprintf("block_k = %d", block)
	}
	return fmt.Sprintf("block_n = %d", block)
}
