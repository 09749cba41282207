package engine

import "math"

// Status is where a request is in the engine core.
type Status uint8

// Request states, as vLLM's RequestStatus.
const (
	Waiting Status = iota
	Running
	Preempted
	Finished
	Aborted
)

// Request is one request inside an engine core. Token counts are tokens.
//
// Content is described by identities, not token ids. A token's identity is
// its content stream (a 64-bit key) and its position in the sequence. The
// prompt is a list of segments of streams: Segments when set (a
// conversation: system prompt, earlier messages and replies, the new
// message), else the two segments PrefixKey (the first PrefixTokens
// tokens, shared by a prefix group) and ContentKey (the rest of the
// prompt, shared by repeats of one prompt). Generated tokens are the
// stream OutputKey, so a later prompt (the session's next turn) can
// contain them. A full block's hash chains its parent's hash and the
// identities of its tokens, as vLLM's hash_block_tokens chains token ids
// (vllm/v1/core/kv_cache_utils.py), so two requests share a cached block
// exactly when their sequences agree up to that block's end, across the
// prompt/output boundary too.
type Request struct {
	// The fields every step reads come first, so a running request's
	// per-step work touches as few cache lines as possible: a decode
	// cohort's hot loops (steadyWork and dueWork taking a member's block,
	// compactRunning renumbering the running list) read only Status,
	// Blocks, numHashed, coLast and coIdx, all in the first 56 bytes
	// (they were on three cache lines: Blocks across the first two, the
	// cohort fields at the end); then the counts the rest of a step
	// reads; then, in 64 bytes, what freeing its blocks reads
	// (Scheduler.freeBlocks: Preemptions … UniquePrompt; they were on
	// four lines). BenchmarkSimulateCodegen, cachegrind with a fully
	// associative 32 KiB D1 (no layout luck; a set-associative one varies
	// ±10 % from one process to the next as addresses fall): see the
	// commit that laid it out so.

	Status Status
	// InFlight marks a request inside a batch still executing (pipeline
	// parallelism); the scheduler skips it.
	InFlight bool
	// HoldKV keeps a finished request's blocks until Release (a prefill
	// instance keeps the KV until the transfer to the decode side is done).
	HoldKV   bool
	admitted bool
	// heapAt is the request's index in an ordered waiting queue's heap
	// while it waits there (OrderedQueue), so that Remove finds it at
	// once. It fills the padding before Blocks: no extra bytes.
	heapAt int32

	Blocks    []int32
	numHashed int
	// A cohort member's place (cohort.go): its first and last cohort
	// cycles, the latest cycles whose schedule and sample its counts
	// include, and its index in the running list (coLast and coIdx here,
	// with the fields the cohort's loops read; the others below).
	coLast, coIdx int

	NumComputed int // tokens whose KV is computed (advanced at schedule time)
	NumOutput   int // output tokens sampled
	// Pending counts output tokens scheduled but not yet sampled: async
	// scheduling's placeholders (num_output_placeholders), so the next
	// step can be scheduled before this one's tokens exist.
	Pending      int
	PromptTokens int
	MaxTokens    int // output tokens to generate (ignore_eos)

	coFirst, coSched, coSampled int

	// UniquePrompt says no other request repeats this prompt beyond its
	// shared prefix (random datasets, traces): its own blocks can then only
	// be hit by itself after a preemption, so they are indexed in the
	// prefix cache only when it is preempted, not at every allocation.
	// The hits are the same as vLLM's; the work is less.
	UniquePrompt bool

	Preemptions int
	// CachedTokens is the prefix-cache hit at first admission, tokens.
	CachedTokens int
	// numHit is how many of r's first blocks are cache hits it took at
	// admission (held since: they hold their hashes).
	numHit int
	// memo is the scheduler's memo entry of r's prompt (seedHashes), whose
	// leading hashes r.hashes repeats; nil if none.
	memo         *promptMemo
	PrefixTokens int
	// ReusedTokens is how many tokens from the start of the sequence
	// (prompt, then output) a later request's prompt repeats: a session
	// turn followed by another turn repeats all of them. Their full
	// blocks, generated ones included, are indexed as they fill, as vLLM
	// caches every full block; with UniquePrompt the rest is indexed only
	// on preemption.
	ReusedTokens int

	// Data is the owner's per-request record (sim's metrics).
	Data any

	ID         int
	PrefixKey  uint64
	ContentKey uint64
	// Segments, when set, is the prompt's content (PrefixKey and ContentKey
	// then name no tokens): segment i holds the tokens from segment i−1's
	// End to its own End of stream Key. Ends increase; the last is at
	// least PromptTokens.
	Segments []Segment
	// OutputKey is the stream of the generated tokens; 0 = a stream unique
	// to this request.
	OutputKey uint64

	// Priority is the request's priority (the OpenAI API's "priority"
	// field, 0 by default): under the priority policy a lower value is
	// served first.
	Priority int
	// Arrival is the request's arrival order at its engine core, set by
	// Scheduler.Add. It stands for vLLM's arrival_time: a request reaches
	// the engine core in the order the API server took it in, so ordering
	// by either is the same.
	Arrival int64

	// ExternalTokens are prompt tokens whose KV arrives through a KV
	// connector (disaggregated decode): at first admission they count as
	// computed, and blocks are allocated for them. Preemption drops them
	// (the remote copy is gone; the request recomputes).
	ExternalTokens int

	hashes []uint64
	hashBS int // the block size hashes were computed for

	// coBase is the cohort's base (cohort.base) since r joined one:
	// r.coIdx − *coBase is its index in the running list while a member
	// (CohortIndex). Last: read only for a finishing member.
	coBase *int
}

// InheritHashes gives r the block hashes prev computed for its first
// tokens, tokens r repeats from the start (a session's next turn repeats
// the previous turn's prompt and reply): identical tokens give identical
// chained hashes, so r need not compute them again. A hash is recomputed
// if r's engine has another block size.
func (r *Request) InheritHashes(prev *Request, tokens int) {
	if prev.hashBS == 0 || tokens < prev.hashBS {
		return
	}
	bs := prev.hashBS
	n := min(len(prev.hashes), tokens/bs)
	if cap(r.hashes) < n {
		r.hashes = make([]uint64, 0, max(n, r.blocksHint(bs)))
	}
	r.hashes, r.hashBS = append(r.hashes[:0], prev.hashes[:n]...), bs
}

// Reset makes r a zero Request but for its block and hash buffers (kept,
// emptied), so that a finished request's memory serves the next one
// instead of becoming garbage: the caller then sets the new request's
// fields in place (building a Request and copying it in was 110
// instructions a request). r must hold no blocks.
func (r *Request) Reset() {
	blocks, hashes := r.Blocks[:0], r.hashes[:0]
	*r = Request{}
	r.Blocks, r.hashes = blocks, hashes
}

// NumTokens is prompt plus generated tokens.
func (r *Request) NumTokens() int { return r.PromptTokens + r.NumOutput }

// known is prompt plus generated plus placeholder tokens: what the
// scheduler may compute.
func (r *Request) known() int { return r.PromptTokens + r.NumOutput + r.Pending }

// Segment is a run of prompt tokens from one content stream: the tokens
// from the previous segment's End up to End (tokens from the start of the
// prompt, exclusive) are the positions of stream Key.
type Segment struct {
	Key uint64
	End int
}

// shareable reports whether full block i can be a prefix-cache hit for
// another request: it lies in the shared prefix, in the part a later
// request repeats, or in a prompt that other requests repeat.
func (r *Request) shareable(i, bs int) bool {
	end := (i + 1) * bs
	return end <= r.PrefixTokens || end <= r.ReusedTokens || (end <= r.PromptTokens && !r.UniquePrompt)
}

// numShareable is how many of r's first full blocks are shareable: block
// i is exactly when i < numShareable(bs), since shareable's condition,
// (i + 1)·bs ≤ one of three token counts, holds for every block below a
// shareable one.
func (r *Request) numShareable(bs int) int {
	limit := max(r.PrefixTokens, r.ReusedTokens)
	if !r.UniquePrompt {
		limit = max(limit, r.PromptTokens)
	}
	return limit / bs
}

// outputKey is the generated tokens' stream: OutputKey, or one unique to
// the request.
func (r *Request) outputKey() uint64 {
	if r.OutputKey != 0 {
		return r.OutputKey
	}
	return r.ContentKey ^ mix64(uint64(r.ID)+0x51ed27)
}

// segment returns the stream of the token at position pos and the
// position where that stream's segment ends.
func (r *Request) segment(pos int) (uint64, int) {
	switch {
	case pos >= r.PromptTokens:
		return r.outputKey(), math.MaxInt
	case r.Segments == nil && pos < r.PrefixTokens:
		return r.PrefixKey, r.PrefixTokens
	case r.Segments == nil:
		return r.ContentKey, r.PromptTokens
	}
	lo, hi := 0, len(r.Segments) // first segment ending after pos
	for lo < hi {
		if m := (lo + hi) / 2; r.Segments[m].End > pos {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(r.Segments) {
		return r.ContentKey, r.PromptTokens
	}
	return r.Segments[lo].Key, min(r.Segments[lo].End, r.PromptTokens)
}

// blocksHint is the capacity r's block and hash lists start with: the
// blocks its prompt and max_tokens fill at block size bs (tokens), at
// most 1,024 (a longer request grows its lists).
func (r *Request) blocksHint(bs int) int { return min((r.PromptTokens+r.MaxTokens)/bs+1, 1024) }

// blockHash returns the chained hash of full block i (tokens [i·bs, (i+1)·bs)).
// A block inside one stream is that stream's block content; a block
// spanning streams mixes in every stream and where it starts.
//
// Out of line (issue 10): PGO would copy it into each hot caller,
// more code than the instruction cache holds.
//
//go:noinline
func (r *Request) blockHash(i, bs int) uint64 {
	if r.hashBS != bs { // first use, or inherited for another block size
		if r.hashes == nil {
			r.hashes = make([]uint64, 0, r.blocksHint(bs))
		}
		r.hashes, r.hashBS = r.hashes[:0], bs
	}
	for len(r.hashes) <= i {
		j := len(r.hashes)
		start := j * bs
		key, end := r.segment(start)
		content := ContentID(key, j)
		for end < start+bs {
			next, nextEnd := r.segment(end)
			content = mix64(content*0x9e3779b97f4a7c15 ^ ContentID(next, j) ^ uint64(end-start))
			end = nextEnd
		}
		parent := uint64(0x84222325)
		if j > 0 {
			parent = r.hashes[j-1]
		}
		r.hashes = append(r.hashes, ChainHash(parent, content))
	}
	return r.hashes[i]
}
