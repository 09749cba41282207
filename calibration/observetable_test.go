package calibration

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gate --observations prints Markdown: each run's name is a heading, so
// pasted into a page the names render as such (newcomer2 C2: a bare line
// became a paragraph run into the previous table's end).
func TestRenderObservationsMarkdown(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, RenderObservations(&b, "run-a", []ObservationBin{{BatchLo: 0, BatchHi: 32, ContextLo: 0, ContextHi: 800,
		RealN: 10, RealBatch: 18, RealCtx: 714, RealTPOTMs: 8.5, SimN: 9, SimTPOTMs: 8.6, StepMs: 8.4}}))
	assert.Equal(t, "### run-a\n\n"+
		"| running | context | real n | real batch × ctx | real ms/token | sim n | sim ms/token | decode step ms | real / step |\n"+
		"| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n"+
		"| 0–32 | 0–800 | 10 | 18 × 714 | 8.5 | 9 | 8.6 | 8.4 | 1.01 |\n\n", b.String())
}
