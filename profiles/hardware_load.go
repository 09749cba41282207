package profiles

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// hardwareAliases maps accepted spellings (lower case) to canonical names.
var hardwareAliases = map[string]string{
	"h100-sxm": "h100-sxm", "h100_sxm": "h100-sxm", "h100": "h100-sxm",
	"h200-sxm": "h200-sxm", "h200_sxm": "h200-sxm", "h200": "h200-sxm",
	"h800": "h800",
}

// canonicalHardware resolves a hardware name case-insensitively.
func canonicalHardware(name string) (string, bool) {
	c, ok := hardwareAliases[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// KnownHardware lists the canonical hardware preset names, sorted:
// h100-sxm, h200-sxm, h800.
func KnownHardware() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range hardwareAliases {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
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
	} `yaml:"gpu"`
	Node struct {
		GPUsPerNode   int     `yaml:"num_gpus_per_node"`
		InterNodeBW   float64 `yaml:"inter_node_bw"` // bytes/s per GPU, one direction
		IntraNodeBW   float64 `yaml:"intra_node_bw"` // bytes/s per GPU, one direction
		P2PLatencySec float64 `yaml:"p2p_latency"`   // seconds
	} `yaml:"node"`
	Misc struct {
		NCCLMem map[int]int64 `yaml:"nccl_mem"` // bytes by GPU count
	} `yaml:"misc"`
}

// gpuNames are the device names nvidia-smi (and the aiconfigurator tables'
// device column) report.
var gpuNames = map[string]string{
	"h100-sxm": "NVIDIA H100 80GB HBM3",
	"h200-sxm": "NVIDIA H200",
	"h800":     "NVIDIA H800",
}

// h800IntraNodeBW is the H800's NVLink: 400 GB/s bidirectional, so 200 GB/s
// per GPU per direction (the H100 SXM has 900 GB/s, 450 per direction).
const h800IntraNodeBW = 200e9

var hardwarePresets struct {
	once   sync.Once
	byName map[string]Hardware
	err    error
}

// LookupHardware returns the preset for name (h100-sxm, h200-sxm or h800;
// case-insensitive, "h100"/"h200" accepted). h100-sxm and h200-sxm come from
// aiconfigurator's h100_sxm.yaml and h200_sxm.yaml; h800 is the H100's
// figures with 200 GB/s per direction NVLink, priced from h100-sxm tables.
func LookupHardware(name string) (Hardware, error) {
	c, ok := canonicalHardware(name)
	if !ok {
		return Hardware{}, fmt.Errorf("unknown hardware %q (allowed: %s)", name, strings.Join(KnownHardware(), ", "))
	}
	hardwarePresets.once.Do(func() {
		hardwarePresets.byName, hardwarePresets.err = loadHardwarePresets()
	})
	if hardwarePresets.err != nil {
		return Hardware{}, hardwarePresets.err
	}
	hw := hardwarePresets.byName[c]
	ncclMem := make(map[int]int64, len(hw.NCCLMemBytes)) // callers may modify their copy
	for k, v := range hw.NCCLMemBytes {
		ncclMem[k] = v
	}
	hw.NCCLMemBytes = ncclMem
	return hw, nil
}

func loadHardwarePresets() (map[string]Hardware, error) {
	out := map[string]Hardware{}
	for name, system := range embeddedSystems {
		file := path.Join(embeddedTablesRoot, system+".yaml")
		data, err := embeddedTables.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("hardware %s: %w", name, err)
		}
		var y systemYAML
		if err := yaml.Unmarshal(data, &y); err != nil {
			return nil, fmt.Errorf("hardware %s: parse embedded:%s: %w", name, file, err)
		}
		out[name] = Hardware{
			Name:             name,
			GPUName:          gpuNames[name],
			MemCapacityBytes: y.GPU.MemCapacity,
			MemBandwidth:     y.GPU.MemBW,
			BF16FLOPS:        y.GPU.BF16FLOPS,
			FP8FLOPS:         y.GPU.FP8FLOPS,
			GPUsPerNode:      y.Node.GPUsPerNode,
			IntraNodeBW:      y.Node.IntraNodeBW,
			InterNodeBW:      y.Node.InterNodeBW,
			P2PLatencySec:    y.Node.P2PLatencySec,
			NCCLMemBytes:     y.Misc.NCCLMem,
			TablesHardware:   name,
		}
	}
	h800 := out["h100-sxm"]
	h800.Name, h800.GPUName = "h800", gpuNames["h800"]
	h800.IntraNodeBW = h800IntraNodeBW
	h800.TablesHardware = "h100-sxm"
	out["h800"] = h800
	return out, nil
}
