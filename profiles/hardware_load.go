package profiles

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// hardwarePreset says how one --hardware value is built: its system file,
// device name, memory as torch sees it, and links.
type hardwarePreset struct {
	system string // aiconfigurator system folder and <system>.yaml
	gpu    string // nvidia-smi device name
	// torchBytes is the torch-visible memory when measured; else smiMiB,
	// nvidia-smi's total, less driverReserveBytes.
	torchBytes   int64
	smiMiB       int64
	interconnect string // NVLink | PCIe
	nvlinkDomain int    // GPUs one NVLink fabric connects (0: PCIe only)
	tables       string // preset whose operator tables it uses ("" = its own)
	intraNodeBW  float64
}

// driverReserveBytes is the memory nvidia-smi counts that torch does not
// see, for GPUs we did not measure: 512 MiB, between what we measured on
// H100 (81,559 MiB nvidia-smi, 79.19 GiB torch: 468 MiB) and H200
// (143,771 MiB, 139.80 GiB: 616 MiB).
const driverReserveBytes = 512 << 20

// hardwarePresets are the --hardware values. nvidia-smi totals: A100-SXM4-80GB
// 81,920 MiB; B200 183,359 MiB (public nvidia-smi output); GB200 189,471 MiB,
// L40S 46,068 MiB and RTX PRO 6000 Blackwell Server 97,887 MiB (their
// aiconfigurator system files).
var hardwarePresetsByName = map[string]hardwarePreset{
	// H100-SXM 80GB: 79.19 GiB, the total vLLM's memory profiling log
	// prints on that GPU.
	"h100-sxm": {system: "h100_sxm", gpu: "NVIDIA H100 80GB HBM3", torchBytes: 85_029_615_042, interconnect: "NVLink", nvlinkDomain: 8},
	// H200: torch.cuda.mem_get_info on our H200, measured 2026-11-29.
	"h200-sxm": {system: "h200_sxm", gpu: "NVIDIA H200", torchBytes: 150_109_880_320, interconnect: "NVLink", nvlinkDomain: 8},
	// H800: the H100's figures with 400 GB/s NVLink (200 GB/s per GPU per
	// direction), priced from the h100-sxm tables.
	"h800":         {system: "h100_sxm", gpu: "NVIDIA H800", torchBytes: 85_029_615_042, interconnect: "NVLink", nvlinkDomain: 8, tables: "h100-sxm", intraNodeBW: 200e9},
	"b200-sxm":     {system: "b200_sxm", gpu: "NVIDIA B200", smiMiB: 183_359, interconnect: "NVLink", nvlinkDomain: 8},
	"gb200":        {system: "gb200", gpu: "NVIDIA GB200", smiMiB: 189_471, interconnect: "NVLink", nvlinkDomain: 72},
	"a100-sxm":     {system: "a100_sxm", gpu: "NVIDIA A100-SXM4-80GB", smiMiB: 81_920, interconnect: "NVLink", nvlinkDomain: 8},
	"l40s":         {system: "l40s", gpu: "NVIDIA L40S", smiMiB: 46_068, interconnect: "PCIe"},
	"rtx-pro-6000": {system: "rtx_pro_6000_server", gpu: "NVIDIA RTX PRO 6000 Blackwell Server Edition", smiMiB: 97_887, interconnect: "PCIe"},
}

// hardwareAliases maps accepted spellings (lower case) to canonical names.
var hardwareAliases = map[string]string{
	"h100-sxm": "h100-sxm", "h100_sxm": "h100-sxm", "h100": "h100-sxm",
	"h200-sxm": "h200-sxm", "h200_sxm": "h200-sxm", "h200": "h200-sxm",
	"h800":     "h800",
	"b200-sxm": "b200-sxm", "b200_sxm": "b200-sxm", "b200": "b200-sxm",
	"gb200":    "gb200",
	"a100-sxm": "a100-sxm", "a100_sxm": "a100-sxm", "a100": "a100-sxm", "a100-80gb": "a100-sxm",
	"l40s":         "l40s",
	"rtx-pro-6000": "rtx-pro-6000", "rtx_pro_6000": "rtx-pro-6000", "rtx_pro_6000_server": "rtx-pro-6000",
	"rtx-pro-6000-server": "rtx-pro-6000",
}

// canonicalHardware resolves a hardware name case-insensitively.
func canonicalHardware(name string) (string, bool) {
	c, ok := hardwareAliases[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// KnownHardware lists the canonical hardware preset names, sorted:
// a100-sxm, b200-sxm, gb200, h100-sxm, h200-sxm, h800, l40s, rtx-pro-6000.
func KnownHardware() []string {
	out := make([]string, 0, len(hardwarePresetsByName))
	for c := range hardwarePresetsByName {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// systemYAML is the part of an aiconfigurator <system>.yaml we read.
type systemYAML struct {
	GPU struct {
		MemBW       float64 `yaml:"mem_bw"`            // bytes/s
		MemCapacity int64   `yaml:"mem_capacity"`      // bytes
		BF16FLOPS   float64 `yaml:"bfloat16_tc_flops"` // FLOP/s
		FP8FLOPS    float64 `yaml:"fp8_tc_flops"`      // FLOP/s
		SMVersion   int     `yaml:"sm_version"`
	} `yaml:"gpu"`
	Node struct {
		GPUsPerNode   int     `yaml:"num_gpus_per_node"`
		InterNodeBW   float64 `yaml:"inter_node_bw"` // bytes/s per GPU, one direction
		IntraNodeBW   float64 `yaml:"intra_node_bw"` // bytes/s per GPU, one direction
		InterRackBW   float64 `yaml:"inter_rack_bw"` // GB200: between NVL72 racks
		P2PLatencySec float64 `yaml:"p2p_latency"`   // seconds
	} `yaml:"node"`
	Misc struct {
		NCCLMem map[int]int64 `yaml:"nccl_mem"` // bytes by GPU count
	} `yaml:"misc"`
}

// hardwarePresets holds each preset once built: its system file is
// parsed on first lookup (a run needs one or two of them).
var hardwarePresets = func() map[string]*presetEntry {
	m := map[string]*presetEntry{}
	for name := range hardwarePresetsByName {
		m[name] = &presetEntry{}
	}
	return m
}()

type presetEntry struct {
	once sync.Once
	hw   Hardware
	err  error
}

// LookupHardware returns the preset for name (KnownHardware, case-
// insensitive; h100, h200, b200, a100 and the aiconfigurator folder names
// accepted), built from its aiconfigurator system file and the figures of
// hardwarePresetsByName.
func LookupHardware(name string) (Hardware, error) {
	c, ok := canonicalHardware(name)
	if !ok {
		return Hardware{}, fmt.Errorf("unknown hardware %q (allowed: %s)", name, strings.Join(KnownHardware(), ", "))
	}
	e := hardwarePresets[c]
	e.once.Do(func() { e.hw, e.err = loadHardwarePreset(c, hardwarePresetsByName[c]) })
	if e.err != nil {
		return Hardware{}, e.err
	}
	hw := e.hw
	ncclMem := make(map[int]int64, len(hw.NCCLMemBytes)) // callers may modify their copy
	for k, v := range hw.NCCLMemBytes {
		ncclMem[k] = v
	}
	hw.NCCLMemBytes = ncclMem
	return hw, nil
}

// loadHardwarePreset builds preset p (named name) from its system file.
func loadHardwarePreset(name string, p hardwarePreset) (Hardware, error) {
	file := path.Join(embeddedTablesRoot, p.system+".yaml")
	data, err := embeddedTables.ReadFile(file)
	if err != nil {
		return Hardware{}, fmt.Errorf("hardware %s: %w", name, err)
	}
	var y systemYAML
	if err := yaml.Unmarshal(data, &y); err != nil {
		return Hardware{}, fmt.Errorf("hardware %s: parse embedded:%s: %w", name, file, err)
	}
	h := Hardware{
		Name:             name,
		GPUName:          p.gpu,
		MemCapacityBytes: y.GPU.MemCapacity,
		MemBandwidth:     y.GPU.MemBW,
		BF16FLOPS:        y.GPU.BF16FLOPS,
		FP8FLOPS:         y.GPU.FP8FLOPS,
		GPUsPerNode:      y.Node.GPUsPerNode,
		NVLinkDomain:     p.nvlinkDomain,
		Interconnect:     p.interconnect,
		IntraNodeBW:      y.Node.IntraNodeBW,
		InterNodeBW:      y.Node.InterNodeBW,
		P2PLatencySec:    y.Node.P2PLatencySec,
		NCCLMemBytes:     y.Misc.NCCLMem,
		SMVersion:        y.GPU.SMVersion,
		TorchTotalBytes:  p.torchBytes,
		System:           p.system,
		TablesHardware:   name,
	}
	if y.Node.InterRackBW > 0 {
		h.InterNodeBW = y.Node.InterRackBW // GB200: beyond the NVL72 rack
	}
	if h.TorchTotalBytes == 0 {
		h.TorchTotalBytes = p.smiMiB<<20 - driverReserveBytes
	}
	if p.tables != "" {
		h.TablesHardware = p.tables
	}
	if p.intraNodeBW > 0 {
		h.IntraNodeBW = p.intraNodeBW
	}
	return h, nil
}

// HardwareMemoryNote says where a preset's torch-visible memory comes from.
func HardwareMemoryNote(name string) string {
	p, ok := hardwarePresetsByName[name]
	switch {
	case !ok:
		return ""
	case p.torchBytes > 0:
		return "measured"
	}
	return fmt.Sprintf("nvidia-smi %d MiB − 512 MiB", p.smiMiB)
}
