package engine

import "slices"

// Config is the engine core's scheduling configuration, named as vLLM's
// flags (SchedulerConfig, CacheConfig).
type Config struct {
	MaxNumSeqs                int // --max-num-seqs
	MaxNumBatchedTokens       int // --max-num-batched-tokens (token budget)
	MaxModelLen               int // --max-model-len, tokens
	LongPrefillTokenThreshold int // --long-prefill-token-threshold; 0 = off
	BlockSize                 int // --block-size, tokens
	NumBlocks                 int // KV capacity, blocks
	EnablePrefixCaching       bool
	// Policy is --scheduling-policy (nil = FCFS, vLLM's default).
	Policy Policy
	// ExpectBlocks is a hint, not a limit: about how many blocks a run
	// first hands out (0 = unknown). The pool allocates its blocks'
	// state, free-queue ring and prefix-cache index for that many at
	// first (at least minStart) and grows them if the run needs more.
	ExpectBlocks int
}

// Scheduled is one request's share of a step.
type Scheduled struct {
	Req      *Request
	NumNew   int  // tokens computed for it this step
	Computed int  // tokens already computed before this step (prefix length)
	Decode   bool // a single-token decode (not a prefill chunk)
	Samples  bool // the step ends with a sampled token for it
}

// Step is the scheduler's output for one engine step.
type Step struct {
	// Cohort is how many of the step's requests are the decode cohort's
	// implicit items (cohort.go): the first Cohort running requests, each
	// a one-token decode that samples, ahead of Items. 0 unless
	// EnableCohort; Scheduler.Dissolve writes them into Items.
	Cohort       int
	cycle        int // the cohort cycle the step schedules (with Cohort > 0)
	Items        []Scheduled
	NumTokens    int // scheduled tokens (sum of NumNew)
	NumPrefill   int // tokens of prefill chunks
	NumDecode    int // decode requests (one token each)
	NumPreempted int // requests preempted while scheduling this step
	DecodeCtxSum int64
	NumSampled   int
	PrefillReqs  int
	KVBlocksUsed int
	NumRunning   int
	NumWaiting   int
	// PrefixQueries and PrefixHits are the prefix-cache lookups made while
	// scheduling this step, in tokens: each lookup of a waiting request
	// queries its num_tokens and hits its cached tokens, counted at every
	// attempt, admitted or not (kv_cache_manager.py get_computed_blocks,
	// vLLM 0.11.0; the source of vllm:prefix_cache_queries/_hits).
	PrefixQueries int
	PrefixHits    int
	// ScheduledNs is when the engine core scheduled this step, ns (set by
	// the caller; the scheduler has no clock). With async scheduling it is
	// the previous step's start.
	ScheduledNs int64
}

// Scheduler is vLLM V1's Scheduler (vllm/v1/core/sched/scheduler.py:
// schedule, update_from_output) under a scheduling policy (Config.Policy).
type Scheduler struct {
	cfg     Config
	Pool    *BlockPool
	running []*Request
	waiting Queue
	// numWaiting is waiting.Len(), kept here so the per-step checks make
	// no call through the policy's interface.
	numWaiting int
	policy     Policy
	arrivals   int64
	scratch    []int32 // computedBlocks' hit list
	co         cohort
	// OnPreempt, when set, is called with each request preempted by
	// recompute, as it happens (reports; nil costs nothing).
	OnPreempt func(*Request)
	// hashMemo holds repeated prompts' block hashes (hashmemo.go),
	// hashMemoN hashes in all.
	hashMemo  memoTable
	hashMemoN int
	// finished counts the requests Finish ended since the running list
	// was last compacted (compactRunning).
	finished int
}

// NewScheduler returns an empty scheduler over a fresh block pool.
func NewScheduler(cfg Config) *Scheduler {
	p := cfg.Policy
	if p == nil {
		p = FCFS
	}
	return &Scheduler{cfg: cfg, Pool: newBlockPool(cfg.NumBlocks, cfg.BlockSize, cfg.EnablePrefixCaching, cfg.ExpectBlocks),
		policy: p, waiting: p.NewQueue()}
}

// Config returns the scheduler's configuration.
func (s *Scheduler) Config() Config { return s.cfg }

// Add queues a new request in the waiting queue (FCFS: at the back) and
// stamps its arrival order.
func (s *Scheduler) Add(r *Request) {
	r.Status = Waiting
	r.Arrival = s.arrivals
	s.arrivals++
	s.waiting.Push(r)
	s.numWaiting++
}

// NumRunning and NumWaiting are the queue lengths.
func (s *Scheduler) NumRunning() int { return len(s.running) }

// NumWaiting is the number of waiting (including preempted) requests.
func (s *Scheduler) NumWaiting() int { return s.numWaiting }

// HasWork reports whether a step would schedule anything.
func (s *Scheduler) HasWork() bool { return len(s.running) > 0 || s.numWaiting > 0 }

// Schedule fills out with the next step: running requests first in
// admission order (preempting the policy's victim by recompute when KV
// blocks run out: FCFS the last running request), then, if nothing was
// preempted, waiting requests in the policy's order while max_num_seqs and
// the token budget allow.
func (s *Scheduler) Schedule(out *Step) {
	*out = Step{Items: out.Items[:0]}
	budget := s.cfg.MaxNumBatchedTokens
	start := 0
	if s.co.on {
		var ok bool
		if budget, ok = s.cohortSchedule(out, budget); ok {
			start = s.co.n // the members' part is scheduled
		} else {
			s.Dissolve()
		}
	}
	for i := start; i < len(s.running) && budget > 0; i++ {
		// Plain decode steps (nearly every item) in a call-free loop; it
		// stops at the first request that needs the general path below.
		if i, budget = s.decodes(out, i, budget); i >= len(s.running) || budget <= 0 {
			break
		}
		r := s.running[i]
		n := s.newTokens(r, r.NumComputed, budget)
		if n <= 0 {
			continue
		}
		if !s.allocate(r, r.NumComputed, n, nil) {
			ok, at, back := s.makeRoom(out, r, n, i)
			// at may point past the list when a skipped victim came before
			// r and r was last (vLLM's index then ends its loop).
			i, budget = min(at, len(s.running)-1), budget+back
			if !ok {
				break
			}
		}
		s.emit(out, r, n)
		budget -= n
	}
	preempted := out.NumPreempted > 0
	if !preempted {
		for s.numWaiting > 0 && budget > 0 && len(s.running) < s.cfg.MaxNumSeqs {
			r := s.waiting.Peek()
			var hit []int32
			touched := 0 // hit[:touched] are touched already (computedBlocks)
			if r.NumComputed == 0 {
				hit, touched = s.computedBlocks(r)
				if s.cfg.EnablePrefixCaching {
					out.PrefixQueries += r.NumTokens()
					out.PrefixHits += len(hit) * s.cfg.BlockSize
				}
			}
			computed := r.NumComputed + len(hit)*s.cfg.BlockSize
			cached := computed
			if r.NumComputed == 0 && r.ExternalTokens > computed {
				if touched > 0 {
					s.Pool.Untouch(hit[:touched])
				}
				hit, touched, computed = nil, 0, r.ExternalTokens // KV from the connector
			}
			n := s.newTokens(r, computed, budget)
			if n <= 0 || !s.allocateHit(r, computed, n, hit, touched) {
				if touched > 0 {
					s.Pool.Untouch(hit[:touched])
				}
				break
			}
			s.waiting.Pop()
			s.numWaiting--
			r.NumComputed = computed
			if !r.admitted {
				r.admitted = true
				r.CachedTokens = cached
			}
			r.Status = Running
			s.running = append(s.running, r)
			s.emit(out, r, n)
			budget -= n
		}
	}
	if out.NumItems() == 0 && preempted {
		// Every request to schedule was preempted (the victim may be the
		// request asking): vLLM runs the empty step and schedules again
		// at once; the step that runs carries the preemptions.
		n := out.NumPreempted
		s.Schedule(out)
		out.NumPreempted += n
		return
	}
	out.KVBlocksUsed = s.Pool.NumUsed()
	out.NumRunning = len(s.running)
	out.NumWaiting = s.numWaiting
}

// decodes is Schedule's running loop from index i for requests taking a
// plain decode step whose token fits the blocks they hold (allocate's
// fast path: no block becomes full): it emits them as emit would,
// skips requests that cannot be scheduled (in flight, or their last
// token already scheduled), and returns the index of the first request
// that needs more (a prefill chunk, new blocks, or n ≤ 0), with the
// budget left. No calls, so the loop stays in registers.
func (s *Scheduler) decodes(out *Step, i, budget int) (int, int) {
	// Room for every remaining request up front: no append in the loop.
	items := slices.Grow(out.Items, len(s.running)-i)
	bs := s.cfg.BlockSize
	var decodes, sampled int
	var ctxSum int64
	for ; i < len(s.running) && budget > 0; i++ {
		r := s.running[i]
		if r.InFlight || r.NumOutput+r.Pending >= r.MaxTokens {
			// In a batch still executing (PP), or its last token is already
			// scheduled (async: avoid scheduling an extra step).
			continue
		}
		c := r.NumComputed
		if c < r.PromptTokens || s.newTokens(r, c, budget) != 1 ||
			c+1 > len(r.Blocks)*bs || r.NumTokens() >= (r.numHashed+1)*bs {
			break
		}
		r.NumComputed = c + 1
		samples := c+1 >= r.known()
		if samples {
			r.Pending++
			sampled++
		}
		items = items[:len(items)+1]
		it := &items[len(items)-1]
		it.Req, it.NumNew, it.Computed, it.Decode, it.Samples = r, 1, c, true, samples
		decodes++
		ctxSum += int64(c + 1)
		budget--
	}
	out.Items = items
	out.NumTokens += decodes
	out.NumDecode += decodes
	out.DecodeCtxSum += ctxSum
	out.NumSampled += sampled
	return i, budget
}

// makeRoom allocates KV blocks for r (running[i]) and its n new tokens,
// which did not fit the free pool, preempting the policy's victims
// (counted in out) until they fit (kv_cache_manager.allocate_slots in
// scheduler.py's `while True` loop). It
// reports false when r itself was preempted, and returns r's index in
// the running list after the removals and the tokens that victims
// already scheduled in this step gave back to the budget.
//
// As vLLM's schedule loop, a victim before r that was scheduled in this
// step leaves the step (its tokens return to the budget) and the index
// steps back one; a victim before r that was skipped this step (in
// flight, or its last token already scheduled) leaves the index as it
// is, so the request after r is skipped in this step as in vLLM, where
// req_index -= 1 sits inside `if preempted_req in scheduled_running_reqs`.
// FCFS's victim is the last running request, never before r.
func (s *Scheduler) makeRoom(out *Step, r *Request, n, i int) (ok bool, idx, back int) {
	s.Dissolve() // victims and their items must be real
	for {
		v := s.policy.Victim(s.running)
		victim := s.running[v]
		s.running = slices.Delete(s.running, v, v+1)
		if v < i {
			if k := s.unschedule(out, victim); k > 0 {
				back += k
				i--
			}
		}
		s.preempt(victim)
		out.NumPreempted++
		if victim == r {
			return false, i, back
		}
		if s.allocate(r, r.NumComputed, n, nil) {
			return true, i, back
		}
	}
}

// unschedule takes r's item out of the step (r is being preempted) and
// returns the tokens it had; 0 when r was not in the step.
func (s *Scheduler) unschedule(out *Step, r *Request) int {
	for k := len(out.Items) - 1; k >= 0; k-- {
		it := out.Items[k]
		if it.Req != r {
			continue
		}
		out.Items = slices.Delete(out.Items, k, k+1)
		out.NumTokens -= it.NumNew
		if it.Decode {
			out.NumDecode--
			out.DecodeCtxSum -= int64(it.Computed + 1)
		} else {
			out.NumPrefill -= it.NumNew
			out.PrefillReqs--
		}
		if it.Samples {
			out.NumSampled--
		}
		return it.NumNew
	}
	return 0
}

// newTokens is how many tokens r may compute this step, given computed
// tokens already in its KV: the rest of its known tokens, capped by
// long_prefill_token_threshold, the remaining budget and max_model_len.
func (s *Scheduler) newTokens(r *Request, computed, budget int) int {
	n := r.known() - computed
	if t := s.cfg.LongPrefillTokenThreshold; t > 0 && n > t {
		n = t
	}
	if n > budget {
		n = budget
	}
	if lim := s.cfg.MaxModelLen - computed; n > lim {
		n = lim
	}
	return n
}

// emit adds r's n tokens to the step and advances its computed tokens
// (vLLM advances num_computed_tokens at schedule time). A request whose
// computed tokens catch up with its known tokens samples at the end of
// the step (a placeholder until then).
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) emit(out *Step, r *Request, n int) {
	decode := r.NumComputed >= r.PromptTokens && n == 1
	computed := r.NumComputed
	r.NumComputed += n
	samples := r.NumComputed >= r.known()
	if samples {
		r.Pending++
		out.NumSampled++
	}
	// Fill the new slot in place: a composite literal appended whole is
	// built on the stack and copied, which stalls on store forwarding.
	if len(out.Items) == cap(out.Items) {
		out.Items = append(out.Items, Scheduled{})
	} else {
		out.Items = out.Items[:len(out.Items)+1]
	}
	it := &out.Items[len(out.Items)-1]
	it.Req, it.NumNew, it.Computed, it.Decode, it.Samples = r, n, computed, decode, samples
	out.NumTokens += n
	if decode {
		out.NumDecode++
		out.DecodeCtxSum += int64(computed + 1)
	} else {
		out.NumPrefill += n
		out.PrefillReqs++
	}
}

// allocate reserves KV blocks for r to hold computed tokens (including
// the cache-hit blocks hit) and n new tokens (kv_cache_manager.py
// allocate_slots). It returns false, changing nothing, when the free pool
// (cached-but-unused blocks count as free) cannot supply them.
func (s *Scheduler) allocate(r *Request, computed, n int, hit []int32) bool {
	return s.allocateHit(r, computed, n, hit, 0)
}

// allocateHit is allocate of hits whose first touched blocks are touched
// already (computedBlocks): they left the free pool then, so the check
// counts the rest only.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (s *Scheduler) allocateHit(r *Request, computed, n int, hit []int32, touched int) bool {
	bs := s.cfg.BlockSize
	total := computed + n
	if len(hit) == 0 && total <= len(r.Blocks)*bs && r.NumTokens() < (r.numHashed+1)*bs {
		// fast path: fits the blocks held, no block newly full
		// (NumTokens/bs ≤ numHashed, without the division)
		return true
	}
	need := (total+bs-1)/bs - len(r.Blocks) - len(hit)
	if need < 0 {
		need = 0
	}
	if r.Blocks == nil {
		r.Blocks = make([]int32, 0, r.blocksHint(bs))
	}
	// The hit blocks no request holds leave the free pool: the check
	// need + evictable ≤ free needs their count only when the bound
	// evictable ≤ len(hit) does not already settle it (a pool with room,
	// the common case, skips a pass over the hit blocks).
	if free := s.Pool.NumFree(); need+len(hit)-touched > free {
		evictable := 0
		for _, b := range hit[touched:] {
			if s.Pool.meta[b].refCnt&refMask == 0 {
				evictable++
			}
		}
		if need+evictable > free {
			return false
		}
	}
	if len(hit) > 0 {
		if touched < len(hit) { // (computedBlocks touched every hit of a whole chain)
			s.Pool.Touch(hit[touched:])
		}
		if len(r.Blocks) == 0 && cap(r.Blocks) >= len(hit) && &r.Blocks[:1][0] == &hit[0] {
			r.Blocks = r.Blocks[:len(hit)] // computedBlocks gathered them in place
		} else {
			r.Blocks = append(r.Blocks, hit...)
		}
		r.numHashed = len(r.Blocks)
		r.numHit = len(hit) // (r held no block: the first admission)
	}
	if need > 0 {
		r.Blocks = s.Pool.Allocate(need, r.Blocks)
	}
	s.cacheFull(r, min(total, r.NumTokens())/bs)
	return true
}

// cacheFull indexes r's blocks numHashed … full − 1, now full, in the
// prefix cache (those others may share) and counts them hashed.
func (s *Scheduler) cacheFull(r *Request, full int) {
	if full <= r.numHashed { // nothing newly full (most calls)
		return
	}
	// Only the shareable blocks (the first numShareable) are indexed: a
	// unique prompt's blocks are not visited one by one (the loop was
	// 550 instructions a request on BenchmarkMillion).
	bs := s.cfg.BlockSize
	for j, end := r.numHashed, min(full, r.numShareable(bs)); j < end; j++ {
		s.Pool.cacheHeld(r.Blocks[j], r.blockHash(j, bs))
	}
	r.numHashed = full
}

// preempt frees r's blocks (tail first) and puts it at the front of the
// waiting queue to be recomputed from scratch. Its full blocks stay in the
// prefix cache (until evicted), so the recompute may hit its own blocks.
func (s *Scheduler) preempt(r *Request) {
	bs := s.cfg.BlockSize
	for j := 0; j < r.numHashed && j < len(r.Blocks); j++ {
		if !r.shareable(j, bs) {
			s.Pool.Cache(r.Blocks[j], r.blockHash(j, bs))
		}
	}
	s.Pool.FreeTailFirst(r.Blocks) // hashed above: not private
	r.Blocks = r.Blocks[:0]
	r.numHashed, r.numHit = 0, 0
	r.NumComputed = 0
	r.Pending = 0
	r.ExternalTokens = 0
	r.Preemptions++
	r.Status = Preempted
	s.waiting.Prepend(r)
	s.numWaiting++
	if s.OnPreempt != nil {
		s.OnPreempt(r)
	}
}

// freeBlocks frees r's blocks, tail first. Unless r was preempted, its
// blocks past the shareable ones (numShareable) and the cache hits it
// took (CachedTokens) were allocated for it alone and never cached: no
// other request holds them and they hold no hash, so FreeTailPrivate
// queues them lazily; its first numHit blocks are cache hits, which hold
// their hashes. Where the hits went in the free queue is its prompt's
// memo's chainRun, for the prompt's next request (touchChain).
func (s *Scheduler) freeBlocks(r *Request) {
	from, hits := len(r.Blocks), 0
	if r.Preemptions == 0 {
		bs := s.cfg.BlockSize
		from = min(from, max(r.numShareable(bs), r.CachedTokens/bs))
		hits = min(r.numHit, from)
	}
	seq, run := s.Pool.freeTailPrivate(r.Blocks, from, hits)
	if m := r.memo; run > 0 && m != nil && m.owner == s {
		m.run = chainRun{seq: seq, lo: int32(hits - run), end: int32(hits), epoch: s.Pool.epoch, ok: true}
	}
	r.Blocks = r.Blocks[:0]
	r.numHashed = 0
}
