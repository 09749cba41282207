package profiles

import (
	"fmt"
	"math"
)

// The physical maximum of a table latency. A row says how long one kernel
// (or collective) took on a GPU; whatever the GPU, it cannot take longer
// than its own work on a device a million times slower than an H100:
//
//	max latency = FLOPs / SlowestFLOPS + bytes / SlowestBytesPerSec + KernelAllowanceMs
//
// with the FLOPs and bytes of the row's shape counted generously (4-byte
// elements, every operand read and written once, the whole causal or MoE
// work before any parallel split). An H100-SXM does 989 TFLOP/s dense bf16
// and reads 3.35 TB/s; a kernel launch costs microseconds, not seconds. A
// value past the bound is a unit error or a corrupt file (the issue 10
// attack wrote 1e12 ms and 1e9 ms GEMMs, which ran with negative step
// times and wrapped the clock) and is refused at load, naming the table,
// row and value. A table a thousand times slower than an H200 still loads.
const (
	SlowestFLOPS       = 1e9  // FLOP/s
	SlowestBytesPerSec = 1e9  // bytes/s
	KernelAllowanceMs  = 1000 // fixed cost allowed per row, ms
)

// maxLatencyMs is the bound for work of flops FLOPs moving bytes bytes.
func maxLatencyMs(flops, bytes float64) float64 {
	return flops/SlowestFLOPS*1e3 + bytes/SlowestBytesPerSec*1e3 + KernelAllowanceMs
}

// checkLatency refuses latency or eager past maxMs; shape names the row
// (called only then: a table loads thousands of rows that pass).
func checkLatency(latency, eager, maxMs float64, shape func() string) error {
	for _, v := range []struct {
		col string
		ms  float64
	}{{"latency", latency}, {"eager_latency", eager}} {
		if v.ms > maxMs || math.IsInf(v.ms, 0) {
			return fmt.Errorf("%s: %g ms is past the physical maximum %.4g ms for %s (its work at %g GFLOP/s and %g GB/s plus %g s; see profiles/bounds.go)",
				v.col, v.ms, maxMs, shape(), SlowestFLOPS/1e9, SlowestBytesPerSec/1e9, KernelAllowanceMs/1e3)
		}
	}
	return nil
}

func gemmBound(r GemmRow) error {
	m, n, k := float64(r.M), float64(r.N), float64(r.K)
	return checkLatency(r.LatencyMs, r.EagerMs, maxLatencyMs(2*m*n*k, 4*(m*k+k*n+m*n)),
		func() string { return fmt.Sprintf("gemm m=%d n=%d k=%d", r.M, r.N, r.K) })
}

// attnBound bounds context (prefill) rows: batch × the causal pairs of isl
// new tokens after step cached ones, per query head; QKᵀ and PV are a
// multiply-add each per pair per head dimension. Generation rows decode isl
// tokens against step of context: isl × (step + isl) pairs bounds them too.
func attnBound(r AttnRow) error {
	b, isl, step := float64(r.BatchSize), float64(r.ISL), float64(r.Step)
	h, kv, d := float64(r.NumHeads), float64(r.NumKVHeads), float64(r.HeadDim)
	pairs := isl * (step + isl)
	return checkLatency(r.LatencyMs, r.EagerMs, maxLatencyMs(4*d*h*b*pairs, 4*b*(isl+step)*(h+2*kv)*d),
		func() string {
			return fmt.Sprintf("attention batch=%d isl=%d step=%d heads=%d/%d head_dim=%d", r.BatchSize, r.ISL, r.Step, r.NumHeads, r.NumKVHeads, r.HeadDim)
		})
}

// moeBound: every token through top-k experts of three hidden × inter
// GEMMs, all experts' weights read.
func moeBound(r MoERow) error {
	t, hid, inter := float64(r.NumTokens), float64(r.Hidden), float64(r.Inter)
	topk, e := float64(r.TopK), float64(r.NumExperts)
	return checkLatency(r.LatencyMs, r.EagerMs, maxLatencyMs(6*t*topk*hid*inter, 4*(3*e*hid*inter+t*hid*(2+topk))),
		func() string {
			return fmt.Sprintf("moe tokens=%d hidden=%d inter=%d top-%d of %d experts", r.NumTokens, r.Hidden, r.Inter, r.TopK, r.NumExperts)
		})
}

// commBound: the message crosses every GPU's link once, 4-byte elements.
func commBound(r CommRow) error {
	return checkLatency(r.LatencyMs, r.EagerMs, maxLatencyMs(0, 4*float64(r.MessageSize)*float64(max(r.NumGPUs, 1))),
		func() string {
			return fmt.Sprintf("%s %s message=%d gpus=%d", r.Op, r.Backend, r.MessageSize, r.NumGPUs)
		})
}

// opBound: elementwise work on tokens × width, a few FLOPs and 4 reads and
// writes of 4-byte elements each.
func opBound(r OpRow) error {
	tw := float64(r.Tokens) * float64(r.Width)
	return checkLatency(r.LatencyMs, r.EagerMs, maxLatencyMs(10*tw, 16*tw),
		func() string { return fmt.Sprintf("%s tokens=%d width=%d", r.Op, r.Tokens, r.Width) })
}
