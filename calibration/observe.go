package calibration

import (
	"container/heap"
	"math"
	"slices"
	"sort"
)

// Life is one request as a client saw it, for the reconstruction of the
// engine's running batch: times in s from the run's first send.
type Life struct {
	ArrivalS float64
	// FirstS is when its first token arrived (success only); EndS when its
	// last token arrived, or, for a failed request, when the client gave up.
	FirstS, EndS float64
	Prompt       int // prompt tokens
	Failed       bool
}

// Observation is one successful request's decode life, reconstructed: the
// time-averaged running batch and mean context (tokens) over [FirstS,
// EndS], and its measured time per output token.
type Observation struct {
	ArrivalS float64
	Batch    float64
	Context  float64
	TPOTS    float64
}

// ReconstructStep is the reconstruction's time grid, s.
const ReconstructStep = 1.0

// Reconstruct turns per-request lives into (batch, context) → per-token
// time observations, one per successful request. The running set is
// rebuilt with vLLM's FCFS admission and its max_num_seqs cap:
//
//   - a successful request runs from its first token to its last (its
//     admission is its first token, less a prefill that is short next to
//     a long decode);
//   - requests are admitted in arrival order, so a failed request still
//     waiting when a later one is admitted was admitted just before it;
//     one at the head of the queue is admitted as soon as fewer than
//     maxNumSeqs run; it runs until the client gave up (vLLM aborts it
//     then) or leaves the queue unadmitted at that time;
//   - a request's context is its prompt plus the tokens generated so far:
//     linear in time at its own TPOT for a success, at the median TPOT of
//     the successes decoding at that moment for a failed one.
//
// The grid is ReconstructStep wide. outputLen is the tokens each request
// generates (the requested length under ignore_eos). KV capacity is not
// modelled: runs whose running set is bounded by KV blocks (preemption)
// reconstruct a larger batch than they ran.
func Reconstruct(lives []Life, outputLen, maxNumSeqs int) []Observation {
	if outputLen < 2 || len(lives) == 0 {
		return nil
	}
	order := make([]int, len(lives))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lives[order[a]].ArrivalS < lives[order[b]].ArrivalS })
	tpot := func(l *Life) float64 { return (l.EndS - l.FirstS) / float64(outputLen-1) }
	adm := admissions(lives, maxNumSeqs)

	end := 0.0
	for _, l := range lives {
		end = max(end, l.EndS)
	}
	n := int(end/ReconstructStep) + 2
	// Median TPOT of the successes decoding in each cell of the grid (for
	// the progress of failed requests), carried forward where none decode.
	decoding := make([][]float64, n)
	for i := range lives {
		l := &lives[i]
		if l.Failed {
			continue
		}
		for g := cell(l.FirstS); g <= cell(l.EndS) && g < n; g++ {
			decoding[g] = append(decoding[g], tpot(l))
		}
	}
	step := make([]float64, n)
	last := math.NaN()
	for g := range step {
		if len(decoding[g]) > 0 {
			slices.Sort(decoding[g])
			last = decoding[g][len(decoding[g])/2]
		}
		step[g] = last
	}
	batch := make([]float64, n)
	ctxSum := make([]float64, n)
	for i := range lives {
		l := &lives[i]
		start := l.FirstS
		if l.Failed {
			start = adm[i]
		}
		if math.IsNaN(start) {
			continue
		}
		for g := cell(start); g <= cell(l.EndS) && g < n; g++ {
			mid := (float64(g) + 0.5) * ReconstructStep
			if mid < start || mid > l.EndS {
				continue
			}
			var gen float64
			if !l.Failed {
				gen = (mid - l.FirstS) / tpot(l)
			} else if step[g] > 0 {
				gen = (mid - start) / step[g]
			}
			batch[g]++
			ctxSum[g] += float64(l.Prompt) + min(gen, float64(outputLen))
		}
	}
	var obs []Observation
	for _, i := range order {
		l := &lives[i]
		if l.Failed {
			continue
		}
		var b, c float64
		k := 0
		for g := cell(l.FirstS); g <= cell(l.EndS) && g < n; g++ {
			if batch[g] == 0 {
				continue
			}
			b += batch[g]
			c += ctxSum[g] / batch[g]
			k++
		}
		if k == 0 {
			continue
		}
		obs = append(obs, Observation{ArrivalS: l.ArrivalS, Batch: b / float64(k), Context: c / float64(k), TPOTS: tpot(l)})
	}
	return obs
}

func cell(t float64) int { return int(math.Floor(t / ReconstructStep)) }

// admissions returns each failed request's reconstructed admission time
// (NaN: never admitted; successes: their first token), by the FCFS rules
// of Reconstruct.
func admissions(lives []Life, maxNumSeqs int) []float64 {
	const (
		evDepart = iota
		evAdmit
		evArrive
	)
	adm := make([]float64, len(lives))
	var evs eventHeap
	for i := range lives {
		adm[i] = math.NaN()
		l := &lives[i]
		heap.Push(&evs, lifeEvent{l.ArrivalS, evArrive, i})
		if !l.Failed {
			heap.Push(&evs, lifeEvent{l.FirstS, evAdmit, i})
		}
		heap.Push(&evs, lifeEvent{l.EndS, evDepart, i})
	}
	const (
		waiting = iota + 1
		running
		gone
	)
	state := make([]int, len(lives))
	var queue []int
	head, nRunning := 0, 0
	admit := func(j int, t float64) {
		adm[j], state[j] = t, running
		nRunning++
	}
	for evs.Len() > 0 {
		e := heap.Pop(&evs).(lifeEvent)
		switch e.kind {
		case evArrive:
			state[e.i] = waiting
			queue = append(queue, e.i)
		case evAdmit:
			// FCFS: everything still waiting ahead of it goes in first.
			for state[e.i] == waiting && head < len(queue) {
				j := queue[head]
				head++
				if state[j] == waiting {
					admit(j, e.at)
				}
			}
		case evDepart:
			if state[e.i] == running {
				nRunning--
			}
			state[e.i] = gone
		}
		for head < len(queue) && nRunning < maxNumSeqs {
			j := queue[head]
			if state[j] != waiting {
				head++
				continue
			}
			if !lives[j].Failed {
				break // a success is admitted at its own first token
			}
			head++
			admit(j, e.at)
		}
	}
	return adm
}

type lifeEvent struct {
	at   float64
	kind int
	i    int
}

type eventHeap []lifeEvent

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	if h[a].kind != h[b].kind {
		return h[a].kind < h[b].kind
	}
	return h[a].i < h[b].i
}
func (h eventHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(lifeEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
