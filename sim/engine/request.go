package engine

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
// Prompt content is described by identities, not token ids: the first
// PrefixTokens tokens are the content PrefixKey (shared by a prefix group),
// the rest of the prompt is ContentKey (shared by repeats of one prompt),
// and generated tokens are unique to the request. A full block's hash
// chains those identities exactly as vLLM chains token ids, so two
// requests share a cached block exactly when their prompts share that
// block's whole prefix.
type Request struct {
	// The fields every step reads come first, so a running request's
	// per-step work touches as few cache lines as possible.

	Status Status
	// InFlight marks a request inside a batch still executing (pipeline
	// parallelism); the scheduler skips it.
	InFlight bool
	// HoldKV keeps a finished request's blocks until Release (a prefill
	// instance keeps the KV until the transfer to the decode side is done).
	HoldKV   bool
	admitted bool

	NumComputed int // tokens whose KV is computed (advanced at schedule time)
	NumOutput   int // output tokens sampled
	// Pending counts output tokens scheduled but not yet sampled: async
	// scheduling's placeholders (num_output_placeholders), so the next
	// step can be scheduled before this one's tokens exist.
	Pending      int
	PromptTokens int
	MaxTokens    int // output tokens to generate (ignore_eos)
	Blocks       []int32
	numHashed    int

	// Data is the owner's per-request record (sim's metrics).
	Data any

	ID           int
	PrefixKey    uint64
	PrefixTokens int
	ContentKey   uint64
	// UniquePrompt says no other request repeats this prompt beyond its
	// shared prefix (random datasets, traces): its own blocks can then only
	// be hit by itself after a preemption, so they are indexed in the
	// prefix cache only when it is preempted, not at every allocation.
	// The hits are the same as vLLM's; the work is less.
	UniquePrompt bool

	Preemptions int
	// CachedTokens is the prefix-cache hit at first admission, tokens.
	CachedTokens int
	// ExternalTokens are prompt tokens whose KV arrives through a KV
	// connector (disaggregated decode): at first admission they count as
	// computed, and blocks are allocated for them. Preemption drops them
	// (the remote copy is gone; the request recomputes).
	ExternalTokens int

	hashes []uint64
}

// NumTokens is prompt plus generated tokens.
func (r *Request) NumTokens() int { return r.PromptTokens + r.NumOutput }

// known is prompt plus generated plus placeholder tokens: what the
// scheduler may compute.
func (r *Request) known() int { return r.PromptTokens + r.NumOutput + r.Pending }

// shareable reports whether full block i can be a prefix-cache hit for
// another request: it lies in the shared prefix, or in a prompt that
// other requests repeat.
func (r *Request) shareable(i, bs int) bool {
	end := (i + 1) * bs
	return end <= r.PrefixTokens || (end <= r.PromptTokens && !r.UniquePrompt)
}

// blockHash returns the chained hash of full block i (tokens [i·bs, (i+1)·bs)).
func (r *Request) blockHash(i, bs int) uint64 {
	if r.hashes == nil {
		r.hashes = make([]uint64, 0, min((r.PromptTokens+r.MaxTokens)/bs+1, 1024))
	}
	for len(r.hashes) <= i {
		j := len(r.hashes)
		end := (j + 1) * bs
		var content uint64
		switch {
		case end <= r.PrefixTokens:
			content = ContentID(r.PrefixKey, j)
		case end <= r.PromptTokens:
			content = ContentID(r.ContentKey, j)
		default:
			content = ContentID(r.ContentKey^mix64(uint64(r.ID)+0x51ed27), j)
		}
		parent := uint64(0x84222325)
		if j > 0 {
			parent = r.hashes[j-1]
		}
		r.hashes = append(r.hashes, ChainHash(parent, content))
	}
	return r.hashes[i]
}
