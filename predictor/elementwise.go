package predictor

// Memory-bound operators the imported tables lack (RMSNorm, rotary,
// SiLU-and-mul, embedding gather, sampler) are priced by the bytes they
// move: bytes / (HBM bandwidth × MemEfficiency) + KernelFloorNs per kernel.
const (
	// MemEfficiency is the achievable fraction of peak HBM bandwidth for
	// streaming kernels (aiconfigurator h100_sxm.yaml
	// mem_bw_empirical_scaling_factor = 0.8).
	MemEfficiency = 0.8
	// KernelFloorNs is the shortest a small kernel runs on Hopper, ns
	// (aiconfigurator mem_empirical_constant_latency = 3 µs).
	KernelFloorNs = 3000.0
)

// memBoundMs prices a kernel moving bytes on a GPU with bw bytes/s.
func memBoundMs(bytes, bw float64) float64 {
	return (bytes/(bw*MemEfficiency)*1e9 + KernelFloorNs) / 1e6
}
