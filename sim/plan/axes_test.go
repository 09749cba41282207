package plan

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestParseVary(t *testing.T) {
	for _, c := range []struct {
		in   string
		key  string
		want []string
	}{
		{"max-num-seqs=64,128, 256", "max-num-seqs", []string{"64", "128", "256"}},
		{"request-rate=2:10:2", "request-rate", []string{"2", "4", "6", "8", "10"}},
		{"request-rate=2:9:2", "request-rate", []string{"2", "4", "6", "8"}},
		{"request-rate=10:2:-4", "request-rate", []string{"10", "6", "2"}},
		{"gpu-memory-utilization=0.8:0.95:0.05", "gpu-memory-utilization", []string{"0.8", "0.85", "0.9", "0.95"}},
		{"x=0.1:0.3:0.1", "x", []string{"0.1", "0.2", "0.3"}},
		{"--hardware=h100-sxm,h200-sxm", "hardware", []string{"h100-sxm", "h200-sxm"}},
		{"request-rate=5:5:1", "request-rate", []string{"5"}},
	} {
		a, err := ParseVary(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.key, a.Key, c.in)
		assert.Equal(t, c.want, a.Values, c.in)
	}
	for in, msg := range map[string]string{
		"max-num-seqs":         "want KEY=V1,V2",
		"=1,2":                 "want KEY=V1,V2",
		"max-num-seqs=64,,128": "empty value",
		"request-rate=1:10:0":  "STEP must not be 0",
		"request-rate=10:1:1":  "leads away from STOP",
		"request-rate=1:10:-1": "leads away from STOP",
		"request-rate=1:x:1":   "finite numbers",
		"request-rate=0:1e9:1": "at most",
	} {
		_, err := ParseVary(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
		assert.Contains(t, err.Error(), "--vary", in)
	}
}

func TestExpandCrossAndZip(t *testing.T) {
	axes := []Axis{{"a", []string{"1", "2"}}, {"b", []string{"x", "y", "z"}}}
	pts, err := Expand(axes, false, nil)
	require.NoError(t, err)
	var labels []string
	for i, p := range pts {
		assert.Equal(t, i, p.Index)
		labels = append(labels, p.Label())
	}
	assert.Equal(t, []string{"a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"}, labels)
	assert.Equal(t, []string{"--a=2", "--b=y"}, pts[4].Args())

	_, err = Expand(axes, true, nil)
	require.ErrorContains(t, err, "--zip: every axis needs as many values (a has 2, b has 3)")
	pts, err = Expand([]Axis{{"a", []string{"1", "2"}}, {"b", []string{"x", "y"}}}, true, nil)
	require.NoError(t, err)
	require.Len(t, pts, 2)
	assert.Equal(t, "a=2 b=y", pts[1].Label())

	deps := []Entry{{Name: "d1"}, {Name: "d2"}}
	pts, err = Expand([]Axis{{"a", []string{"1", "2"}}}, false, deps)
	require.NoError(t, err)
	labels = nil
	for _, p := range pts {
		labels = append(labels, p.Label())
	}
	assert.Equal(t, []string{"deployment=d1 a=1", "deployment=d1 a=2", "deployment=d2 a=1", "deployment=d2 a=2"}, labels)

	pts, err = Expand(nil, false, nil)
	require.NoError(t, err)
	require.Len(t, pts, 1)
	assert.Equal(t, "base", pts[0].Label())

	_, err = Expand([]Axis{{"a", []string{"1"}}, {"a", []string{"2"}}}, false, nil)
	require.ErrorContains(t, err, "varied twice")
	require.ErrorContains(t, CheckKeys([]Axis{{"max-num-seq", []string{"1"}}}, []string{"max-num-seqs", "seed"}),
		`unknown KEY "max-num-seq"; allowed (simulate's flag names without the leading dashes): max-num-seqs, seed`)
}

func TestShard(t *testing.T) {
	s, err := ParseShard("1/3")
	require.NoError(t, err)
	var got []int
	for k := 0; k < 8; k++ {
		if s.Has(k) {
			got = append(got, k)
		}
	}
	assert.Equal(t, []int{1, 4, 7}, got)
	for in, msg := range map[string]string{"3/3": "I must be in [0, 3)", "-1/3": "I must be in", "1/0": "N must be ≥ 1", "x": "want I/N", "1/2/3": "want I/N"} {
		_, err := ParseShard(in)
		require.ErrorContains(t, err, msg, in)
		require.ErrorContains(t, err, "--shard", in)
	}
}

// Ordered emits in index order whatever the completion order, and stops
// at the first emit error.
func TestOrdered(t *testing.T) {
	for _, jobs := range []int{1, 2, 7} {
		var got []int
		var calls atomic.Int32
		err := Ordered(50, jobs, func(k int) int {
			calls.Add(1)
			return k * k
		}, func(k, v int) error {
			assert.Equal(t, k*k, v)
			got = append(got, k)
			return nil
		}, nil)
		require.NoError(t, err)
		require.Len(t, got, 50)
		for i, k := range got {
			assert.Equal(t, i, k)
		}
		assert.EqualValues(t, 50, calls.Load())
	}
	var last int
	err := Ordered(100, 2, func(k int) int { return k }, func(k, _ int) error {
		last = k
		if k == 10 {
			return assert.AnError
		}
		return nil
	}, nil)
	require.ErrorIs(t, err, assert.AnError)
	assert.Equal(t, 10, last)
}

func TestReadLines(t *testing.T) {
	a := []byte(`{"sweep":"f1","point":0,"points":3}` + "\n" + `{"sweep":"f1","point":2,"points":3}` + "\n")
	b := []byte(`{"sweep":"f1","point":1,"points":3}` + "\n")
	ls, err := ReadLines([]string{"a", "b"}, [][]byte{a, b}, false)
	require.NoError(t, err)
	assert.Empty(t, ls.Missing())
	assert.Equal(t, `{"sweep":"f1","point":1,"points":3}`, string(ls.ByPt[1]))

	ls, err = ReadLines([]string{"a"}, [][]byte{a}, false)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, ls.Missing())

	other := []byte(`{"sweep":"f2","point":1,"points":3}`)
	_, err = ReadLines([]string{"a", "c"}, [][]byte{a, other}, false)
	require.ErrorContains(t, err, "c:1: a different sweep (fingerprint f2, 3 points) from a (fingerprint f1, 3 points)")
	_, err = ReadLines([]string{"a", "a2"}, [][]byte{a, a}, false)
	require.ErrorContains(t, err, "point 0 is also in a")
	torn := append(append([]byte{}, a...), []byte(`{"sweep":"f1","po`)...)
	_, err = ReadLines([]string{"t"}, [][]byte{torn}, false)
	require.ErrorContains(t, err, "t:3: not a line")
	ls, err = ReadLines([]string{"t"}, [][]byte{torn}, true)
	require.NoError(t, err)
	assert.Len(t, ls.ByPt, 2)
}

// Zipped axes times the sweep file's deployments are bounded as crossed
// ones are (on main only the cross product was: 500,001 zipped values
// over 2 deployments expanded past a million points, each then built).
func TestExpandZipBounded(t *testing.T) {
	vals := make([]string, MaxPoints/2+1)
	for i := range vals {
		vals[i] = strconv.Itoa(i + 1)
	}
	axes := []Axis{{Key: "max-num-seqs", Values: vals}, {Key: "seed", Values: vals}}
	_, err := Expand(axes, true, []Entry{{Name: "a"}, {Name: "b"}})
	require.EqualError(t, err, "--vary: 1.000002e+06 points; at most 1000000")
	small := []Axis{{Key: "max-num-seqs", Values: vals[:2]}, {Key: "seed", Values: vals[:2]}}
	points, err := Expand(small, true, []Entry{{Name: "a"}, {Name: "b"}})
	require.NoError(t, err)
	assert.Len(t, points, 4)
}

// An SLO value past the float range names what is wrong (on main
// ttft:p99<=1e400ms said "VALUE must be > 0").
func TestParseSLOHugeValue(t *testing.T) {
	_, err := ParseSLO("ttft:p99<=1e400ms")
	require.EqualError(t, err, `--slo "ttft:p99<=1e400ms": VALUE must be a finite number > 0`)
}

// An axis key takes underscores for dashes, as the flags do (attack12:
// --vary max_num_seqs=4,8 was an unknown KEY), on the command line and in
// a --sweep file's vary mapping.
func TestAxisKeysTakeUnderscores(t *testing.T) {
	a, err := ParseVary("max_num_seqs=4,8")
	require.NoError(t, err)
	assert.Equal(t, Axis{Key: "max-num-seqs", Values: []string{"4", "8"}}, a)
	a, err = ParseVary("--api_server_count=1:3:1")
	require.NoError(t, err)
	assert.Equal(t, "api-server-count", a.Key)
	for _, n := range []*yaml.Node{{Kind: yaml.ScalarNode, Value: "4:8:4"}, {Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "4"}, {Kind: yaml.ScalarNode, Value: "8"}}}} {
		a, err = fileAxis("max_num_seqs", n)
		require.NoError(t, err)
		assert.Equal(t, Axis{Key: "max-num-seqs", Values: []string{"4", "8"}}, a)
	}
}

// A --sweep file naming one flag twice (as max_num_seqs and max-num-seqs)
// is refused naming the file's keys, not --vary (attack13: it said
// "--vary max-num-seqs: the key is varied twice" with no --vary given).
func TestSweepFileDuplicateKeyNamesTheFile(t *testing.T) {
	_, err := ParseFile([]byte("vary:\n  max-num-seqs: [4, 8]\n  max_num_seqs: [16]\n"))
	require.EqualError(t, err, "vary.max_num_seqs: the flag max-num-seqs is varied twice (also as vary.max-num-seqs); give all its values under one key")
}
