package engine

// Update applies a finished step: each request the step samples for turns
// one placeholder into an output token; requests that
// reached max_tokens or max_model_len finish and free their blocks. It
// appends finished requests to done and returns it.
func (s *Scheduler) Update(step *Step, done []*Request) []*Request {
	n := len(done)
	done = s.SampleCohort(step, done)
	for i := range step.Items {
		if r := step.Items[i].Req; step.Items[i].Samples && r.Status == Running && s.Sample(r) {
			s.Finish(r)
			done = append(done, r)
		}
	}
	if len(done) > n {
		s.compactRunning()
	}
	return done
}

// Sample is Update's work on one running request the finished step
// samples for: its oldest placeholder becomes an output token. It
// reports whether r reached max_tokens or max_model_len; the caller then
// calls Finish, and Compact once after the step. Small enough to inline
// in a caller's own loop over the step.
func (s *Scheduler) Sample(r *Request) bool {
	r.Pending--
	r.NumOutput++
	return r.NumOutput >= r.MaxTokens || r.NumTokens() >= s.cfg.MaxModelLen
}

// Finish ends a request Sample reported done, freeing its blocks unless
// HoldKV. Its full blocks of computed tokens are indexed first: under
// async scheduling the block its last computed token fills was not yet
// (allocate indexes blocks of sampled-for tokens, and no allocation
// follows the last step), and vLLM's AsyncScheduler caches it when the
// step's tokens come back (async_scheduler.py _update_request_with_output:
// cache_blocks(request, num_computed_tokens − num_output_placeholders)).
// Synchronous scheduling indexed every one already.
func (s *Scheduler) Finish(r *Request) {
	r.Status = Finished
	s.finished++
	if bs := s.cfg.BlockSize; s.cfg.EnablePrefixCaching && r.NumComputed-r.Pending >= (r.numHashed+1)*bs {
		s.cacheFull(r, min(r.NumComputed-r.Pending, len(r.Blocks)*bs)/bs)
	}
	if !r.HoldKV {
		s.freeBlocks(r)
	}
}

// Compact drops finished requests from the running list.
func (s *Scheduler) Compact() { s.compactRunning() }

// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) compactRunning() {
	m := s.finished
	s.finished = 0
	if m > 0 && m <= s.co.n && s.finishedFirst(m) {
		// The m requests finished since the last compaction are the
		// list's first m (members, FCFS's oldest: every compaction of
		// BenchmarkSimulateCodegen), so every other one is running: they
		// move down without being read, and the cohort's base moves
		// instead of their coIdx. Reading each request's state and
		// writing its coIdx were ~20 cache lines a compaction, read
		// long after the request's last visit (perf: 0.45 % of the
		// run's samples on the Status load).
		for _, r := range s.running[:m] {
			s.co.leave(r)
		}
		n := copy(s.running, s.running[m:])
		clear(s.running[n:])
		s.running = s.running[:n]
		s.co.base += m
		return
	}
	s.co.base = 0 // (every member's coIdx is written below)
	k, members := 0, s.co.n
	for i, r := range s.running {
		if r.Status == Running {
			if i < members {
				r.coIdx = k
			}
			s.running[k] = r
			k++
		} else if i < members {
			s.co.leave(r)
		}
	}
	clear(s.running[k:])
	s.running = s.running[:k]
}

// finishedFirst reports whether none of the running list's first m
// requests is running. Only Finish makes a request in the list not
// running without compacting it at once (Abort compacts, a preemption
// takes its victim out), so with s.finished = m the other requests then
// are all running.
func (s *Scheduler) finishedFirst(m int) bool {
	for _, r := range s.running[:m] {
		if r.Status == Running {
			return false
		}
	}
	return true
}

// Release frees the blocks a finished HoldKV request kept.
func (s *Scheduler) Release(r *Request) {
	s.freeBlocks(r)
}

// Abort removes r from the engine (client disconnect), freeing its blocks.
// It reports whether r was still in the engine.
func (s *Scheduler) Abort(r *Request) bool {
	switch r.Status {
	case Finished:
		if r.HoldKV && len(r.Blocks) > 0 {
			s.freeBlocks(r)
		}
		return false
	case Running:
		if i := r.coIdx - s.co.base; s.co.n > 0 && i >= 0 && i < s.co.n && s.running[i] == r {
			s.Dissolve()
		}
		r.Status = Aborted
		s.freeBlocks(r)
		s.finished = 0 // (r is not a finished request: compact by reading each)
		s.compactRunning()
		return true
	case Waiting, Preempted:
		r.Status = Aborted
		s.waiting.Remove(r)
		s.numWaiting--
		s.freeBlocks(r)
		return true
	}
	return false
}
