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
		if s.co.n > 0 && r.coIdx < s.co.n && s.running[r.coIdx] == r {
			s.Dissolve()
		}
		r.Status = Aborted
		s.freeBlocks(r)
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
