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
		GPUsPerNode: 8, NVLinkDomain: 8, Interconnect: "NVLink", IntraNodeBW: 450e9, InterNodeBW: 50e9, P2PLatencySec: 10e-6,
		NCCLMemBytes: ncclMem, SMVersion: 90, TorchTotalBytes: 85_029_615_042, System: "h100_sxm", TablesHardware: "h100-sxm",
	}
	h200 := h100
	h200.Name, h200.GPUName, h200.TablesHardware, h200.System = "h200-sxm", "NVIDIA H200", "h200-sxm", "h200_sxm"
	h200.MemCapacityBytes, h200.MemBandwidth, h200.TorchTotalBytes = 151397597184, 4.8e12, 150_109_880_320
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

// The new presets: torch-visible memory, links, domains and vllm serve's
// batch defaults (8192/1024 at ≥ 70 GiB except A100; else 2048/256).
func TestNewHardwarePresets(t *testing.T) {
	tests := []struct {
		name, gpu, link     string
		torch               int64
		perNode, domain, sm int
		tokens, seqs        int
	}{
		{"b200-sxm", "NVIDIA B200", "NVLink", 183_359<<20 - 512<<20, 8, 8, 100, 8192, 1024},
		{"gb200", "NVIDIA GB200", "NVLink", 189_471<<20 - 512<<20, 4, 72, 100, 8192, 1024},
		{"a100", "NVIDIA A100-SXM4-80GB", "NVLink", 81_920<<20 - 512<<20, 8, 8, 80, 2048, 256},
		{"l40s", "NVIDIA L40S", "PCIe", 46_068<<20 - 512<<20, 8, 0, 89, 2048, 256},
		{"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "PCIe", 97_887<<20 - 512<<20, 8, 0, 120, 8192, 1024},
		{"h100-sxm", "NVIDIA H100 80GB HBM3", "NVLink", 85_029_615_042, 8, 8, 90, 8192, 1024},
	}
	for _, tc := range tests {
		h, err := LookupHardware(tc.name)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.gpu, h.GPUName, tc.name)
		assert.Equal(t, tc.link, h.Interconnect, tc.name)
		assert.Equal(t, tc.torch, h.TorchTotalBytes, tc.name)
		assert.Equal(t, tc.perNode, h.GPUsPerNode, tc.name)
		assert.Equal(t, tc.domain, h.NVLinkDomain, tc.name)
		assert.Equal(t, tc.sm, h.SMVersion, tc.name)
		tok, seqs := h.ServeBatchDefaults()
		assert.Equal(t, [2]int{tc.tokens, tc.seqs}, [2]int{tok, seqs}, tc.name)
	}
	gb, _ := LookupHardware("gb200")
	assert.Equal(t, 72, gb.MaxEngineGPUs())
	assert.True(t, gb.FullyConnected(8))
	assert.False(t, gb.SameNode(8))
	l40s, _ := LookupHardware("l40s")
	assert.False(t, l40s.FullyConnected(4))
	assert.Equal(t, 8, l40s.MaxEngineGPUs())
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
	_, err := LookupHardware("v100")
	require.Error(t, err)
	assert.Equal(t, `unknown hardware "v100" (allowed: a100-sxm, b200-sxm, gb200, h100-sxm, h200-sxm, h800, l40s, rtx-pro-6000)`, err.Error())
	assert.Equal(t, []string{"a100-sxm", "b200-sxm", "gb200", "h100-sxm", "h200-sxm", "h800", "l40s", "rtx-pro-6000"}, KnownHardware())
}
