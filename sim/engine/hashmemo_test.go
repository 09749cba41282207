package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A prompt's hashes seeded from the memo are the ones blockHash computes
// for a fresh request, for a repeated prompt (every full prompt block)
// and for a unique one (its shared prefix's full blocks, the rest
// computed after them); output blocks stay the request's own.
func TestSeedHashesEqualComputed(t *testing.T) {
	s := NewScheduler(cfg(8, 2048, 64, true))
	for _, unique := range []bool{false, true} {
		mk := func(id int) *Request {
			return &Request{ID: id, PromptTokens: 100, MaxTokens: 40, PrefixKey: 7, PrefixTokens: 37,
				ContentKey: 99, UniquePrompt: unique}
		}
		first, second := mk(1), mk(2)
		s.seedHashes(first)
		s.seedHashes(second) // from the memo
		want := 100 / 16
		if unique {
			want = 37 / 16
		}
		require.Len(t, second.hashes, want)
		for _, r := range []*Request{first, second} {
			fresh := mk(r.ID) // computed block by block, no memo
			for i := 0; i < 140/16; i++ {
				assert.Equal(t, fresh.blockHash(i, 16), r.blockHash(i, 16), "request %d block %d", r.ID, i)
			}
		}
		assert.NotEqual(t, first.blockHash(6, 16), second.blockHash(6, 16), "a block with output tokens is the request's own")
	}
	assert.Equal(t, 2, s.hashMemo.n)
	assert.Equal(t, 100/16+37/16, s.hashMemoN)
}

// The memo keeps at most hashMemoMax hashes; a prompt past the bound is
// hashed as before, and right.
func TestSeedHashesMemoBounded(t *testing.T) {
	s := NewScheduler(cfg(8, 2048, 64, true))
	blocks := hashMemoMax / 16
	for k := 0; k <= 16; k++ {
		r := &Request{ID: k, PromptTokens: blocks * 16, MaxTokens: 1, ContentKey: uint64(100 + k)}
		s.seedHashes(r)
		fresh := &Request{ID: k, PromptTokens: blocks * 16, MaxTokens: 1, ContentKey: uint64(100 + k)}
		for _, i := range []int{0, blocks / 2, blocks - 1} {
			require.Equal(t, fresh.blockHash(i, 16), r.blockHash(i, 16), "prompt %d block %d", k, i)
		}
	}
	assert.Equal(t, 16, s.hashMemo.n)
	assert.Equal(t, hashMemoMax, s.hashMemoN)
}

// The memo's table finds every entry put, and nothing else, as a Go map
// does, across its growths (ids from a small key space, so homes collide
// and probes run).
func TestMemoTableMatchesMap(t *testing.T) {
	var tab memoTable
	ref := map[promptID]*promptMemo{}
	rng := rand.New(rand.NewPCG(3, 4))
	id := func() promptID {
		return promptID{prefixKey: uint64(rng.IntN(4)), contentKey: uint64(rng.IntN(30)), prefixTokens: 16 * rng.IntN(3), tokens: 100 + rng.IntN(5)}
	}
	for i := 0; i < 3000; i++ {
		k := id()
		if want := ref[k]; tab.get(k) != want {
			t.Fatalf("op %d: get(%v) = %p, want %p", i, k, tab.get(k), want)
		}
		if ref[k] == nil && rng.IntN(2) == 0 {
			m := &promptMemo{id: k}
			tab.put(m)
			ref[k] = m
		}
	}
	require.Equal(t, len(ref), tab.n)
	for k, m := range ref {
		require.Same(t, m, tab.get(k))
	}
}
