package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// flagKeys pairs scenario keys with the simulate flags that set them; a key
// with several flags lists the alias the user may have typed first
// (--input-len is bench serve's general form of --random-input-len).
var flagKeys = []struct{ key, flag string }{
	{"hardware", "hardware"}, {"profiles", "profile-dir"}, {"calibration", "calibration"}, {"vllm_version", "vllm-version"},
	{"deployment.model", "model"}, {"deployment.dtype", "dtype"}, {"deployment.quantization", "quantization"},
	{"deployment.tensor_parallel_size", "tensor-parallel-size"}, {"deployment.pipeline_parallel_size", "pipeline-parallel-size"},
	{"deployment.data_parallel_size", "data-parallel-size"}, {"deployment.enable_expert_parallel", "enable-expert-parallel"},
	{"deployment.max_num_seqs", "max-num-seqs"}, {"deployment.max_num_batched_tokens", "max-num-batched-tokens"},
	{"deployment.max_model_len", "max-model-len"}, {"deployment.gpu_memory_utilization", "gpu-memory-utilization"},
	{"deployment.block_size", "block-size"}, {"deployment.long_prefill_token_threshold", "long-prefill-token-threshold"},
	{"deployment.kv_cache_dtype", "kv-cache-dtype"}, {"deployment.num_gpu_blocks_override", "num-gpu-blocks-override"},
	{"deployment.cuda_graph_sizes", "cuda-graph-sizes"}, {"deployment.api_server_count", "api-server-count"},
	{"deployment.scheduling_policy", "scheduling-policy"},
	{"workload.dataset", "dataset-name"}, {"workload.seed", "seed"}, {"workload.trace.path", "dataset-path"},
	{"workload.random.num_prompts", "num-prompts"},
	{"workload.random.input_len", "input-len"}, {"workload.random.input_len", "random-input-len"},
	{"workload.random.output_len", "output-len"}, {"workload.random.output_len", "random-output-len"},
	{"workload.random.range_ratio", "random-range-ratio"}, {"workload.random.prefix_len", "random-prefix-len"},
	{"workload.random.prefix_len", "prefix-len"}, // bench throughput's name
	{"workload.arrivals.request_rate", "request-rate"}, {"workload.arrivals.burstiness", "burstiness"},
	{"workload.arrivals.max_concurrency", "max-concurrency"}, {"workload.arrivals.timeout_s", "timeout"},
	{"workload.lengths.path", "dataset-path"}, {"workload.lengths.num_prompts", "num-prompts"},
	{"workload.sessions.num_sessions", "num-sessions"}, {"workload.sessions.concurrent_users", "concurrent-users"},
	{"workload.sessions.num_turns", "num-turns"}, {"workload.sessions.system_prompt_len", "system-prompt-len"},
	{"workload.sessions.num_unique_system_prompts", "num-unique-system-prompts"},
	{"workload.sessions.num_users_per_system_prompt", "num-users-per-system-prompt"},
	{"workload.sessions.user_message_len", "user-message-len"}, {"workload.sessions.output_len", "session-output-len"},
	{"workload.sessions.range_ratio", "session-range-ratio"}, {"workload.sessions.think_time_s", "think-time"},
	{"workload.sessions.chat_template_tokens", "chat-template-tokens"},
	{"workload.sessions.tool_call_probability", "tool-call-probability"}, {"workload.sessions.tool_latency_s", "tool-latency"},
	{"workload.sessions.tool_result_len", "tool-result-len"},
	{"replicas.count", "replicas"}, {"replicas.router", "router"}, {"replicas.weights", "router-weights"},
	{"replicas.metrics_interval_ms", "router-metrics-interval-ms"},
}

// distributionKeys are the keys whose value is a distribution: an error
// about one of its fields (KEY.max: …) names the flag and the field
// (--num-turns: max: …).
var distributionKeys = map[string]bool{"workload.sessions.num_turns": true, "workload.sessions.think_time_s": true, "workload.sessions.tool_latency_s": true}

// flagError is an error about a value the user typed as a flag.
type flagError struct {
	msg string
	err error
}

func (e flagError) Error() string { return e.msg }
func (e flagError) Unwrap() error { return e.err }

// nameTheFlag rewrites an error that names a scenario key whose value came
// from a flag (changed) so it names the flag the user typed instead
// (--request-rate, not workload.arrivals.request_rate), with "or null"
// read as "or unset". An error about a key the scenario file set keeps the
// key and names the file.
//
// With no scenario file (file empty) every value came from a flag or the
// embedded default, so a required value left out ("KEY: required …")
// names the flag that gives it, typed or not.
func nameTheFlag(err error, changed func(string) bool, file string) error {
	return nameFlag(err, changed, file, file == "")
}

// nameFlag is nameTheFlag; flagsOnly says no scenario file was given.
func nameFlag(err error, changed func(string) bool, file string, flagsOnly bool) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	keyed := false
	for _, p := range flagKeys {
		rest, ok := strings.CutPrefix(msg, p.key)
		if ok && distributionKeys[p.key] && strings.HasPrefix(rest, ".") {
			if field, after, cut := strings.Cut(rest[1:], ":"); cut && !strings.Contains(field, " ") {
				rest = ": " + field + ":" + after
			}
		}
		if !ok || rest == "" || !strings.ContainsRune(":[ ", rune(rest[0])) {
			continue
		}
		keyed = true
		if changed(p.flag) || flagsOnly && strings.HasPrefix(rest, ": required") {
			rest = strings.TrimPrefix(rest, " (--"+p.flag+")") // "KEY (--flag) is …": the flag once
			return flagError{"--" + p.flag + strings.ReplaceAll(rest, " or null", " or unset"), err}
		}
	}
	for _, top := range []string{"hardware", "router", "profiles", "calibration", "predictor", "deployment", "disaggregation", "workload"} {
		if rest, ok := strings.CutPrefix(msg, top); ok && rest != "" && strings.ContainsRune(".:[ ", rune(rest[0])) {
			keyed = true
		}
	}
	if keyed && file != "" {
		return flagError{fmt.Sprintf("%s: %s", file, msg), err}
	}
	return err
}

// negativeConcurrency refuses --max-concurrency below 0 in vllm bench
// serve's terms: 0 (the default) or unset is no limit.
func negativeConcurrency(v int) error {
	if v < 0 {
		return errors.New("--max-concurrency: must be ≥ 1, or 0 (the default) for no limit as in vllm bench serve, got " + fmt.Sprint(v))
	}
	return nil
}

// randomInputLenHelp is --random-input-len's help. Why 512 and not vllm
// bench serve's 1024: with no flags, frontier simulate runs its embedded
// default scenario (512 in / 128 out, the shape of the published benchmark
// it reproduces), and a flag left out keeps the scenario's value, so a
// default of 1024 in the help would be a value no run uses. Users who
// reproduce a bench serve run without --random-input-len pass 1024.
const randomInputLenHelp = "prompt tokens (random dataset); unset: the --scenario file's value, else the embedded default's 512 " +
	"(vllm bench serve's default is 1024: pass --random-input-len 1024 to match a bench serve run that left it out)"

// abandon removes the partial --steps-csv of a run that stopped with err
// (nothing is left behind) and returns err.
func abandon(err error, steps *stepWriter, path string) error {
	if steps != nil {
		steps.close()
		os.Remove(path)
	}
	return err
}
