package profiles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupHardware(t *testing.T) {
	ncclMem := map[int]int64{1: 0, 2: 358612992, 4: 411041792, 8: 411041792}
	h100 := Hardware{
		Name: "h100-sxm", GPUName: "NVIDIA H100 80GB HBM3",
		MemCapacityBytes: 85899345920, MemBandwidth: 3.35e12, BF16FLOPS: 989e12, FP8FLOPS: 1978e12,
		GPUsPerNode: 8, IntraNodeBW: 450e9, InterNodeBW: 50e9, P2PLatencySec: 10e-6,
		NCCLMemBytes: ncclMem, TablesHardware: "h100-sxm",
	}
	h200 := h100
	h200.Name, h200.GPUName, h200.TablesHardware = "h200-sxm", "NVIDIA H200", "h200-sxm"
	h200.MemCapacityBytes, h200.MemBandwidth = 151397597184, 4.8e12
	h800 := h100
	h800.Name, h800.GPUName, h800.IntraNodeBW = "h800", "NVIDIA H800", 200e9

	tests := []struct {
		name string
		want Hardware
	}{
		{"h100-sxm", h100}, {"H100", h100}, {"h100_sxm", h100},
		{"h200-sxm", h200}, {"h200", h200},
		{"H800", h800},
	}
	for _, tc := range tests {
		got, err := LookupHardware(tc.name)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

func TestLookupHardwareReturnsCopies(t *testing.T) {
	a, err := LookupHardware("h100-sxm")
	require.NoError(t, err)
	a.NCCLMemBytes[8] = 1
	b, err := LookupHardware("h100-sxm")
	require.NoError(t, err)
	assert.Equal(t, int64(411041792), b.NCCLMemBytes[8])
}

func TestLookupHardwareUnknown(t *testing.T) {
	_, err := LookupHardware("a100-80gb")
	require.Error(t, err)
	assert.Equal(t, `unknown hardware "a100-80gb" (allowed: h100-sxm, h200-sxm, h800)`, err.Error())
	assert.Equal(t, []string{"h100-sxm", "h200-sxm", "h800"}, KnownHardware())
}
