package sim

import "slices"

// TurnStats summarizes the completed requests of one turn index of a
// session workload: how many, their prompt and prefix-cache hit tokens
// (at first admission), and their latencies in ms.
type TurnStats struct {
	Turn         int
	Completed    int
	PromptTokens int // sum over the turn's completed requests
	CachedTokens int // sum of prefix-cache hits at first admission
	MeanTTFTMs   float64
	MedianTTFTMs float64
	MeanE2ELMs   float64
}

// HitRate is the turn's prefix-cache hit rate: cached over prompt tokens
// (vLLM's vllm:prefix_cache_hits / vllm:prefix_cache_queries, counted at
// each request's first admission). NaN without requests.
func (t TurnStats) HitRate() float64 { return float64(t.CachedTokens) / float64(t.PromptTokens) }

// PerTurn groups completed session requests by turn index (1, 2, …), plus
// a last entry with Turn 0 for all of them together. Nil when no request
// is part of a session.
func PerTurn(reqs []RequestRecord) []TurnStats {
	var ttft [][]float64
	var stats []TurnStats
	all := TurnStats{}
	var allTTFT []float64
	for i := range reqs {
		r := &reqs[i]
		if r.Session == 0 || r.Failed || r.FinishNs < 0 {
			continue
		}
		for len(stats) < int(r.Turn) {
			stats = append(stats, TurnStats{Turn: len(stats) + 1})
			ttft = append(ttft, nil)
		}
		for _, s := range []*TurnStats{&stats[r.Turn-1], &all} {
			s.Completed++
			s.PromptTokens += int(r.PromptTokens)
			s.CachedTokens += int(r.CachedTokens)
			s.MeanE2ELMs += float64(r.E2ENs()) / 1e6
		}
		v := float64(r.TTFTNs()) / 1e6
		ttft[r.Turn-1] = append(ttft[r.Turn-1], v)
		allTTFT = append(allTTFT, v)
	}
	if all.Completed == 0 {
		return nil
	}
	finish := func(s *TurnStats, ttft []float64) {
		if s.Completed == 0 {
			return
		}
		slices.Sort(ttft)
		for _, v := range ttft {
			s.MeanTTFTMs += v / float64(s.Completed)
		}
		s.MedianTTFTMs = Percentile(ttft, 50)
		s.MeanE2ELMs /= float64(s.Completed)
	}
	for i := range stats {
		finish(&stats[i], ttft[i])
	}
	finish(&all, allTTFT)
	return append(stats, all)
}
