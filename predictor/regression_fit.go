package predictor

import (
	"math"
	"strings"

	"frontier/profiles"
)

// Regressions computes the physical features of the operator-table
// regressions for one set of tables on one GPU: a kernel's FLOPs at the
// dtype's tensor-core peak and its bytes at the HBM bandwidth (from the
// hardware spec), the longer of the two being its roofline time.
type Regressions struct {
	t  *profiles.Tables
	hw profiles.Hardware
}

// regressionKey identifies one set of tables on one GPU.
type regressionKey struct {
	t  *profiles.Tables
	hw string
}

// elemBytes is the storage of one weight of a table dtype, bytes.
func elemBytes(dtype string) float64 {
	switch {
	case strings.HasPrefix(dtype, "fp8"), dtype == "int8":
		return 1
	case strings.Contains(dtype, "4"):
		return 0.5
	}
	return 2
}

// peakFor is the tensor-core peak of a table dtype, FLOP/s.
func (r *Regressions) peakFor(dtype string) float64 {
	if strings.HasPrefix(dtype, "fp8") && r.hw.FP8FLOPS > 0 {
		return r.hw.FP8FLOPS
	}
	return r.hw.BF16FLOPS
}

// gemmRoof is a GEMM y[m,n] = x[m,k]·W[n,k]ᵀ's FLOPs (2mnk), bytes (weights
// and activations at the dtype's width, the bf16 output) and roofline
// time (ms) on this GPU.
func (r *Regressions) gemmRoof(dtype string, m, n, k float64) (flops, bytes, roof float64) {
	flops = 2 * m * n * k
	bytes = elemBytes(dtype)*(m*k+n*k) + 2*m*n
	return flops, bytes, roofline(flops, bytes, r.peakFor(dtype), r.hw.MemBandwidth)
}

// moeSplit is an expert shape with its TP/EP split.
type moeSplit struct {
	hidden, inter, topk, experts, tp, ep int64
}

// moeRoof is one rank's fused-MoE roofline time (ms) for tokens tokens:
// tokens × top-k / ep routed pairs through gate-up and down (FLOPs
// 2·pairs·3·hidden·inter/tp) and the weights of the rank's experts the
// tokens hit (each of the rank's experts/ep is missed by all tokens with
// probability (1 − top-k/experts)^tokens), plus activations in and out.
func (r *Regressions) moeRoof(dtype string, s moeSplit, tokens float64) float64 {
	pairs := tokens * float64(s.topk) / float64(s.ep)
	inter := float64(s.inter) / float64(s.tp)
	perRank := float64(s.experts) / float64(s.ep)
	active := perRank * (1 - math.Pow(1-float64(s.topk)/float64(s.experts), tokens))
	bytes := active*3*float64(s.hidden)*inter*elemBytes(dtype) + 4*tokens*float64(s.hidden)
	flops := 2 * pairs * 3 * float64(s.hidden) * inter
	return roofline(flops, bytes, r.peakFor(dtype), r.hw.MemBandwidth)
}

// commWire is the time one GPU's share of a collective takes on NVLink,
// ms: ring algorithms put 2(g−1)/g of the message on the wire for an
// all-reduce and (g−1)/g for the others; elements of 2 bytes.
func (r *Regressions) commWire(op string, gpus, elems float64) float64 {
	share := (gpus - 1) / gpus
	if op == "all_reduce" {
		share *= 2
	}
	return share * elems * 2 / r.hw.IntraNodeBW * 1e3
}

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}
