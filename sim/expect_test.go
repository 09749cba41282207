package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The block pool's first allocation is sized to the plan: 100 requests
// of 512 prompt and 128 output tokens in 16-token blocks are 100 × 40
// blocks, plus one a request for a partial block: 4,100; a Setup not
// built by Resolve (no plan counted) leaves it unknown.
func TestEngineConfigExpectsThePlansBlocks(t *testing.T) {
	st, err := Resolve(millionScenario(100))
	require.NoError(t, err)
	cfg := st.engineConfig(st.Pools[0])
	require.Equal(t, 16, cfg.BlockSize)
	require.Equal(t, 4100, cfg.ExpectBlocks)
	require.Equal(t, 0, (&Setup{}).engineConfig(st.Pools[0]).ExpectBlocks)
}
