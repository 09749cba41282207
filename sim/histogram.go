package sim

import "math"

// Histogram collects durations (ns) in log-spaced buckets under 0.1 %
// wide, so percentiles are exact to 0.1 % without keeping every sample;
// mean and standard deviation are exact.
type Histogram struct {
	counts []int64 // by bucket index (see bucket)
	n      int64
	lastV  int64 // memo: consecutive samples often repeat (one decode step)
	lastB  int
	sum    float64
	sumSq  float64
}

// bucket is ⌊log2(v)·1024⌋ from the float's bits: the exponent and the
// top 10 mantissa bits (buckets 0.07 % wide, monotone in v ≥ 1).
func bucket(v float64) int { return int(math.Float64bits(v)>>42) - 1023<<10 }

// bucketMid is the value in the middle of bucket b.
func bucketMid(b int) float64 {
	lo := math.Float64frombits(uint64(b+1023<<10) << 42)
	hi := math.Float64frombits(uint64(b+1+1023<<10) << 42)
	return (lo + hi) / 2
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{lastV: -1} }

// Add records one duration in ns (values below 1 ns count as 1 ns).
func (h *Histogram) Add(ns int64) {
	ns = max(ns, 1)
	v := float64(ns)
	if ns != h.lastV {
		h.lastV, h.lastB = ns, bucket(v)
		for len(h.counts) <= h.lastB {
			h.counts = append(h.counts, make([]int64, len(h.counts)+1024)...)
		}
	}
	h.counts[h.lastB]++
	h.n++
	h.sum += v
	h.sumSq += v * v
}

// AddN records n samples of one duration in ns: Add n times over, the
// sums accumulated in the same order, so the histogram ends exactly as
// after the n calls (the decode macro-step adds a step's equal gaps so).
func (h *Histogram) AddN(ns, n int64) {
	if n <= 0 {
		return
	}
	ns = max(ns, 1)
	v := float64(ns)
	if ns != h.lastV {
		h.lastV, h.lastB = ns, bucket(v)
		for len(h.counts) <= h.lastB {
			h.counts = append(h.counts, make([]int64, len(h.counts)+1024)...)
		}
	}
	h.counts[h.lastB] += n
	h.n += n
	for ; n > 0; n-- {
		h.sum += v
		h.sumSq += v * v
	}
}

// Count is the number of samples.
func (h *Histogram) Count() int64 { return h.n }

// Mean is the exact mean, ns.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Std is the exact population standard deviation, ns.
func (h *Histogram) Std() float64 {
	if h.n == 0 {
		return 0
	}
	m := h.Mean()
	return math.Sqrt(math.Max(0, h.sumSq/float64(h.n)-m*m))
}

// Percentile returns the p-th percentile (0–100), ns, as the geometric
// middle of the bucket holding that rank.
func (h *Histogram) Percentile(p float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	last := 0
	for k, c := range h.counts {
		if c == 0 {
			continue
		}
		last = k
		seen += c
		if seen >= rank {
			return bucketMid(k)
		}
	}
	return bucketMid(last)
}
