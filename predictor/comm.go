package predictor

import (
	"fmt"

	"frontier/profiles"
)

// CustomAllReduceMaxBytes is vLLM's custom all-reduce limit: messages up to
// 8 MiB use it, larger ones NCCL (vllm/distributed/device_communicators/
// custom_all_reduce.py, max_size = 8192 * 1024).
const CustomAllReduceMaxBytes = 8 << 20

// Comm predicts collectives for one GPU count from the custom all-reduce
// and NCCL tables: latency curves over message size (elements of 2 bytes),
// log-log interpolated, each with its latency per element made
// non-increasing in message size (monotoneCost).
type Comm struct {
	gpus   int
	curves map[string]series // key: op/backend
	// ncclOnly: vLLM's custom all-reduce is off for this group (more than
	// two PCIe-only GPUs, or GPUs on several nodes), so every all-reduce
	// is NCCL's.
	ncclOnly bool
	Cov      Coverage
}

// CustomAllReduceOff reports whether vLLM turns its custom all-reduce off
// for a TP group of n GPUs on hw, and why: on more than two GPUs that
// NVLink does not fully connect ("Custom allreduce is disabled because
// it's not supported on more than two PCIe-only GPUs", vllm/distributed/
// device_communicators/custom_all_reduce.py), and across nodes (its IPC
// buffers are per host).
func CustomAllReduceOff(hw profiles.Hardware, n int) (bool, string) {
	switch {
	case n > 2 && !hw.FullyConnected(n):
		return true, fmt.Sprintf("custom all-reduce off for %d PCIe-only GPUs (vLLM supports it on at most two): TP all-reduces priced from NCCL's table", n)
	case !hw.SameNode(n):
		return true, fmt.Sprintf("custom all-reduce off across nodes (%d GPUs, %d per node): TP all-reduces priced from NCCL", n, hw.GPUsPerNode)
	}
	return false, ""
}

// NewComm selects the curves for gpus GPUs.
func NewComm(rows []profiles.CommRow, gpus int) *Comm {
	c := &Comm{gpus: gpus, curves: map[string]series{}}
	pts := map[string][2][]float64{}
	for _, r := range rows {
		if r.NumGPUs != int64(gpus) || r.LatencyMs <= 0 {
			continue
		}
		if r.Dtype != "" && r.Dtype != "half" && r.Dtype != "bfloat16" && r.Dtype != "float16" {
			continue
		}
		k := r.Op + "/" + r.Backend
		p := pts[k]
		p[0], p[1] = append(p[0], float64(r.MessageSize)), append(p[1], r.LatencyMs)
		pts[k] = p
	}
	for k, p := range pts {
		sr := newSeries(p[0], p[1])
		monotoneCost(sr.x.v, sr.y, func(e float64) float64 { return e })
		c.curves[k] = sr
	}
	return c
}

// commRule is Ms's rule outside a collective's table, as the run's notes
// state it.
const commRule = "each series is first made monotone in bytes (" + pooled + "); a message above the table's largest scales its latency " +
	"linearly in bytes, one below keeps the smallest's latency; a GPU count without a table is priced by ring bandwidth: " +
	"2·(g−1)/g of the bytes at the link's bandwidth, plus 10 µs"

// Ms returns the latency, milliseconds, of op over elems 2-byte elements
// using backend (nccl, vllm_graph, vllm_eager); a missing backend falls
// back to nccl. With no table at all for this GPU count it returns a
// bandwidth estimate from bwBytesPerSec (ring: 2·(g−1)/g of the bytes).
func (c *Comm) Ms(op, backend string, elems int64, bwBytesPerSec float64) float64 {
	if c.gpus <= 1 || elems <= 0 {
		return 0
	}
	s, ok := c.curves[op+"/"+backend]
	if !ok {
		s, ok = c.curves[op+"/nccl"]
	}
	if !ok {
		c.Cov.note(op, commRule, Reach{Why: fmt.Sprintf("no table for %d GPUs: bandwidth estimate", c.gpus)}, func() string { return fmt.Sprintf("gpus=%d elems=%d", c.gpus, elems) })
		g := float64(c.gpus)
		return 1e3*(2*(g-1)/g*float64(elems)*2/bwBytesPerSec) + 0.01
	}
	y, _ := s.at(float64(elems))
	c.Cov.note(op, commRule, beyond("elems", s.x, float64(elems)), func() string { return fmt.Sprintf("%s gpus=%d elems=%d", backend, c.gpus, elems) })
	return y
}

// AllReduceMs prices a TP all-reduce of elems bf16 elements as vLLM does:
// the custom all-reduce (graph or eager flavour) up to 8 MiB, NCCL above
// (always NCCL where vLLM turns the custom one off, CustomAllReduceOff).
func (c *Comm) AllReduceMs(elems int64, graph bool, bw float64) float64 {
	if elems*2 <= CustomAllReduceMaxBytes && !c.ncclOnly {
		if graph {
			return c.Ms("all_reduce", "vllm_graph", elems, bw)
		}
		return c.Ms("all_reduce", "vllm_eager", elems, bw)
	}
	return c.Ms("all_reduce", "nccl", elems, bw)
}
