package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/profiles"
)

func labels(t *testing.T, model string, n int) []string {
	t.Helper()
	m, err := profiles.LoadModel(model)
	require.NoError(t, err)
	topos, err := Enumerate(m, n, h200(t))
	require.NoError(t, err)
	var out []string
	for _, tp := range topos {
		assert.Equal(t, n, tp.GPUs(), tp.Label())
		out = append(out, tp.Label())
	}
	return out
}

// Llama-3.1-70B (64 query heads, 8 KV heads, 80 layers, dense) on 8
// GPUs, written out by hand: TP ∈ {1, 2, 4, 8} × PP × DP = 8, and every
// xPyD with x·a + y·b = 8 over TP a, b ∈ {1, 2, 4}.
func TestEnumerateDense8GPUs(t *testing.T) {
	want := []string{
		"TP1 PP1 DP8", "TP1 PP2 DP4", "TP1 PP4 DP2", "TP1 PP8 DP1",
		"TP2 PP1 DP4", "TP2 PP2 DP2", "TP2 PP4 DP1",
		"TP4 PP1 DP2", "TP4 PP2 DP1",
		"TP8 PP1 DP1",
		"1P TP1 + 7D TP1", "2P TP1 + 6D TP1", "3P TP1 + 5D TP1", "4P TP1 + 4D TP1", "5P TP1 + 3D TP1", "6P TP1 + 2D TP1", "7P TP1 + 1D TP1",
		"2P TP1 + 3D TP2", "4P TP1 + 2D TP2", "6P TP1 + 1D TP2",
		"4P TP1 + 1D TP4",
		"1P TP2 + 6D TP1", "2P TP2 + 4D TP1", "3P TP2 + 2D TP1",
		"1P TP2 + 3D TP2", "2P TP2 + 2D TP2", "3P TP2 + 1D TP2",
		"2P TP2 + 1D TP4",
		"1P TP4 + 4D TP1",
		"1P TP4 + 2D TP2",
		"1P TP4 + 1D TP4",
	}
	assert.Equal(t, want, labels(t, "meta-llama/Llama-3.1-70B-Instruct", 8))
}

// Mixtral-8x7B (32 heads, 8 KV heads, 32 layers, 8 experts) on 8 GPUs by
// hand: the dense shapes, each co-located one with TP × DP > 1 also with
// EP over TP × DP (8 experts divide by 2, 4 and 8), each pool of TP > 1
// also with EP over its TP.
func TestEnumerateMoE8GPUs(t *testing.T) {
	want := []string{
		"TP1 PP1 DP8", "TP1 PP1 DP8 EP8", "TP1 PP2 DP4", "TP1 PP2 DP4 EP4", "TP1 PP4 DP2", "TP1 PP4 DP2 EP2", "TP1 PP8 DP1",
		"TP2 PP1 DP4", "TP2 PP1 DP4 EP8", "TP2 PP2 DP2", "TP2 PP2 DP2 EP4", "TP2 PP4 DP1", "TP2 PP4 DP1 EP2",
		"TP4 PP1 DP2", "TP4 PP1 DP2 EP8", "TP4 PP2 DP1", "TP4 PP2 DP1 EP4",
		"TP8 PP1 DP1", "TP8 PP1 DP1 EP8",
		"1P TP1 + 7D TP1", "2P TP1 + 6D TP1", "3P TP1 + 5D TP1", "4P TP1 + 4D TP1", "5P TP1 + 3D TP1", "6P TP1 + 2D TP1", "7P TP1 + 1D TP1",
		"2P TP1 + 3D TP2", "2P TP1 + 3D TP2 EP2", "4P TP1 + 2D TP2", "4P TP1 + 2D TP2 EP2", "6P TP1 + 1D TP2", "6P TP1 + 1D TP2 EP2",
		"4P TP1 + 1D TP4", "4P TP1 + 1D TP4 EP4",
		"1P TP2 + 6D TP1", "1P TP2 EP2 + 6D TP1", "2P TP2 + 4D TP1", "2P TP2 EP2 + 4D TP1", "3P TP2 + 2D TP1", "3P TP2 EP2 + 2D TP1",
		"1P TP2 + 3D TP2", "1P TP2 + 3D TP2 EP2", "1P TP2 EP2 + 3D TP2", "1P TP2 EP2 + 3D TP2 EP2",
		"2P TP2 + 2D TP2", "2P TP2 + 2D TP2 EP2", "2P TP2 EP2 + 2D TP2", "2P TP2 EP2 + 2D TP2 EP2",
		"3P TP2 + 1D TP2", "3P TP2 + 1D TP2 EP2", "3P TP2 EP2 + 1D TP2", "3P TP2 EP2 + 1D TP2 EP2",
		"2P TP2 + 1D TP4", "2P TP2 + 1D TP4 EP4", "2P TP2 EP2 + 1D TP4", "2P TP2 EP2 + 1D TP4 EP4",
		"1P TP4 + 4D TP1", "1P TP4 EP4 + 4D TP1",
		"1P TP4 + 2D TP2", "1P TP4 + 2D TP2 EP2", "1P TP4 EP4 + 2D TP2", "1P TP4 EP4 + 2D TP2 EP2",
		"1P TP4 + 1D TP4", "1P TP4 + 1D TP4 EP4", "1P TP4 EP4 + 1D TP4", "1P TP4 EP4 + 1D TP4 EP4",
	}
	assert.Equal(t, want, labels(t, "mistralai/Mixtral-8x7B-v0.1", 8))
}

func TestEnumerateRules(t *testing.T) {
	m, err := profiles.LoadModel("meta-llama/Llama-3.1-8B-Instruct")
	require.NoError(t, err)
	_, err = Enumerate(m, 16, h200(t))
	require.EqualError(t, err, "--gpus 16: one h200-sxm node holds 8 GPUs (one NVLink domain); --gpus enumerates the deployments of one node")
	// GB200: a 4-GPU tray in a 72-GPU NVLink domain (on main: "one NVLink
	// domain (node) of this hardware holds 4 GPUs"); L40S: PCIe only.
	gb, err := profiles.LookupHardware("gb200")
	require.NoError(t, err)
	_, err = Enumerate(m, 8, gb)
	require.EqualError(t, err, "--gpus 8: one gb200 node holds 4 GPUs (its NVLink domain joins 72 across nodes: give such a layout by its flags (--tensor-parallel-size …) without --gpus); --gpus enumerates the deployments of one node")
	l40s, err := profiles.LookupHardware("l40s")
	require.NoError(t, err)
	_, err = Enumerate(m, 16, l40s)
	require.EqualError(t, err, "--gpus 16: one l40s node holds 8 GPUs (PCIe only); --gpus enumerates the deployments of one node")
	_, err = Enumerate(m, 0, h200(t))
	require.ErrorContains(t, err, "--gpus: must be ≥ 1")
	// 32 heads, 8 KV heads: TP 3 and 6 do not divide; TP 16 > 8 KV heads
	// would replicate them, but 32 % 16 = 0 and 16 % 8 = 0: valid.
	assert.False(t, ValidTP(m, 3))
	assert.True(t, ValidTP(m, 8))
	assert.True(t, ValidTP(m, 16))
	assert.False(t, ValidTP(m, 64))
	one := labels(t, "meta-llama/Llama-3.1-8B-Instruct", 1)
	assert.Equal(t, []string{"TP1 PP1 DP1"}, one)
	three := labels(t, "meta-llama/Llama-3.1-8B-Instruct", 3)
	assert.Equal(t, []string{"TP1 PP1 DP3", "TP1 PP3 DP1", "1P TP1 + 2D TP1", "2P TP1 + 1D TP1", "1P TP1 + 1D TP2", "1P TP2 + 1D TP1"}, three)
}

func h200(t *testing.T) profiles.Hardware {
	t.Helper()
	hw, err := profiles.LookupHardware("h200-sxm")
	require.NoError(t, err)
	return hw
}
