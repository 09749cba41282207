package report

// VLLMVersion is the vLLM release whose Prometheus metrics this package
// reproduces: every name, unit, label, bucket boundary and counting rule
// below is taken from vllm/v1/metrics/loggers.py (PrometheusStatLogger)
// and vllm/v1/metrics/stats.py (IterationStats, FinishedRequestStats) of
// vLLM 0.11.0, the release in which vllm:inter_token_latency_seconds
// replaced vllm:time_per_output_token_seconds (the old name is still
// exported there, with the same observations, and is hidden from 0.12).
const VLLMVersion = "0.11.0"

// Label names of every vLLM metric (loggers.py: labelnames =
// ["model_name", "engine"]; model_name is the served model name, which
// defaults to --model; engine is the engine core index). request_success
// adds finished_reason.
const (
	LabelModelName      = "model_name"
	LabelEngine         = "engine"
	LabelFinishedReason = "finished_reason"
)

// Metric names as vLLM 0.11.0 exposes them (counters with the _total the
// Prometheus client appends).
const (
	// Gauges, set from each step's SchedulerStats.
	MetricRunning = "vllm:num_requests_running"
	MetricWaiting = "vllm:num_requests_waiting"
	// MetricKVUsage is 1 − free ÷ (num_gpu_blocks − 1), a fraction in
	// [0, 1] (block_pool.py get_usage; cached blocks no request holds
	// count as free).
	MetricKVUsage = "vllm:kv_cache_usage_perc"

	// Counters.
	// MetricPromptTokens counts a request's whole prompt (cached tokens
	// included) once, when its first token is processed (stats.py
	// update_from_output: is_prefilling adds prompt_len).
	MetricPromptTokens     = "vllm:prompt_tokens_total"
	MetricGenerationTokens = "vllm:generation_tokens_total"
	// MetricPreemptions counts PREEMPTED events when the frontend sees
	// them: with the request's next output (the event rides on its next
	// EngineCoreOutput), so a request aborted before its next token never
	// counts its preemption (Recorder.Preempted).
	MetricPreemptions = "vllm:num_preemptions_total"
	// MetricPrefixQueries and MetricPrefixHits count tokens: each lookup of
	// a waiting request queries its num_tokens and hits its cached tokens
	// (kv_cache_manager.py get_computed_blocks).
	MetricPrefixQueries = "vllm:prefix_cache_queries_total"
	MetricPrefixHits    = "vllm:prefix_cache_hits_total"
	// MetricSuccess counts finished requests by finished_reason; a request
	// the client aborted (timeout, disconnect) is not counted: vLLM 0.11.0's
	// OutputProcessor.abort_requests drops its state without recording
	// finished-request stats.
	MetricSuccess = "vllm:request_success_total"

	// Histograms of per-request times, seconds. Only finished (not
	// aborted) requests are observed in E2E, queue, inference, prefill,
	// decode and the two token-count histograms; TTFT and ITL are observed
	// as tokens are processed, so a request aborted after its first token
	// is in them.
	MetricTTFT = "vllm:time_to_first_token_seconds"
	MetricITL  = "vllm:inter_token_latency_seconds"
	// MetricTPOTDeprecated has ITL's observations (0.11.0 still exports it).
	MetricTPOTDeprecated = "vllm:time_per_output_token_seconds"
	MetricE2E            = "vllm:e2e_request_latency_seconds"
	MetricQueueTime      = "vllm:request_queue_time_seconds"
	MetricInferenceTime  = "vllm:request_inference_time_seconds"
	MetricPrefillTime    = "vllm:request_prefill_time_seconds"
	MetricDecodeTime     = "vllm:request_decode_time_seconds"
	// Histograms of counts, tokens.
	MetricRequestPromptTokens     = "vllm:request_prompt_tokens"
	MetricRequestGenerationTokens = "vllm:request_generation_tokens"
	// The request parameters, observed once per finished request as the
	// token counts are (OutputProcessor._update_stats_from_finished,
	// ParentRequest.observe_finished_request with n = 1): max_tokens is
	// bench serve's output length, which a simulated request always
	// generates (ignore_eos), so both token histograms equal
	// MetricRequestGenerationTokens; n is 1 (parallel sampling is not
	// simulated). Buckets: Buckets125(max_model_len); n: BucketsParamsN.
	MetricRequestParamsMaxTokens        = "vllm:request_params_max_tokens"
	MetricRequestMaxNumGenerationTokens = "vllm:request_max_num_generation_tokens"
	MetricRequestParamsN                = "vllm:request_params_n"
	// MetricIterationTokens observes, once per engine step that produced
	// output, the prompt tokens counted in that step plus the tokens it
	// generated (loggers.py record: num_prompt_tokens +
	// num_generation_tokens of the IterationStats).
	MetricIterationTokens = "vllm:iteration_tokens_total"
)

// Histogram bucket upper bounds of vLLM 0.11.0 (loggers.py), in the
// metric's unit.
var (
	// BucketsTTFT: vllm:time_to_first_token_seconds, s.
	BucketsTTFT = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	// BucketsITL: vllm:inter_token_latency_seconds (and the deprecated
	// vllm:time_per_output_token_seconds), s.
	BucketsITL = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	// BucketsRequestLatency: e2e, queue, inference, prefill and decode
	// time (request_latency_buckets), s.
	BucketsRequestLatency = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	// BucketsParamsN: vllm:request_params_n.
	BucketsParamsN = []float64{1, 2, 5, 10, 20}
	// BucketsIterationTokens: vllm:iteration_tokens_total, tokens.
	BucketsIterationTokens = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// Buckets125 is vLLM's build_1_2_5_buckets(max): 1, 2, 5, 10, 20, 50, …
// up to max inclusive, the buckets of vllm:request_prompt_tokens and
// vllm:request_generation_tokens with max = max_model_len (tokens).
func Buckets125(max int) []float64 {
	var out []float64
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p > max {
				return out
			}
			out = append(out, float64(m*p))
		}
	}
}

// FinishedReasons are vLLM's FinishReason values as the finished_reason
// label writes them (str(FinishReason)); every engine exports all three.
// A simulated request always finishes by length: EOS is not simulated
// (ignore_eos) and max_model_len also finishes by length.
var FinishedReasons = []string{"stop", "length", "abort"}
