package engine

// mix64 is the splitmix64 finalizer: a fast, well-distributed 64-bit mix.
// Block hashes only need to be collision-free in practice, as vLLM's
// sha256/xxhash chains are; they are never compared across runs.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// ChainHash is a full block's hash chained on its parent's hash and its
// content identity, as vLLM's hash_block_tokens(parent_hash, token_ids).
// Never 0 (0 marks "no hash").
func ChainHash(parent, content uint64) uint64 {
	h := mix64(parent*0x9e3779b97f4a7c15 ^ mix64(content+0x632be59bd9b4e019))
	if h == 0 {
		h = 1
	}
	return h
}

// ContentID names the tokens of block index i of a content stream key.
func ContentID(key uint64, i int) uint64 { return mix64(key ^ uint64(i)*0xd6e8feb86659fd93) }
