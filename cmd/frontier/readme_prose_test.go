package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateOut runs `frontier gate` over the shipped cells with args.
func gateOut(t *testing.T, args ...string) string {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append([]string{"gate", "--cells", "../../scenarios/gate"}, args...))
	require.NoError(t, root.Execute())
	return out.String()
}

// The figures the README's Accuracy prose quotes from the gate are the
// gate's: newcomer2 C1 found "1.70 % against 1.57 %" where the gate reads
// 1.68 and 1.54, and two observation rows 0.1–0.2 ms off, because only
// the generated block was tested.
func TestREADMEAccuracyProseIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gate three times")
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")

	median := func(args ...string) string {
		var rows []struct {
			RelErr float64 `json:"rel_err"`
			Gated  bool    `json:"gated"`
		}
		require.NoError(t, json.Unmarshal([]byte(gateOut(t, append([]string{"--format", "json"}, args...)...)), &rows))
		var v []float64
		for _, r := range rows {
			if r.Gated {
				v = append(v, r.RelErr)
			}
		}
		sort.Float64s(v)
		m := v[len(v)/2]
		if len(v)%2 == 0 {
			m = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return fmt.Sprintf("%.2f %%", 100*m)
	}
	want := "median gated error " + median("--predictor", "regression") + " against " + median() + ","
	assert.True(t, strings.Contains(text, want), "README's Accuracy prose lacks %q", want)

	// Each row of the README's observation table (real n, ms/token real
	// and simulated, decode step, ratio) is a row of gate --observations.
	obs := gateOut(t, "--observations")
	cli := regexp.MustCompile(`(?m)^\| [^|]+ \| [^|]+ \| (\d+) \| (\d+) × (\d+) \| ([\d.]+) \| \d+ \| ([\d.–]+) \| ([\d.]+) \| ([\d.]+) \|$`)
	type row struct{ n, batch, ctx, real, sim, step, ratio string }
	have := map[[2]string]row{}
	for _, m := range cli.FindAllStringSubmatch(obs, -1) {
		have[[2]string{m[1], m[4]}] = row{m[1], m[2], m[3], m[4], m[5], m[6], m[7]}
	}
	doc := regexp.MustCompile(`(?m)^ *\| [^|]+ \| (\d+) × ([\d,]+)[^|]* \| ([\d,]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$`)
	rows := doc.FindAllStringSubmatch(string(readme), -1)
	require.Len(t, rows, 7, "the README's observation table")
	for _, m := range rows {
		n := strings.ReplaceAll(m[3], ",", "")
		got, ok := have[[2]string{n, m[4]}]
		if assert.True(t, ok, "README row %q: no gate --observations row with real n %s and %s ms/token", m[0], n, m[4]) {
			assert.Equal(t, row{n, m[1], strings.ReplaceAll(m[2], ",", ""), m[4], m[5], m[6], m[7]}, got, "README row %q", strings.TrimSpace(m[0]))
		}
	}
}
