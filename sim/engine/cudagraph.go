package engine

import "sort"

// CaptureSizes returns vLLM's CUDA-graph capture sizes (token counts):
// 1, 2, 4, then every 8 up to 256, then every 16 up to the maximum capture
// size, which defaults to min(2 × max_num_seqs, 512); sizes above
// max_num_batched_tokens are dropped (vllm/config/compilation.py,
// VLLM.md "CUDA graphs and padding"). A non-nil override is used as given,
// sorted and deduplicated.
func CaptureSizes(maxNumSeqs, maxNumBatchedTokens int, override []int) []int {
	var sizes []int
	if override != nil {
		sizes = append(sizes, override...)
	} else {
		maxSize := min(2*maxNumSeqs, 512)
		sizes = append(sizes, 1, 2, 4)
		for s := 8; s <= 256; s += 8 {
			sizes = append(sizes, s)
		}
		for s := 272; s <= maxSize; s += 16 {
			sizes = append(sizes, s)
		}
		k := 0
		for _, s := range sizes {
			if s <= maxSize {
				sizes[k] = s
				k++
			}
		}
		sizes = sizes[:k]
	}
	sort.Ints(sizes)
	out := sizes[:0]
	for i, s := range sizes {
		if s <= maxNumBatchedTokens && (i == 0 || s != sizes[i-1]) {
			out = append(out, s)
		}
	}
	return out
}

// PadTable maps a scheduled token count to the CUDA-graph size it runs at.
type PadTable struct {
	pad []int32 // pad[n] for n ≤ max capture size
}

// NewPadTable precomputes padding for sizes (ascending). Empty sizes mean
// no graphs (enforce_eager).
func NewPadTable(sizes []int) PadTable {
	if len(sizes) == 0 {
		return PadTable{}
	}
	maxS := sizes[len(sizes)-1]
	p := make([]int32, maxS+1)
	j := 0
	for n := 0; n <= maxS; n++ {
		for sizes[j] < n {
			j++
		}
		p[n] = int32(sizes[j])
	}
	return PadTable{pad: p}
}

// MaxSize is the largest capture size (0 without graphs).
func (t PadTable) MaxSize() int { return len(t.pad) - 1 }

// Pad returns the padded token count and whether n runs in a graph.
func (t PadTable) Pad(n int) (int, bool) {
	if n < len(t.pad) && n > 0 {
		return int(t.pad[n]), true
	}
	return n, false
}
