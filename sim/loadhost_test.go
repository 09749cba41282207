package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/predictor"
)

// A calibration file must be calibrate's JSON with a valid "host" object;
// fields it leaves out keep the committed fit.
func TestLoadHost(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	fit, _ := predictor.DefaultHostFor("h100-sxm")

	h, err := LoadHost(write("partial.json", `{"host": {"api_token_ns": 50000}}`))
	require.NoError(t, err)
	want := fit
	want.APITokenNs = 50000
	assert.Equal(t, want, h)

	for _, tc := range []struct{ name, body, msg string }{
		{"empty.json", `{}`, `no "host" object`},
		{"null.json", `{"host": null}`, `no "host" object`},
		{"yaml.json", "# a scenario\nname: x\n", "not a calibration file"},
		{"unknown.json", `{"host": {"step_gap": 1}}`, `unknown field "step_gap"`},
		{"negative.json", `{"host": {"step_gap_ns": -5000000}}`, "host.step_gap_ns: must be a number of ns in [0, 1e+12]"},
		{"huge.json", `{"host": {"request_overhead_ns": 1e300}}`, "host.request_overhead_ns"},
		{"string.json", `{"host": {"layer_gap_ns": "7"}}`, "host"},
	} {
		_, err := LoadHost(write(tc.name, tc.body))
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.msg, tc.name)
	}
}
