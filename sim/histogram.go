package sim

import (
	"math"
	"math/bits"
)

// Histogram collects durations (ns) in log-spaced buckets under 0.1 %
// wide, so percentiles are exact to 0.1 % without keeping every sample;
// mean and standard deviation are exact.
type Histogram struct {
	// counts are by bucket index (see bucket) in blocks of blockBuckets,
	// each allocated when a sample first falls in it: a run's gaps fill a
	// few blocks of the 256 that int64 durations span. One flat slice,
	// grown up to the largest bucket seen, was ~230 KB of zeros for ITLs
	// near 100 ms (bucket ~27,000) and twice that allocated while growing,
	// all of it fresh pages (BenchmarkSimulateCodegen: 456 KB a run).
	counts [maxBuckets / blockBuckets]*[blockBuckets]int64
	n      int64
	lastV  int64  // memo: consecutive samples often repeat (one decode step)
	lastC  *int64 // lastV's count, in counts
	// pend is how many of the latest samples, all lastV, are not yet in
	// sum and sumSq: a run of equal samples (equal gaps of consecutive
	// decode steps, added step by step) goes into the sums as one weighted
	// add when the value changes or a sum is read (settle). The sums are
	// those of adding each sample in turn: n additions of v to a sum, then
	// m more, are n + m additions of v (addRepeated counts them exactly).
	pend int64
	sum  float64
	// sumSq is the sum of squares unless sqUnits. While the sum of
	// squares s lies in a binade where addRepeated works in units
	// (s/u an integer in [2^52, 2^53), u = 1/sqInv a power of two), it is
	// kept as that integer, sqW, and a run's n additions of v² are
	// n·round(v²/u) more, as addRepeated's pass would count them: settle
	// then does a few integer operations instead of rebuilding the binade
	// from the float's bits and back (sumSquares reads it). A run that
	// leaves the binade, or a tie, goes through addRepeated.
	sumSq   float64
	sqW     int64
	sqInv   float64
	sqUnits bool
}

// bucket is ⌊log2(v)·1024⌋ from the float's bits: the exponent and the
// top 10 mantissa bits (buckets 0.07 % wide, monotone in v ≥ 1).
func bucket(v float64) int { return int(math.Float64bits(v)>>42) - 1023<<10 }

// maxBuckets bounds bucket over int64 durations (float64(v) ≤ 2^63:
// exponent ≤ 63, so bucket < 64·1024); blockBuckets is a block of
// Histogram.counts (2 KB).
const (
	maxBuckets   = 64 << 10
	blockBuckets = 256
)

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
	if !h.addLast(ns, 1) {
		h.AddN(ns, 1)
	}
}

// addLast is AddN(ns, n), n ≥ 0, when ns is the last value added (most
// gaps repeat the one before: one decode step); false, adding nothing,
// otherwise. Small enough to inline into a per-token or per-step loop.
func (h *Histogram) addLast(ns, n int64) bool {
	if ns != h.lastV || ns <= 0 {
		return false
	}
	*h.lastC += n
	h.n += n
	h.pend += n
	return true
}

// AddN records n samples of one duration in ns: Add n times over, the
// sums accumulated in the same order, so the histogram ends exactly as
// after the n calls (the decode cohort adds a step's equal gaps so).
//
//go:noinline
func (h *Histogram) AddN(ns, n int64) {
	if n <= 0 {
		return
	}
	ns = max(ns, 1)
	if ns != h.lastV {
		h.settle()
		b := uint(bucket(float64(ns))) // < maxBuckets (ns ≥ 1)
		blk := h.counts[b/blockBuckets%(maxBuckets/blockBuckets)]
		if blk == nil {
			blk = new([blockBuckets]int64)
			h.counts[b/blockBuckets%(maxBuckets/blockBuckets)] = blk
		}
		h.lastV, h.lastC = ns, &blk[b%blockBuckets]
	}
	*h.lastC += n
	h.n += n
	h.pend += n
}

// settle adds the pending samples (pend times lastV) to the sums, in
// turn, as Add would have one by one.
func (h *Histogram) settle() {
	n := h.pend
	if n <= 0 {
		return
	}
	h.pend = 0
	v := float64(h.lastV)
	if add := float64(n) * v; h.sum+add < 1<<53 && add < 1<<53 {
		h.sum += add // integers below 2^53: every addition exact, so is their sum
	} else {
		h.sum = addRepeated(h.sum, v, n)
	}
	vv := v * v
	if h.sqUnits {
		// addRepeated's pass in units (see there): each addition adds
		// vv/u rounded to nearest, unless a tie; all n stay in the binade
		// while the units stay below 2^53.
		if vu := vv * h.sqInv; vu < 1<<53 {
			step := int64(vu)
			frac := vu - float64(step) // exact
			if frac > 0.5 {
				step++
			}
			hi, lo := bits.Mul64(uint64(n), uint64(step))
			if w := h.sqW + int64(lo); frac != 0.5 && hi == 0 && lo < 1<<53 && w < 1<<53 {
				h.sqW = w
				return
			}
		}
		h.sumSq, h.sqUnits = float64(h.sqW)/h.sqInv, false // exact: an integer below 2^53 over a power of two
	}
	h.sumSq = addRepeated(h.sumSq, vv, n)
	// Into units when addRepeated would work in them (its binade test).
	if exp := int(math.Float64bits(h.sumSq)>>52) & 0x7ff; exp > 52 && exp < 0x7ff-53 {
		h.sqInv = math.Float64frombits(uint64(0x7fe-exp+52) << 52)
		h.sqW, h.sqUnits = int64(h.sumSq*h.sqInv), true
	}
}

// sumSquares is the sum of the settled samples' squares.
func (h *Histogram) sumSquares() float64 {
	if h.sqUnits {
		return float64(h.sqW) / h.sqInv
	}
	return h.sumSq
}

// addRepeated is s after n times s += v in float64 (v ≥ 1 finite,
// s ≥ 0), each addition rounded as Go rounds it, without n additions:
// while s stays in one binade [2^e, 2^(e+1)) it is a multiple of that
// binade's unit u, so s + v rounds to s plus v rounded to a multiple of
// u, the same increment every time (round to nearest; a tie, whose
// rounding alternates with the parity of s/u, and the addition that
// leaves the binade go one at a time). The counting is in units of u,
// integers below 2^53, so exact.
func addRepeated(s, v float64, n int64) float64 {
	for n > 0 {
		exp := int(math.Float64bits(s)>>52) & 0x7ff
		if s < v || exp <= 52 || exp >= 0x7ff-53 {
			s += v // s tiny or near the top of the range: one at a time
			n--
			continue
		}
		// s's unit in the last place is u = 2^(exp−1075); in units of u,
		// s and v are w = s/u (an integer below 2^53) and v/u.
		inv := math.Float64frombits(uint64(0x7fe-exp+52) << 52) // 1/u, exact
		vu := v * inv
		if vu >= 1<<53 {
			s += v
			n--
			continue
		}
		q := int64(vu)
		frac := vu - float64(q) // exact
		step := q
		switch {
		case frac > 0.5:
			step++
		case frac == 0.5: // a tie: its rounding alternates with s's parity
			s += v
			n--
			continue
		}
		if step == 0 {
			return s // every addition rounds back to s
		}
		w := int64(s * inv)
		k := n // additions that stay in the binade
		if hi, lo := bits.Mul64(uint64(n), uint64(step)); hi != 0 || lo > uint64(1<<53-1-w) {
			k = (1<<53 - 1 - w) / step
		}
		if k == 0 {
			s += v
			n--
			continue
		}
		s = float64(w+k*step) / inv
		n -= k
	}
	return s
}

// Count is the number of samples.
func (h *Histogram) Count() int64 { return h.n }

// Mean is the exact mean, ns. It settles a pending run of equal samples
// into the sums (h changes): not safe for concurrent reads.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	h.settle()
	return h.sum / float64(h.n)
}

// Std is the exact population standard deviation, ns; like Mean it
// settles pending samples.
func (h *Histogram) Std() float64 {
	if h.n == 0 {
		return 0
	}
	m := h.Mean() // (settles)
	return math.Sqrt(math.Max(0, h.sumSquares()/float64(h.n)-m*m))
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
	for i, blk := range h.counts {
		if blk == nil {
			continue
		}
		for j, c := range blk {
			if c == 0 {
				continue
			}
			k := i*blockBuckets + j
			last = k
			seen += c
			if seen >= rank {
				return bucketMid(k)
			}
		}
	}
	return bucketMid(last)
}
