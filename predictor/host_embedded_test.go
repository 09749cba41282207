package predictor

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbeddedHostIsTheFilesHost: embeddedHost reads only up to the
// calibration file's "host" object; it must be what unmarshalling the
// whole file gives (the defaults overlaid with every term the file names),
// and the file must set terms the defaults do not have.
func TestEmbeddedHostIsTheFilesHost(t *testing.T) {
	want := DefaultHost()
	f := struct {
		Host *HostModel `json:"host"`
	}{Host: &want}
	require.NoError(t, json.Unmarshal(h100Calibration, &f))
	got, ok := embeddedHost()
	require.True(t, ok)
	assert.Equal(t, want, got)
	assert.NotEqual(t, DefaultHost(), got, "the file's fit differs from the defaults")
	h, note := DefaultHostFor("h200-sxm")
	assert.Equal(t, want, h)
	assert.Equal(t, "host model: the h100-sxm calibration (vLLM's CPU-side terms) also used for h200-sxm", note)
}
