package calibration

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"frontier/scenarios"
)

// ReplayRequest is one request of a run as the per-request replay files
// record it (inference-sim's replay_data, see calibration/groundtruth/
// REPLAY_SOURCE). Units are the files' own: µs for the send time, tokens
// for lengths, seconds for the client's measurements.
type ReplayRequest struct {
	// Index is the request's index in the run (send order).
	Index int
	// ArrivalUs is arrival_time_us: the exact send time, µs from the run's
	// first request, stages and the pauses between them included.
	ArrivalUs int64
	// InputTokens and OutputTokens are input_tokens and output_tokens. A
	// failed request carries 0 for both (unknown). OutputTokens of a
	// successful one is the client's count of the returned text,
	// re-tokenized; vLLM generated exactly the requested length
	// (ignore_eos), which is what ReplayPlan uses.
	InputTokens  int
	OutputTokens int
	// Failed is has_error: in these runs always the client's 300 s timeout.
	Failed bool
	// TTFTS and E2ES are per_request_truth.json's ttft_s and e2e_s, s
	// (at most 1e6). TTFTS is NaN for a failed request that has none;
	// every request has E2ES (a failure's: when the client gave up).
	TTFTS float64
	E2ES  float64
}

// Replay is one run's per-request replay files: the deployment config the
// files carry and every request in arrival order.
type Replay struct {
	Dir        string
	Experiment string // experiment, the run folder's name
	ModelID    string // model_id
	// From config: tensor_parallelism, max_num_seqs,
	// max_num_batched_tokens, block_size (tokens).
	TensorParallelism   int
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	BlockSize           int
	// KVBlocksTotalGPU is config.kv_blocks_total_gpu as written: vLLM's
	// num_gpu_blocks − 1 (vLLM keeps one block as the null block). Use
	// VLLMBlocks for vLLM's own count. A check of the memory plan only,
	// never an input to a prediction (docs/GATE.md).
	KVBlocksTotalGPU int
	// Requests are in arrival order; equal arrivals keep index order.
	Requests []ReplayRequest
}

// VLLMBlocks is vLLM's KV capacity of the run in blocks (num_gpu_blocks):
// kv_blocks_total_gpu + 1.
func (r *Replay) VLLMBlocks() int { return r.KVBlocksTotalGPU + 1 }

// replayRequestsFile mirrors requests.json.
type replayRequestsFile struct {
	Experiment string `json:"experiment"`
	ModelID    string `json:"model_id"`
	Config     struct {
		TensorParallelism   int `json:"tensor_parallelism"`
		MaxNumSeqs          int `json:"max_num_seqs"`
		MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
		KVBlocksTotalGPU    int `json:"kv_blocks_total_gpu"`
		BlockSize           int `json:"block_size"`
	} `json:"config"`
	Requests []struct {
		Index        *int   `json:"index"`
		ArrivalUs    *int64 `json:"arrival_time_us"`
		InputTokens  int    `json:"input_tokens"`
		OutputTokens int    `json:"output_tokens"`
		HasError     bool   `json:"has_error"`
	} `json:"requests"`
}

// replayTruthRow is one entry of per_request_truth.json.
type replayTruthRow struct {
	Index    *int     `json:"index"`
	HasError bool     `json:"has_error"`
	TTFTS    *float64 `json:"ttft_s"`
	E2ES     *float64 `json:"e2e_s"`
}

// ReadReplay reads a run's replay folder: requests.json and
// per_request_truth.json, each plain or gzip-compressed (".json.gz", as
// committed under calibration/groundtruth/<run>/replay/). It checks that
// every request has a unique non-negative index and a send time within
// 1e6 s, that every request has an e2e_s in [0, 1e6] s, that the
// two files list the same indices with the same error flags, that a
// successful request has a prompt and non-negative latencies with TTFT ≤
// E2E, and that config values are positive; errors name the file and the
// request index. Requests are returned in arrival order.
func ReadReplay(dir string) (*Replay, error) {
	var rf replayRequestsFile
	reqPath, err := readReplayJSON(dir, "requests", &rf)
	if err != nil {
		return nil, err
	}
	var truth []replayTruthRow
	truthPath, err := readReplayJSON(dir, "per_request_truth", &truth)
	if err != nil {
		return nil, err
	}
	c := rf.Config
	r := &Replay{Dir: dir, Experiment: rf.Experiment, ModelID: rf.ModelID,
		TensorParallelism: c.TensorParallelism, MaxNumSeqs: c.MaxNumSeqs, MaxNumBatchedTokens: c.MaxNumBatchedTokens,
		BlockSize: c.BlockSize, KVBlocksTotalGPU: c.KVBlocksTotalGPU}
	for _, f := range []struct {
		key string
		v   int
	}{{"tensor_parallelism", c.TensorParallelism}, {"max_num_seqs", c.MaxNumSeqs},
		{"max_num_batched_tokens", c.MaxNumBatchedTokens}, {"block_size", c.BlockSize}, {"kv_blocks_total_gpu", c.KVBlocksTotalGPU}} {
		if f.v < 1 {
			return nil, fmt.Errorf("%s: config.%s: must be ≥ 1, got %d (missing?)", reqPath, f.key, f.v)
		}
	}
	if len(rf.Requests) == 0 {
		return nil, fmt.Errorf("%s: requests: missing or empty", reqPath)
	}
	byIndex := make(map[int]int, len(rf.Requests))
	for i, q := range rf.Requests {
		if q.Index == nil || *q.Index < 0 {
			return nil, fmt.Errorf("%s: requests[%d].index: must be an integer ≥ 0 (missing?)", reqPath, i)
		}
		idx := *q.Index
		if _, dup := byIndex[idx]; dup {
			return nil, fmt.Errorf("%s: requests[%d].index: %d appears twice", reqPath, i, idx)
		}
		if q.ArrivalUs == nil || *q.ArrivalUs < 0 || *q.ArrivalUs > maxReplayUs {
			return nil, fmt.Errorf("%s: request %d: arrival_time_us: must be in [0, %g] µs (≥ 0; a run of at most %g s; missing?)", reqPath, idx, float64(maxReplayUs), maxReplayS)
		}
		if q.InputTokens < 0 || q.OutputTokens < 0 || (!q.HasError && q.InputTokens < 1) || max(q.InputTokens, q.OutputTokens) > scenarios.MaxTokens {
			return nil, fmt.Errorf("%s: request %d: input_tokens %d, output_tokens %d: a successful request needs input_tokens ≥ 1, and counts are in [0, %d]",
				reqPath, idx, q.InputTokens, q.OutputTokens, scenarios.MaxTokens)
		}
		byIndex[idx] = len(r.Requests)
		r.Requests = append(r.Requests, ReplayRequest{Index: idx, ArrivalUs: *q.ArrivalUs,
			InputTokens: q.InputTokens, OutputTokens: q.OutputTokens, Failed: q.HasError, TTFTS: math.NaN(), E2ES: math.NaN()})
	}
	if len(truth) != len(r.Requests) {
		return nil, fmt.Errorf("%s: %d entries, but %s lists %d requests", truthPath, len(truth), reqPath, len(r.Requests))
	}
	seen := make([]bool, len(r.Requests))
	for i, t := range truth {
		if t.Index == nil {
			return nil, fmt.Errorf("%s: [%d].index: missing", truthPath, i)
		}
		k, ok := byIndex[*t.Index]
		if !ok || seen[k] {
			return nil, fmt.Errorf("%s: [%d].index: %d is not a request of %s, or appears twice", truthPath, i, *t.Index, reqPath)
		}
		seen[k] = true
		q := &r.Requests[k]
		if t.HasError != q.Failed {
			return nil, fmt.Errorf("%s: request %d: has_error %t, but %s says %t", truthPath, q.Index, t.HasError, reqPath, q.Failed)
		}
		if t.E2ES == nil {
			return nil, fmt.Errorf("%s: request %d: e2e_s: missing (every request has one: a failure's is when the client gave up)", truthPath, q.Index)
		}
		if q.E2ES = *t.E2ES; !(q.E2ES >= 0 && q.E2ES <= maxReplayS) {
			return nil, fmt.Errorf("%s: request %d: e2e_s: must be in [0, %g] s, got %g", truthPath, q.Index, maxReplayS, q.E2ES)
		}
		if t.TTFTS != nil {
			q.TTFTS = *t.TTFTS
		}
		if !q.Failed && !(q.TTFTS >= 0 && q.E2ES >= q.TTFTS) {
			return nil, fmt.Errorf("%s: request %d: ttft_s %g, e2e_s %g: a successful request needs 0 ≤ ttft_s ≤ e2e_s", truthPath, q.Index, q.TTFTS, q.E2ES)
		}
	}
	slices.SortStableFunc(r.Requests, func(a, b ReplayRequest) int {
		if a.ArrivalUs != b.ArrivalUs {
			return cmpInt64(a.ArrivalUs, b.ArrivalUs)
		}
		return a.Index - b.Index
	})
	return r, nil
}

// maxReplayS bounds a replay's send times and latencies, s (11.6 days; the
// committed runs last ≤ 2,400 s): past it a file is refused instead of
// overflowing the send times in ns or sizing gate --observations' 1 s
// reconstruction grid by it. maxReplayUs is the same in µs.
const (
	maxReplayS  = 1e6
	maxReplayUs = int64(maxReplayS * 1e6)
)

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readReplayJSON decodes dir/<name>.json, else dir/<name>.json.gz, into v
// and returns the path it read. Neither present is an error naming both.
func readReplayJSON(dir, name string, v any) (string, error) {
	path := filepath.Join(dir, name+".json")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		path += ".gz"
		f, err = os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, fmt.Errorf("replay files: neither %s.json nor %s.json.gz exists in %s", name, name, dir)
		}
	}
	if err != nil {
		return path, fmt.Errorf("replay files: %w", err)
	}
	defer f.Close()
	var rd io.Reader = f
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return path, fmt.Errorf("read %s: %w", path, err)
		}
		defer zr.Close()
		rd = zr
	}
	if err := json.NewDecoder(rd).Decode(v); err != nil {
		return path, fmt.Errorf("parse %s: %w", path, err)
	}
	return path, nil
}

// StageSplit cuts the requests (arrival order) into the run's load stages:
// stage k is the next counts[k] requests (inference-perf sends rate ×
// duration requests per stage and starts the next only after the last has
// finished, so stages never interleave). The counts must add up to the
// replay's requests.
func (r *Replay) StageSplit(counts []int) ([][]ReplayRequest, error) {
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != len(r.Requests) {
		return nil, fmt.Errorf("%s: %d requests, but the run's stages send %d (%v)", r.Dir, len(r.Requests), total, counts)
	}
	out := make([][]ReplayRequest, len(counts))
	at := 0
	for k, n := range counts {
		out[k] = r.Requests[at : at+n]
		at += n
	}
	return out, nil
}
