package engine

// Prompt hash memo. A full prompt block's chained hash depends only on the
// prompt's content identities (PrefixKey and its length, ContentKey) and
// the block size (blockHash), so requests that repeat a prompt (a
// shared-prefix dataset's questions, repeated trace prompts) have the same
// hashes for it. The scheduler keeps each such prompt's hashes once and
// copies them into a request at admission instead of recomputing them
// block by block (the recomputation was 10 % of BenchmarkSimulateCodegen's
// instructions). The hashes are the values blockHash gives: outputs
// cannot change. Each entry also keeps the blocks the prefix cache gave
// for the prompt at its latest lookup (promptMemo.chain), so the next
// request's hits are checked and touched in one pass (computedBlocks).

// hashMemoMax bounds the hashes remembered, all prompts together (512 KiB
// a scheduler, so DP ranks and replicas stay small; the codegen run keeps
// 100 prompts of 37 blocks). A pure cache: a prompt not kept is computed
// as before.
const hashMemoMax = 1 << 16

// promptID is what a prompt's full blocks' hashes depend on: for a
// unique prompt (UniquePrompt) only its shared prefix is kept (content 0).
type promptID struct {
	prefixKey, contentKey uint64
	prefixTokens, tokens  int
}

// promptMemo is one prompt's entry in the memo: its full blocks' hashes
// and the chain of blocks the prefix cache mapped the first of them to
// at the latest lookup (computedBlocks), so that the next request with
// the prompt finds its cache hits by checking that each block still
// holds its hash (BlockPool.touchChain: the block's state, which Touch
// reads anyway) instead of probing the cache's index block by block.
type promptMemo struct {
	id     promptID
	hashes []uint64
	chain  []int32
	owner  *Scheduler // the scheduler whose pool's blocks chain names
	// run is where the latest request with the prompt to finish left
	// its hits in the free queue (Scheduler.freeBlocks, touchChain).
	run chainRun
}

// memoTable is the memo's entries by promptID: open addressing with
// linear probing, grown at half full, never deleted from. A Go map with
// the 32-byte key cost ~180 instructions a lookup (hashing the key), one
// per admission (BenchmarkSimulateCodegen).
type memoTable struct {
	slots []*promptMemo // nil: empty
	n     int
}

// home is id's first slot under mask.
func (id *promptID) home(mask uint64) uint64 {
	return mix64(id.prefixKey^id.contentKey*0x9e3779b97f4a7c15^uint64(id.prefixTokens)<<32^uint64(id.tokens)) & mask
}

// get returns id's entry, or nil.
func (t *memoTable) get(id promptID) *promptMemo {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := id.home(mask); ; i = (i + 1) & mask {
		if m := t.slots[i]; m == nil || m.id == id {
			return m
		}
	}
}

// put adds m (its id not present).
func (t *memoTable) put(m *promptMemo) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]*promptMemo, max(16, 2*len(old)))
		t.n = 0
		for _, e := range old {
			if e != nil {
				t.put(e)
			}
		}
	}
	mask := uint64(len(t.slots) - 1)
	i := m.id.home(mask)
	for t.slots[i] != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = m
	t.n++
}

// seedHashes gives r the hashes of its first full blocks from the memo,
// or computes them and keeps them there: every full block of a prompt
// other requests may repeat, the full blocks of the shared prefix of a
// unique one. Requests with explicit segments (conversations) and those
// already holding hashes are left to blockHash.
func (s *Scheduler) seedHashes(r *Request) {
	bs := s.cfg.BlockSize
	if r.Segments != nil || (r.hashBS == bs && len(r.hashes) > 0) {
		return
	}
	id := promptID{prefixKey: r.PrefixKey, prefixTokens: r.PrefixTokens}
	n := r.PromptTokens / bs
	if r.UniquePrompt {
		n = min(r.PrefixTokens, r.PromptTokens) / bs
	} else {
		id.contentKey, id.tokens = r.ContentKey, r.PromptTokens
	}
	if n == 0 {
		return
	}
	if m := s.hashMemo.get(id); m != nil {
		h := m.hashes
		if r.hashes == nil {
			r.hashes = make([]uint64, 0, max(len(h), r.blocksHint(bs)))
		}
		r.hashes, r.hashBS, r.memo = append(r.hashes[:0], h...), bs, m
		return
	}
	r.blockHash(n-1, bs)
	if s.hashMemoN+n <= hashMemoMax {
		r.memo = &promptMemo{id: id, hashes: append([]uint64(nil), r.hashes[:n]...), owner: s}
		s.hashMemo.put(r.memo)
		s.hashMemoN += n
	}
}

// computedBlocks returns the longest run of cached full blocks of r's
// tokens, leaving at least one token to compute (kv_cache_manager.py
// get_computed_blocks: max_cache_hit_length = num_tokens − 1), and how
// many of them, from the first, it touched already (BlockPool.Touch):
// those its prompt's memo chain gave (BlockPool.touchChain); the caller
// touches the rest when it admits r, or untouches those (Untouch). The
// list lives in r.Blocks' array when r holds no block (r.Blocks stays
// empty: allocateHit takes them in place), else in s.scratch; either is
// valid until the next call.
func (s *Scheduler) computedBlocks(r *Request) ([]int32, int) {
	if !s.cfg.EnablePrefixCaching {
		return nil, 0
	}
	bs := s.cfg.BlockSize
	maxBlocks := (r.known() - 1) / bs
	if maxBlocks > 0 {
		s.seedHashes(r)
	}
	// The hashes seeded are read in place (blockHash computes the rest).
	seeded := 0
	if r.hashBS == bs && s.Pool.caching {
		seeded = min(len(r.hashes), maxBlocks)
	}
	// A request holding no block gathers its hits in place, where
	// allocateHit then finds them (copying them there was ~60
	// instructions an admission).
	hit, all, inPlace := s.scratch[:0], true, len(r.Blocks) == 0
	if inPlace {
		if r.Blocks == nil {
			r.Blocks = make([]int32, 0, r.blocksHint(bs))
		}
		hit = r.Blocks
	}
	j := 0 // hashes[:j] found
	m := r.memo
	if m != nil && seeded > 0 && m.owner == s {
		hit, j = s.Pool.touchChain(m.chain, r.hashes[:seeded], hit, &m.run)
	}
	if j < seeded {
		hit, all = s.Pool.cached.hits(r.hashes[j:seeded], hit)
		if m != nil && m.owner == s && (j < len(m.chain) || len(hit) > j) {
			// The chain broke at j, or the index found more past it.
			m.chain = append(m.chain[:0], hit[:min(len(hit), len(m.hashes))]...)
		}
	}
	for i := seeded; i < maxBlocks && all; i++ {
		b := s.Pool.Lookup(r.blockHash(i, bs))
		if b < 0 {
			break
		}
		hit = append(hit, b)
	}
	if !inPlace {
		s.scratch = hit
	}
	return hit, j
}
