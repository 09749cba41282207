package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"frontier/scenarios"
)

// Sweep is a sweep's definition: what Fingerprint hashes.
type Sweep struct {
	Base        *scenarios.Scenario // the base scenario, before any point
	Axes        []Axis
	Zip         bool
	Deployments []Entry
	// Settings are the other options that change the outputs (summary
	// percentiles, SLOs), as "name=value" lines.
	Settings []string
}

// Fingerprint identifies the sweep: the first 16 hex digits of the
// SHA-256 of its canonical definition (the base scenario as YAML, the
// axes, zip, the deployments as YAML, the settings). Shards of one sweep
// share it; merge refuses files whose fingerprints differ.
func (s *Sweep) Fingerprint() (string, error) {
	var b bytes.Buffer
	b.WriteString("frontier sweep v1\n")
	base := *s.Base
	base.Dir = ""
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(&base); err != nil {
		return "", fmt.Errorf("sweep fingerprint: %w", err)
	}
	axes, _ := json.Marshal(s.Axes)
	fmt.Fprintf(&b, "axes %s\nzip %v\n", axes, s.Zip)
	if len(s.Deployments) > 0 {
		if err := enc.Encode(s.Deployments); err != nil {
			return "", fmt.Errorf("sweep fingerprint: %w", err)
		}
	}
	settings := append([]string{}, s.Settings...)
	sort.Strings(settings)
	fmt.Fprintf(&b, "settings %q\n", settings)
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:8]), nil
}

// Shard is --shard I/N: the points whose index is I mod N (0 ≤ I < N),
// so every shard gets a spread of the sweep (the first points of a sweep
// are often its cheapest). The zero Shard is the whole sweep.
type Shard struct{ I, N int }

// ParseShard reads "I/N". Errors name --shard: not two integers, N < 1,
// I outside [0, N).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard %q: want I/N, two integers with 0 ≤ I < N (e.g. 0/4)", s)
	case n < 1:
		return Shard{}, fmt.Errorf("--shard %s: N must be ≥ 1, got %d", s, n)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("--shard %s: I must be in [0, %d) (shards are numbered from 0), got %d", s, n, i)
	}
	return Shard{I: i, N: n}, nil
}

// Has reports whether point k belongs to the shard.
func (s Shard) Has(k int) bool { return s.N <= 1 || k%s.N == s.I }

// LineHead is the part of every --out-jsonl line that merge reads: the
// sweep's fingerprint, the point's index and the sweep's point count.
type LineHead struct {
	Sweep  string `json:"sweep"`
	Point  int    `json:"point"`
	Points int    `json:"points"`
}

// Lines is a set of --out-jsonl lines by point, read from files.
type Lines struct {
	Head  LineHead // of the first line read (Sweep and Points)
	ByPt  map[int][]byte
	where map[int]string // file of each point, for messages
}

// ReadLines reads --out-jsonl files (data by file name, in order) into
// one set. Errors: a line that is not a sweep line, lines of different
// sweeps (fingerprints), a point in two files. A torn last line (a run
// killed while writing) is skipped when skipTorn.
func ReadLines(files []string, data [][]byte, skipTorn bool) (*Lines, error) {
	ls := &Lines{ByPt: map[int][]byte{}, where: map[int]string{}}
	for fi, name := range files {
		rows := bytes.Split(data[fi], []byte("\n"))
		for li, row := range rows {
			if len(bytes.TrimSpace(row)) == 0 {
				continue
			}
			var h LineHead
			if err := json.Unmarshal(row, &h); err != nil || h.Sweep == "" || h.Points < 1 {
				if skipTorn && li == len(rows)-1 {
					continue
				}
				return nil, fmt.Errorf("%s:%d: not a line of frontier sweep --out-jsonl", name, li+1)
			}
			if ls.Head.Sweep == "" {
				ls.Head = LineHead{Sweep: h.Sweep, Points: h.Points}
			}
			if h.Sweep != ls.Head.Sweep || h.Points != ls.Head.Points {
				return nil, fmt.Errorf("%s:%d: a different sweep (fingerprint %s, %d points) from %s (fingerprint %s, %d points): shards of one sweep only",
					name, li+1, h.Sweep, h.Points, ls.where[-1], ls.Head.Sweep, ls.Head.Points)
			}
			if _, ok := ls.where[-1]; !ok {
				ls.where[-1] = name
			}
			if h.Point < 0 || h.Point >= h.Points {
				return nil, fmt.Errorf("%s:%d: point %d outside [0, %d)", name, li+1, h.Point, h.Points)
			}
			if prev, dup := ls.where[h.Point]; dup {
				if bytes.Equal(ls.ByPt[h.Point], row) && prev == name {
					continue
				}
				return nil, fmt.Errorf("%s:%d: point %d is also in %s (give each shard once)", name, li+1, h.Point, prev)
			}
			ls.ByPt[h.Point] = append([]byte{}, row...)
			ls.where[h.Point] = name
		}
	}
	return ls, nil
}

// Missing lists the points no file holds (at most 10 shown by callers).
func (ls *Lines) Missing() []int {
	var out []int
	for k := 0; k < ls.Head.Points; k++ {
		if _, ok := ls.ByPt[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}
