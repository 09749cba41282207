package plan

import (
	"runtime"
	"sync"
)

// Ordered runs work(k) for k = 0 … n−1 on jobs goroutines (≤ 0:
// GOMAXPROCS) and hands each value to emit in k order, as soon as every
// earlier one has been emitted: outputs never depend on completion order
// or on jobs. Values finished ahead of their turn wait in memory, so keep
// them small (a row, not a run). progress, when set, is called after
// each finished work with (done, n). The first error emit returns stops
// the remaining work and is returned.
func Ordered[T any](n, jobs int, work func(k int) T, emit func(k int, v T) error, progress func(done, total int)) error {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, max(n, 1))
	type done struct {
		k int
		v T
	}
	next := make(chan int)
	out := make(chan done, jobs)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				out <- done{k, work(k)}
			}
		}()
	}
	go func() {
		defer close(next)
		for k := 0; k < n; k++ {
			select {
			case next <- k:
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()
	pending := map[int]T{}
	want, finished := 0, 0
	var err error
	for d := range out {
		finished++
		if progress != nil {
			progress(finished, n)
		}
		if err != nil {
			continue // draining after a failed emit
		}
		pending[d.k] = d.v
		for {
			v, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			if err = emit(want, v); err != nil {
				close(stop)
				break
			}
			want++
		}
	}
	return err
}
