package profiles

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WeightShapes is Weights under short names: the same weights in the same
// order, a layer's named "model.layers.<layer>." + its short name, on
// every embedded model.
func TestWeightShapesAreWeights(t *testing.T) {
	checked := 0
	for _, name := range EmbeddedModels() {
		m, err := LoadModel(name)
		if err != nil {
			continue // a model Frontier does not simulate
		}
		checked++
		named, short := m.Weights(), m.WeightShapes()
		require.Len(t, short, len(named), name)
		for i, w := range short {
			full := w.Name
			if w.Layer >= 0 {
				full = "model.layers." + strconv.Itoa(w.Layer) + "." + w.Name
			}
			assert.Equal(t, named[i].Name, full, name)
			w.Name = named[i].Name
			assert.Equal(t, named[i], w, name)
		}
	}
	assert.Greater(t, checked, 10, "models compared")
}
