package calibration

import (
	"fmt"
	"math"
	"strconv"

	"frontier/sim"
	"frontier/sim/workload"
)

// ReplayInfo says how ReplayPlan filled a run's plan, for the note that
// gate --replay prints.
type ReplayInfo struct {
	Requests int // requests replayed
	// Failed requests carry 0 tokens in the files; they were replayed with
	// PromptLen prompt tokens (the run's measured mean prompt length).
	Failed    int
	PromptLen int
	// OutputLen is the requested output length every request generates
	// (vLLM's ignore_eos); FileOutputMean is the mean output_tokens the
	// file gives for successful requests (the client's re-tokenized count).
	OutputLen      int
	FileOutputMean float64
}

// Note is the one-line statement of what the replay used.
func (i ReplayInfo) Note() string {
	s := fmt.Sprintf("replay: %d requests at their real send times (each stage from its first send) with their measured prompt lengths; ", i.Requests)
	if i.Failed > 0 {
		s += fmt.Sprintf("%d failed ones carry no lengths in the files and are sent with the recipe's lengths (the run's mean prompt, %d tokens); ", i.Failed, i.PromptLen)
	}
	return s + fmt.Sprintf("every request generates the requested %d tokens, as vLLM did under ignore_eos (the files' output_tokens, the client's re-tokenized count, average %.1f)",
		i.OutputLen, i.FileOutputMean)
}

// ReplayPlan is recipe (the workload the scenario's recipe plans) with
// every request's send time and lengths taken from the replay instead:
// within stage k (ReplayStages), a request is sent at its real offset
// from the stage's first real send, with its measured prompt length, or
// promptLen when it failed (the files carry 0 tokens for failures), and
// generates outputLen tokens. Prompt contents (which prompt repeats, which
// system prompt it shares) stay the recipe's: the files do not record them,
// and their input lengths repeat with the recipe's period of
// num_groups × num_prompts_per_group requests. Stages still start after
// the previous one drained, plus the pause, on the simulated clock.
func ReplayPlan(recipe *workload.Plan, rp *Replay, promptLen, outputLen int) (*workload.Plan, ReplayInfo, error) {
	counts := make([]int, len(recipe.Stages))
	for k, st := range recipe.Stages {
		counts[k] = len(st.Requests)
	}
	stages, err := rp.StageSplit(counts)
	if err != nil {
		return nil, ReplayInfo{}, err
	}
	info := ReplayInfo{PromptLen: promptLen, OutputLen: outputLen}
	var outSum float64
	plan := &workload.Plan{Stages: make([]workload.Stage, len(recipe.Stages))}
	for k, st := range recipe.Stages {
		reqs := make([]workload.Request, len(st.Requests))
		base := stages[k][0].ArrivalUs
		for i, q := range stages[k] {
			r := st.Requests[i]
			r.At = (q.ArrivalUs - base) * 1000
			r.PromptTokens, r.OutputTokens = int32(q.InputTokens), int32(outputLen)
			if q.Failed {
				r.PromptTokens = int32(promptLen)
				info.Failed++
			} else {
				outSum += float64(q.OutputTokens)
			}
			reqs[i] = r
		}
		plan.Stages[k] = workload.Stage{Requests: reqs, IntervalNs: st.IntervalNs}
		info.Requests += len(reqs)
	}
	if ok := info.Requests - info.Failed; ok > 0 {
		info.FileOutputMean = outSum / float64(ok)
	}
	return plan, info, nil
}

// ReplayWindows is how many arrival windows of equal length a stage's
// send duration is cut into for the per-request rows.
const ReplayWindows = 4

// RequestSample is one request as the per-request rows see it: its send
// offset from its stage's first send, s, and, when it succeeded, its
// TTFT and E2E, s.
type RequestSample struct {
	OffsetS float64
	TTFTS   float64
	E2ES    float64
	Failed  bool
}

// ReplaySamples are the truth's samples of one stage (ReplayRequest in
// arrival order).
func ReplaySamples(stage []ReplayRequest) []RequestSample {
	out := make([]RequestSample, len(stage))
	for i, q := range stage {
		out[i] = RequestSample{OffsetS: float64(q.ArrivalUs-stage[0].ArrivalUs) / 1e6, TTFTS: q.TTFTS, E2ES: q.E2ES, Failed: q.Failed}
	}
	return out
}

// SimSamples are a simulation's samples of stage k.
func SimSamples(res *sim.Result, k int) []RequestSample {
	first := int64(math.MaxInt64)
	for i := range res.Requests {
		if r := &res.Requests[i]; int(r.Stage) == k && r.SendNs >= 0 {
			first = min(first, r.SendNs)
		}
	}
	var out []RequestSample
	for i := range res.Requests {
		r := &res.Requests[i]
		if int(r.Stage) != k || r.SendNs < 0 {
			continue
		}
		s := RequestSample{OffsetS: float64(r.SendNs-first) / 1e9, Failed: r.Failed}
		if !r.Failed {
			s.TTFTS, s.E2ES = float64(r.TTFTNs())/1e9, float64(r.E2ENs())/1e9
		}
		out = append(out, s)
	}
	return out
}

// WindowRows are the per-request rows of one stage cell, reported only:
// for each of ReplayWindows arrival windows of the stage's send duration
// (durationS), the mean TPOT of the successful requests sent in it
// ((E2E − TTFT) / (outputLen − 1), the gate's TPOT per request, so the
// mean is the gate's tpot_mean restricted to the window) and their median
// TTFT, truth against simulation. Metric names carry the window in
// seconds from the stage start: "tpot_mean@0-150s", "ttft_median@0-150s".
// A window where no real request succeeded has no rows; where no simulated
// one did, the simulated value is NaN.
func WindowRows(cell string, truth, simulated []RequestSample, durationS float64, outputLen int) []Row {
	if durationS <= 0 || outputLen < 2 {
		return nil
	}
	type acc struct{ tpot, ttft []float64 }
	bin := func(xs []RequestSample) []acc {
		w := make([]acc, ReplayWindows)
		for _, x := range xs {
			if x.Failed {
				continue
			}
			j := min(ReplayWindows-1, max(0, int(x.OffsetS/durationS*ReplayWindows)))
			w[j].tpot = append(w[j].tpot, (x.E2ES-x.TTFTS)/float64(outputLen-1))
			w[j].ttft = append(w[j].ttft, x.TTFTS)
		}
		return w
	}
	tw, sw := bin(truth), bin(simulated)
	var rows []Row
	add := func(metric string, t, s float64) {
		re := RelErr(s, t)
		rows = append(rows, Row{Cell: cell, Metric: metric, Truth: t, Sim: s, RelErr: re, Pass: withinTolerance(re)})
	}
	step := durationS / ReplayWindows
	for j := range ReplayWindows {
		if len(tw[j].tpot) == 0 {
			continue
		}
		label := "@" + strconv.FormatFloat(float64(j)*step, 'f', -1, 64) + "-" + strconv.FormatFloat(float64(j+1)*step, 'f', -1, 64) + "s"
		add(MetricTPOTMean+label, Summarize(tw[j].tpot).Mean, Summarize(sw[j].tpot).Mean)
		add(MetricTTFTMedian+label, Summarize(tw[j].ttft).Median, Summarize(sw[j].ttft).Median)
	}
	return rows
}

// MetricKVBlocks is the KV capacity row: vLLM's num_gpu_blocks from the
// replay files' config (kv_blocks_total_gpu + 1) against the memory plan's
// blocks, reported only (a check, never an input).
const MetricKVBlocks = "kv_blocks"

// kvBlocksRow reports the memory plan's KV blocks against vLLM's.
func kvBlocksRow(cell string, rp *Replay, simBlocks int) Row {
	t, s := float64(rp.VLLMBlocks()), float64(simBlocks)
	re := RelErr(s, t)
	return Row{Cell: cell, Metric: MetricKVBlocks, Truth: t, Sim: s, RelErr: re, Pass: withinTolerance(re)}
}
