package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"frontier/scenarios"
)

type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Pid  *int           `json:"pid"`
	Tid  int            `json:"tid"`
	ID   *int           `json:"id"`
	Ts   *float64       `json:"ts"`
	Dur  float64        `json:"dur"`
	Args map[string]any `json:"args"`
}

// checkTraceSchema checks a Chrome trace: it is one JSON object with
// traceEvents; every event has a phase and a pid; B/E are balanced per
// thread and b/e per async id, properly nested; ts is monotone per track
// (a thread's complete events, a counter, an async id); each request's
// outer slice is unique. It returns the traced request IDs.
func checkTraceSchema(t *testing.T, data []byte) map[int]bool {
	t.Helper()
	var doc struct {
		TraceEvents []traceEvent   `json:"traceEvents"`
		OtherData   map[string]any `json:"otherData"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.TraceEvents)
	last := map[string]float64{}
	monotone := func(track string, ts float64) {
		if prev, ok := last[track]; ok {
			require.GreaterOrEqual(t, ts, prev, "ts goes back on track %s", track)
		}
		last[track] = ts
	}
	syncStack := map[string][]string{}
	asyncStack := map[int][]string{}
	requests := map[int]bool{}
	steps := 0
	for _, e := range doc.TraceEvents {
		require.NotEmpty(t, e.Ph)
		require.NotNil(t, e.Pid, "%+v", e)
		if e.Ph == "M" {
			continue
		}
		require.NotNil(t, e.Ts, "%+v", e)
		require.GreaterOrEqual(t, *e.Ts, 0.0)
		thread := fmt.Sprintf("%d/%d", *e.Pid, e.Tid)
		switch e.Ph {
		case "X":
			steps++
			require.GreaterOrEqual(t, e.Dur, 0.0)
			monotone("X "+thread, *e.Ts)
			for _, k := range []string{"prefill_tokens", "decode_tokens", "padded_tokens", "running", "waiting", "kv_blocks"} {
				require.Contains(t, e.Args, k)
			}
		case "B":
			syncStack[thread] = append(syncStack[thread], e.Name)
			monotone("B/E "+thread, *e.Ts)
		case "E":
			s := syncStack[thread]
			require.NotEmpty(t, s, "E without B on %s", thread)
			syncStack[thread] = s[:len(s)-1]
			monotone("B/E "+thread, *e.Ts)
		case "b", "e":
			require.NotNil(t, e.ID)
			id := *e.ID
			monotone(fmt.Sprintf("async %d", id), *e.Ts)
			if e.Ph == "b" {
				if len(asyncStack[id]) == 0 {
					require.True(t, strings.HasPrefix(e.Name, "request "), e.Name)
					require.False(t, requests[id], "request %d has two slices", id)
					requests[id] = true
				}
				asyncStack[id] = append(asyncStack[id], e.Name)
			} else {
				s := asyncStack[id]
				require.NotEmpty(t, s, "e without b for id %d", id)
				require.Equal(t, s[len(s)-1], e.Name, "async slices of %d nest", id)
				asyncStack[id] = s[:len(s)-1]
			}
		case "C":
			require.NotEmpty(t, e.Args)
			monotone(fmt.Sprintf("C %d %s", *e.Pid, e.Name), *e.Ts)
		case "i":
		default:
			t.Fatalf("unexpected phase %q", e.Ph)
		}
	}
	for k, s := range syncStack {
		require.Empty(t, s, "unbalanced B/E on %s", k)
	}
	for id, s := range asyncStack {
		require.Empty(t, s, "unbalanced b/e for request %d", id)
	}
	require.Positive(t, steps)
	require.NotEmpty(t, doc.OtherData["note"])
	return requests
}

func TestTraceSchemaAndSampling(t *testing.T) {
	r := simulate(t, pressured(600), 1e9, 100)
	reqs := checkTraceSchema(t, r.trace)
	assert.Len(t, reqs, 100, "every 6th of 600 requests")
	for id := range reqs {
		assert.Zero(t, id%6)
	}
	assert.True(t, bytes.Contains(r.trace, []byte("queued (preempted)")), "a traced request was preempted")
	assert.True(t, bytes.Contains(r.trace, []byte(`"name":"streamed"`)))
	again := simulate(t, pressured(600), 1e9, 100)
	assert.Equal(t, r.trace, again.trace, "same run, same trace")

	all := simulate(t, pressured(50), 1e9, 0)
	assert.Len(t, checkTraceSchema(t, all.trace), 50)
}

// A disaggregated run traces KV transfers, and each engine is a process.
func TestTraceDisaggregated(t *testing.T) {
	sc, err := scenarios.Load("../../scenarios/examples/llama-3.1-8b-h200-1p1d.yaml")
	require.NoError(t, err)
	if sc.Workload.Random != nil {
		sc.Workload.Random.NumPrompts = 40
	}
	r := simulate(t, sc, 1e9, 0)
	reqs := checkTraceSchema(t, r.trace)
	assert.NotEmpty(t, reqs)
	for _, want := range []string{`"name":"KV transfer"`, "prefill engine 0", "decode engine 1", `"name":"decode"`} {
		assert.True(t, bytes.Contains(r.trace, []byte(want)), want)
	}
}

// Every plot is a valid PNG or SVG with its data drawn.
func TestPlotsAreValidImages(t *testing.T) {
	r := simulate(t, pressured(300), 1e9, 0)
	dir := t.TempDir()
	files, err := WritePlots(dir, []string{"png", "svg"}, PlotInput{Title: "test run", Rows: r.rec.Rows(), Stages: r.rec.Stages(), Requests: r.res.Requests})
	require.NoError(t, err)
	require.Len(t, files, 6)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		switch filepath.Ext(f) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err, f)
			assert.Greater(t, img.Bounds().Dx(), 500)
			assert.Greater(t, colours(img), 4, "%s: more than background, axes and text", f)
		case ".svg":
			paths := svgPaths(t, data)
			assert.Greater(t, paths, 10, "%s: drawn paths", f)
		}
	}
	_, err = WritePlots(dir, []string{"png"}, PlotInput{Title: "empty"})
	assert.ErrorContains(t, err, "empty timeline")
}

// colours counts distinct colours (up to 100).
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 100; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// svgPaths parses SVG as XML (root <svg>) and counts its path elements
// with at least one line segment.
func svgPaths(t *testing.T, data []byte) int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	n, root := 0, ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "path" {
				for _, a := range se.Attr {
					if a.Name.Local == "d" && strings.Contains(a.Value, "L") {
						n++
					}
				}
			}
		}
	}
	require.Equal(t, "svg", root)
	return n
}

// Every example deployment (TP, PP, DP lockstep with EP, disaggregated,
// traces, shared prefixes) gives a valid trace and a conserving timeline.
func TestExamplesTraceAndTimeline(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenarios.Load(f)
			require.NoError(t, err)
			if sc.Workload.Random != nil {
				sc.Workload.Random.NumPrompts = min(sc.Workload.Random.NumPrompts, 200)
			}
			r := simulate(t, sc, 1e9, 50)
			checkTraceSchema(t, r.trace)
			for _, row := range r.rec.Rows() {
				require.Equal(t, row.Running+row.Waiting, int(row.Arrived-row.Finished-row.Aborted), "engine %d at %d ns", row.Engine, row.GaugeNs)
			}
		})
	}
}
