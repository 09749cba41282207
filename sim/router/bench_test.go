package router

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRoute32x1e5 routes 10^5 requests over 32 replicas with each
// policy, as sim drives it: Pick, the routed hook, a response ending for
// every request routed once 2,048 are in flight, and a scrape every 100
// requests. Each prompt is 512 tokens, 8 router blocks of 64 tokens: 2
// blocks of one of 100 system prompts, then its own 6. One op is the
// whole 10^5 requests.
func BenchmarkRoute32x1e5(b *testing.B) {
	const n, replicas, inflight = 100_000, 32, 2048
	rng := rand.New(rand.NewPCG(1, 1))
	blocks := make([][]uint64, n)
	sess := make([]int, n)
	for i := range blocks {
		g := uint64(rng.IntN(100))
		for k := 0; k < 8; k++ {
			if k < 2 {
				blocks[i] = append(blocks[i], mix64(g<<8|uint64(k)))
			} else {
				blocks[i] = append(blocks[i], mix64(uint64(i)<<8|uint64(k)|1<<60))
			}
		}
		sess[i] = 1 + rng.IntN(5000)
	}
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for it := 0; it < b.N; it++ {
				p, _ := New(name, Config{Replicas: replicas})
				reps := make([]Replica, replicas)
				for i := range reps {
					reps[i].KVBlocks = 30_000 // 480,000 tokens of 16-token KV blocks
				}
				routed, _ := p.(RoutedHook)
				finished, _ := p.(FinishedHook)
				scraped, _ := p.(ScrapedHook)
				where := make([]int, n)
				reqs := make([]Request, n)
				for i := 0; i < n; i++ {
					reqs[i] = Request{ID: i, Session: sess[i], Blocks: blocks[i]}
					r := &reqs[i]
					rep := p.Pick(r, reps)
					where[i] = rep
					reps[rep].InFlight++
					if routed != nil {
						routed.Routed(r, rep, reps)
					}
					if j := i - inflight; j >= 0 {
						reps[where[j]].InFlight--
						if finished != nil {
							finished.Finished(&reqs[j], where[j], reps)
						}
					}
					if i%100 == 0 {
						for k := range reps {
							reps[k].Waiting, reps[k].KVUsage = reps[k].InFlight/4, float64(reps[k].InFlight)/float64(inflight)
						}
						if scraped != nil {
							scraped.Scraped(reps)
						}
					}
				}
			}
		})
	}
}
