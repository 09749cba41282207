package plan

import (
	"fmt"

	"frontier/profiles"
)

// Pool is one pool of a disaggregated topology: Instances engines of TP
// GPUs each (PP 1, DP 1: the simulator runs replicas of a pool as
// instances), EP over the TP ranks when set.
type Pool struct {
	Instances, TP int
	EP            bool
}

// Topology is one way to lay a model out on the GPUs: a co-located
// deployment (TP × PP × DP, EP over TP × DP for MoE models), or prefill
// and decode pools.
type Topology struct {
	TP, PP, DP int   // co-located (0 when disaggregated)
	EP         bool  // co-located: EP over TP × DP ranks
	Prefill    *Pool // nil: co-located
	Decode     *Pool
}

// Label names the topology: "TP4 PP1 DP2", "TP2 PP1 DP4 EP8",
// "2P TP2 + 1D TP4 EP4".
func (t Topology) Label() string {
	if t.Prefill == nil {
		s := fmt.Sprintf("TP%d PP%d DP%d", t.TP, t.PP, t.DP)
		if t.EP {
			s += fmt.Sprintf(" EP%d", t.TP*t.DP)
		}
		return s
	}
	pool := func(p *Pool, role string) string {
		s := fmt.Sprintf("%d%s TP%d", p.Instances, role, p.TP)
		if p.EP {
			s += fmt.Sprintf(" EP%d", p.TP)
		}
		return s
	}
	return pool(t.Prefill, "P") + " + " + pool(t.Decode, "D")
}

// GPUs is the topology's GPU count.
func (t Topology) GPUs() int {
	if t.Prefill == nil {
		return t.TP * t.PP * t.DP
	}
	return t.Prefill.Instances*t.Prefill.TP + t.Decode.Instances*t.Decode.TP
}

// EngineGPUs is the GPUs of its largest engine (TP × PP): the closer a
// refused topology is to fitting the model's weights.
func (t Topology) EngineGPUs() int {
	if t.Prefill == nil {
		return t.TP * t.PP
	}
	return max(t.Prefill.TP, t.Decode.TP)
}

// ValidTP reports whether vLLM splits the model's attention over tp
// ranks: the query heads divide by tp (ModelConfig's parallel check),
// and the KV heads either divide by tp or, when fewer, are replicated
// (tp a multiple of them; QKVParallelLinear).
func ValidTP(m profiles.ModelSpec, tp int) bool {
	kv := m.NumKVHeads
	if kv == 0 {
		kv = m.NumHeads
	}
	return tp >= 1 && m.NumHeads%tp == 0 && (kv%tp == 0 || tp%kv == 0)
}

// Enumerate lists every topology vLLM accepts for model m on exactly n
// GPUs of one node of hardware hw (hw.GPUsPerNode, from the
// aiconfigurator system files' num_gpus_per_node: 8 on the HGX presets,
// one NVLink domain; 8 PCIe GPUs on L40S and RTX PRO 6000; 4 on a GB200
// compute tray, whose 72-GPU NVLink domain spans trays), before memory
// is checked (sim.Resolve refuses those whose weights or KV cache do not
// fit):
//
//   - co-located: every TP × PP × DP = n with ValidTP(TP) and
//     PP ≤ layers; for a MoE model also with EP over TP × DP ranks when
//     TP × DP > 1 and the experts divide by TP × DP;
//   - disaggregated xPyD: x prefill instances of TP a and y decode
//     instances of TP b, x·a + y·b = n, x, y ≥ 1, ValidTP(a, b), PP = DP
//     = 1 in each pool; for a MoE model each pool also with EP over its
//     TP ranks when TP > 1 and the experts divide by it.
//
// Order: co-located by TP, then PP, then EP off before on;
// disaggregated by prefill TP, decode TP, prefill instances, then EP
// (prefill, decode). Errors: n < 1, or n more than one node holds (the
// message states the preset's rule).
func Enumerate(m profiles.ModelSpec, n int, hw profiles.Hardware) ([]Topology, error) {
	if n < 1 {
		return nil, fmt.Errorf("--gpus: must be ≥ 1, got %d", n)
	}
	perNode := hw.GPUsPerNode
	if n > perNode {
		link := "one NVLink domain"
		switch {
		case hw.NVLinkDomain == 0:
			link = "PCIe only"
		case hw.NVLinkDomain > perNode:
			link = fmt.Sprintf("its NVLink domain joins %d across nodes: give such a layout by its flags (--tensor-parallel-size …) without --gpus", hw.NVLinkDomain)
		}
		return nil, fmt.Errorf("--gpus %d: one %s node holds %d GPUs (%s); --gpus enumerates the deployments of one node", n, hw.Name, perNode, link)
	}
	var out []Topology
	epOK := func(ranks int) []bool {
		if m.IsMoE() && ranks > 1 && m.NumExperts%ranks == 0 {
			return []bool{false, true}
		}
		return []bool{false}
	}
	for tp := 1; tp <= n; tp++ {
		if n%tp != 0 || !ValidTP(m, tp) {
			continue
		}
		for pp := 1; pp <= n/tp; pp++ {
			if (n/tp)%pp != 0 || pp > m.NumLayers {
				continue
			}
			dp := n / tp / pp
			for _, ep := range epOK(tp * dp) {
				out = append(out, Topology{TP: tp, PP: pp, DP: dp, EP: ep})
			}
		}
	}
	for a := 1; a < n; a++ {
		if !ValidTP(m, a) {
			continue
		}
		for b := 1; b < n; b++ {
			if !ValidTP(m, b) {
				continue
			}
			for x := 1; x*a < n; x++ {
				rest := n - x*a
				if rest%b != 0 {
					continue
				}
				y := rest / b
				for _, pe := range epOK(a) {
					for _, de := range epOK(b) {
						out = append(out, Topology{Prefill: &Pool{Instances: x, TP: a, EP: pe}, Decode: &Pool{Instances: y, TP: b, EP: de}})
					}
				}
			}
		}
	}
	return out, nil
}
