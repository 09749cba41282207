// Package offline simulates vLLM's offline benchmarks, `vllm bench
// latency` and `vllm bench throughput` (vllm/benchmarks/latency.py and
// throughput.py): the LLM class hands requests to the engine in-process,
// so there is no API server, no HTTP and no token streaming. It runs
// sim's engines on a plan of its own and computes those benchmarks'
// figures; it prints nothing.
package offline

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"frontier/profiles"
	"frontier/sim"
	"frontier/sim/workload"
)

// GiB is 2^30 bytes.
const GiB = 1 << 30

// LLMClassBatchDefaults are the offline LLM class's max_num_batched_tokens
// and max_num_seqs on hw: 16384 and 1024 on GPUs of at least 70 GiB that
// are not A100s, else 8192 and 256 (EngineArgs.get_batch_defaults,
// UsageContext.LLM_CLASS, vllm/engine/arg_utils.py; `vllm serve` uses 8192
// and 1024 there, 2048 and 256 elsewhere). The memory is the device's
// total as torch reports it (current_platform.get_device_total_memory)
// and the name the device's, as for vllm serve's defaults
// (profiles.Hardware.ServeBatchDefaults). A defaulted max_num_seqs is
// then capped at max_num_batched_tokens, as EngineArgs caps it.
func LLMClassBatchDefaults(hw profiles.Hardware) (maxNumBatchedTokens, maxNumSeqs int) {
	if hw.TorchTotalBytes >= 70*GiB && !strings.Contains(strings.ToLower(hw.GPUName), "a100") {
		return 16384, 1024
	}
	return 8192, 256
}

// Setup returns a copy of st for the LLM class: no API-server time (the
// host model's API-server and client terms are zero: tokenize_per_token,
// request_overhead, stream_per_token, api_request, api_token), no client
// timeout and no concurrency cap, and every prompt of a generate call
// handed in before the engine steps (ClientConfig.Together). The
// engine-core host terms stay.
func Setup(st *sim.Setup) *sim.Setup {
	h := st.Host
	h.TokenizePerTokenNs, h.RequestOverheadNs, h.StreamPerTokenNs, h.APIRequestNs, h.APITokenNs = 0, 0, 0, 0, 0
	c := st.WithHost(h)
	c.Client = sim.ClientConfig{Together: true}
	return c
}

// Run simulates plan on the LLM-class copy of st (Setup) and returns the
// result with the setup's notes and coverage.
func Run(st *sim.Setup, plan *workload.Plan, opt sim.Options) (*sim.Result, error) {
	c := Setup(st)
	c.Plan = plan
	s, err := c.NewSim(opt)
	if err != nil {
		return nil, err
	}
	res := s.Run()
	c.Finish(s, res)
	return res, nil
}

// Check refuses what vLLM's offline benchmarks refuse, with their reasons.
func Check(st *sim.Setup) error {
	if st.Disagg != nil {
		return fmt.Errorf("the offline benchmarks run one LLM instance; prefill/decode disaggregation is a serving setup (use frontier simulate)")
	}
	if st.DP > 1 {
		// vllm/benchmarks/throughput.py validate_args
		return fmt.Errorf("--data-parallel-size %d: Data parallel is only supported with external launcher mode with synchronous engine in offline benchmark, please use benchmark serving instead", st.DP)
	}
	return nil
}

// LatencyConfig is `vllm bench latency`'s workload: BatchSize prompts of
// InputLen random tokens, each generating OutputLen tokens (ignore_eos),
// run to completion NumItersWarmup + NumIters times. The same prompts
// every iteration (latency.py draws them once), so with prefix caching
// on, iterations after the first hit the cache.
type LatencyConfig struct {
	InputLen, OutputLen int // tokens
	BatchSize           int
	NumItersWarmup      int
	NumIters            int
}

// LatencyPlan is the plan of cfg: one stage per iteration, each holding
// the batch at t = 0 of the stage; the next stage starts when the last
// request of this one finished (no pause).
func LatencyPlan(cfg LatencyConfig) *workload.Plan {
	plan := &workload.Plan{}
	id := 0
	for it := 0; it < cfg.NumItersWarmup+cfg.NumIters; it++ {
		reqs := make([]workload.Request, cfg.BatchSize)
		for i := range reqs {
			reqs[i] = workload.Request{
				ID: int32(id), PromptTokens: int32(cfg.InputLen), OutputTokens: int32(cfg.OutputLen),
				ContentKey: 0x6c61_7465_6e63_7900 ^ uint64(i+1)*0x9e37_79b9_7f4a_7c15, // row i's prompt, the same each iteration
			}
			id++
		}
		plan.Stages = append(plan.Stages, workload.Stage{Requests: reqs})
	}
	return plan
}

// Latencies are the measured iterations' latencies, seconds: from the
// iteration's start (every prompt handed to the engine) to its last
// request's last token. Warmup iterations are skipped.
func Latencies(res *sim.Result, cfg LatencyConfig) []float64 {
	n := cfg.NumItersWarmup + cfg.NumIters
	start, end := make([]int64, n), make([]int64, n)
	for i := range start {
		start[i] = math.MaxInt64
	}
	for _, r := range res.Requests {
		start[r.Stage] = min(start[r.Stage], r.SendNs)
		end[r.Stage] = max(end[r.Stage], r.FinishNs)
	}
	out := make([]float64, 0, cfg.NumIters)
	for it := cfg.NumItersWarmup; it < n; it++ {
		out = append(out, float64(end[it]-start[it])/1e9)
	}
	return out
}

// LatencyStats are `vllm bench latency`'s printed and saved figures,
// seconds: mean, population standard deviation (np.std) and the
// percentiles 10, 25, 50, 75, 90, 99 (np.percentile, linear).
type LatencyStats struct {
	Avg, Std    float64
	Percentages []int
	Percentiles []float64
	Latencies   []float64
}

// LatencyPercentages are latency.py's percentages.
var LatencyPercentages = []int{10, 25, 50, 75, 90, 99}

// Stats computes latency.py's figures over latencies (seconds).
func Stats(latencies []float64) LatencyStats {
	s := LatencyStats{Latencies: latencies, Percentages: LatencyPercentages}
	// Deviations from the first value, so that equal latencies average to
	// exactly that value (and a zero standard deviation).
	var dev float64
	for _, v := range latencies {
		dev += v - latencies[0]
	}
	s.Avg = latencies[0] + dev/float64(len(latencies))
	for _, v := range latencies {
		s.Std += (v - s.Avg) * (v - s.Avg) / float64(len(latencies))
	}
	s.Std = math.Sqrt(s.Std)
	sorted := slices.Sorted(slices.Values(latencies))
	for _, p := range LatencyPercentages {
		s.Percentiles = append(s.Percentiles, sim.Percentile(sorted, float64(p)))
	}
	return s
}

// ThroughputStats are `vllm bench throughput`'s figures: the elapsed time
// (s) from handing every prompt to the engine to the last output, the
// requests, and the prompt and output tokens.
type ThroughputStats struct {
	ElapsedS                   float64
	NumRequests                int
	PromptTokens, OutputTokens int
	TotalTokens                int     // prompt + output
	RequestsPerS, TokensPerS   float64 // tokens: total tokens per s
	OutputTokensPerS           float64
}

// Throughput computes throughput.py's figures from a run whose requests
// were all handed to the engine at t = 0.
func Throughput(res *sim.Result) ThroughputStats {
	var t ThroughputStats
	var end int64
	for _, r := range res.Requests {
		t.NumRequests++
		t.PromptTokens += int(r.PromptTokens)
		t.OutputTokens += int(r.OutputTokens)
		end = max(end, r.FinishNs)
	}
	t.ElapsedS = float64(end) / 1e9
	t.TotalTokens = t.PromptTokens + t.OutputTokens
	t.RequestsPerS = float64(t.NumRequests) / t.ElapsedS
	t.TokensPerS = float64(t.TotalTokens) / t.ElapsedS
	t.OutputTokensPerS = float64(t.OutputTokens) / t.ElapsedS
	return t
}

// CheckLengths refuses a plan with a request whose prompt + output exceed
// maxModelLen, as both benchmarks assert before running.
func CheckLengths(plan *workload.Plan, maxModelLen int) error {
	for _, st := range plan.Stages {
		for _, r := range st.Requests {
			if int(r.PromptTokens)+int(r.OutputTokens) > maxModelLen {
				return fmt.Errorf("max_model_len %d: Please ensure that max_model_len is greater than the sum of prompt_len and expected_output_len for all requests (a request needs %d + %d tokens)", maxModelLen, r.PromptTokens, r.OutputTokens)
			}
		}
	}
	return nil
}
