package engine

// Prompt hash memo. A full prompt block's chained hash depends only on the
// prompt's content identities (PrefixKey and its length, ContentKey) and
// the block size (blockHash), so requests that repeat a prompt (a
// shared-prefix dataset's questions, repeated trace prompts) have the same
// hashes for it. The scheduler keeps each such prompt's hashes once and
// copies them into a request at admission instead of recomputing them
// block by block (the recomputation was 10 % of BenchmarkSimulateCodegen's
// instructions). The hashes are the values blockHash gives: outputs
// cannot change.

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
	if h, ok := s.hashMemo[id]; ok {
		if r.hashes == nil {
			r.hashes = make([]uint64, 0, max(len(h), r.blocksHint(bs)))
		}
		r.hashes, r.hashBS = append(r.hashes[:0], h...), bs
		return
	}
	r.blockHash(n-1, bs)
	if s.hashMemoN+n <= hashMemoMax {
		if s.hashMemo == nil {
			s.hashMemo = map[promptID][]uint64{}
		}
		s.hashMemo[id] = append([]uint64(nil), r.hashes[:n]...)
		s.hashMemoN += n
	}
}
