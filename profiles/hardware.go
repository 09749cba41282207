package profiles

import "strings"

// Hardware is one GPU kind and the node it sits in. Figures come from the
// aiconfigurator system files (<system>.yaml: h100_sxm, h200_sxm,
// b200_sxm, gb200, a100_sxm, l40s, rtx_pro_6000_server) unless stated.
type Hardware struct {
	Name             string  // h100-sxm | h200-sxm | h800 | b200-sxm | gb200 | a100-sxm | l40s | rtx-pro-6000
	GPUName          string  // the device name nvidia-smi and the tables' device column report
	MemCapacityBytes int64   // memory capacity of the system file, bytes
	MemBandwidth     float64 // HBM (GDDR) peak bandwidth, bytes/s
	BF16FLOPS        float64 // dense bf16 tensor-core peak, FLOP/s
	FP8FLOPS         float64 // dense fp8 tensor-core peak, FLOP/s (0 on Ampere)
	GPUsPerNode      int     // GPUs in one host (GB200: one compute tray)
	// NVLinkDomain is how many GPUs NVLink connects: one HGX board (8), or
	// GB200 NVL72's rack (72); 0 for PCIe-only GPUs (L40S, RTX PRO 6000).
	NVLinkDomain int
	// Interconnect names the GPU-to-GPU link: "NVLink" or "PCIe".
	Interconnect  string
	IntraNodeBW   float64       // NVLink (or PCIe) bytes/s per GPU, one direction
	InterNodeBW   float64       // network bytes/s per GPU, one direction
	P2PLatencySec float64       // per-message latency, seconds
	NCCLMemBytes  map[int]int64 // NCCL buffer memory by GPU count (aiconfigurator misc.nccl_mem)
	// SMVersion is the compute capability × 10 (sm_version: 80 Ampere, 89
	// Ada, 90 Hopper, 100 and 120 Blackwell).
	SMVersion int
	// TorchTotalBytes is the GPU memory vLLM sees (torch.cuda.mem_get_info
	// total), bytes: measured where we could, else nvidia-smi's total less
	// the driver's reservation (HardwareMemoryNote says which).
	TorchTotalBytes int64
	// System is the aiconfigurator system folder of its operator tables
	// (h800: h100_sxm's); TablesHardware names that preset.
	System         string
	TablesHardware string
}

// MaxEngineGPUs is the most GPUs one engine (TP × PP) may span: the
// NVLink domain where it exceeds a node (GB200 NVL72), else one node.
func (h Hardware) MaxEngineGPUs() int {
	return max(h.GPUsPerNode, h.NVLinkDomain)
}

// FullyConnected reports whether every GPU of a TP group of n reaches the
// others over NVLink (vLLM's custom all-reduce needs it beyond 2 GPUs).
func (h Hardware) FullyConnected(n int) bool { return h.NVLinkDomain >= n }

// SameNode reports whether n GPUs fit one host (vLLM's custom all-reduce
// works within a host only).
func (h Hardware) SameNode(n int) bool { return n <= h.GPUsPerNode }

// ServeBatchDefaults are `vllm serve`'s max_num_batched_tokens and
// max_num_seqs for this GPU: 8192 and 1024 on a GPU with at least 70 GiB
// that is not an A100, else 2048 and 256 (vLLM EngineArgs batch
// defaults; the A100 exception is vLLM PR #17885, a throughput
// regression with the larger budget).
func (h Hardware) ServeBatchDefaults() (maxNumBatchedTokens, maxNumSeqs int) {
	if h.TorchTotalBytes >= 70<<30 && !strings.Contains(strings.ToLower(h.GPUName), "a100") {
		return 8192, 1024
	}
	return 2048, 256
}
