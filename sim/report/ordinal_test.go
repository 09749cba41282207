package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// English ordinals for the trace's "every k-th request" (was "every 2-th").
func TestOrdinal(t *testing.T) {
	for k, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th",
		21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th"} {
		assert.Equal(t, want, ordinal(k), k)
	}
	assert.Equal(t, "trace: 1000 of 2000 requests traced (every 2nd request ID, --trace-max-requests 1000); every step is in it",
		NewTrace(&bytes.Buffer{}, 1000, 2000).Note())
}
