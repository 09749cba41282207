package profiles

// Hardware is one GPU kind and the node it sits in. Figures come from the
// aiconfigurator system files (h100_sxm.yaml, h200_sxm.yaml) unless stated.
type Hardware struct {
	Name             string  // h100-sxm | h200-sxm | h800
	GPUName          string  // e.g. "NVIDIA H100 80GB HBM3"
	MemCapacityBytes int64   // HBM capacity, bytes
	MemBandwidth     float64 // HBM peak bandwidth, bytes/s
	BF16FLOPS        float64 // dense bf16 tensor-core peak, FLOP/s
	FP8FLOPS         float64 // dense fp8 tensor-core peak, FLOP/s
	GPUsPerNode      int
	IntraNodeBW      float64       // NVLink bytes/s per GPU, one direction
	InterNodeBW      float64       // network bytes/s per GPU, one direction
	P2PLatencySec    float64       // per-message latency, seconds
	NCCLMemBytes     map[int]int64 // NCCL buffer memory by GPU count (aiconfigurator misc.nccl_mem)
	TablesHardware   string        // whose operator tables it uses by default (h800 → h100-sxm)
}
