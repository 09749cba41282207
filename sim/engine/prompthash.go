package engine

// PromptBlockHashes appends to dst the hashes a prefix-aware router
// computes from r's prompt when it hashes blocks of every × bs tokens
// (bs the engine's block size): for each full router block k < n, the
// chained hash of its last engine block, which names the prompt up to
// the end of that router block as a chain of router-block hashes would.
// The engine's hashes are kept on r, so the engine does not compute them
// again.
func (r *Request) PromptBlockHashes(bs, every, n int, dst []uint64) []uint64 {
	n = min(n, r.PromptTokens/(bs*every))
	for k := 1; k <= n; k++ {
		dst = append(dst, r.blockHash(k*every-1, bs))
	}
	return dst
}

// Mix64 is the splitmix64 finalizer the engine's block hashes use, for
// other packages that need well-mixed 64-bit keys (the router's hash
// ring and tables).
func Mix64(x uint64) uint64 { return mix64(x) }
