package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"frontier/scenarios"
)

// datasetFlags are the flags of the sessions and lengths datasets and of
// bench serve's --random-prefix-len; each edits one workload key
// (scenarios/README.md lists them).
type datasetFlags struct {
	numSessions, concurrentUsers                  int
	numTurns, thinkTime, toolLatency              string
	systemPromptLen, numSystemPrompts, usersPerSP int
	userMessageLen, outputLen, templateTokens     int
	toolResultLen                                 int
	rangeRatio, toolCallProb                      float64

	datasetPath                  string
	disableShuffle, noOversample bool
	randomPrefixLen              int
}

// sessionFlagNames are the flags that edit workload.sessions.
var sessionFlagNames = []string{"num-sessions", "concurrent-users", "num-turns", "system-prompt-len", "num-unique-system-prompts",
	"num-users-per-system-prompt", "user-message-len", "session-output-len", "session-range-ratio", "think-time",
	"chat-template-tokens", "tool-call-probability", "tool-latency", "tool-result-len"}

// lengthsFlagNames are the flags that edit workload.lengths (with
// --num-prompts).
var lengthsFlagNames = []string{"dataset-path", "disable-shuffle", "no-oversample"}

func addDatasetFlags(fl *pflag.FlagSet, f *datasetFlags) {
	fl.IntVar(&f.numSessions, "num-sessions", 100, "sessions dataset: conversations in the run")
	fl.IntVar(&f.concurrentUsers, "concurrent-users", 0, "sessions dataset: a fixed number of users running sessions back to back (0 = sessions start at --request-rate)")
	fl.StringVar(&f.numTurns, "num-turns", "5", "sessions dataset: turns per session, N or uniform:MIN:MAX")
	fl.IntVar(&f.systemPromptLen, "system-prompt-len", 0, "sessions dataset: system prompt tokens (0 = none)")
	fl.IntVar(&f.numSystemPrompts, "num-unique-system-prompts", 1, "sessions dataset: distinct system prompts (inference-perf)")
	fl.IntVar(&f.usersPerSP, "num-users-per-system-prompt", 1, "sessions dataset: consecutive sessions sharing a system prompt (inference-perf)")
	fl.IntVar(&f.userMessageLen, "user-message-len", 128, "sessions dataset: tokens of each user message")
	fl.IntVar(&f.outputLen, "session-output-len", 256, "sessions dataset: tokens of each reply")
	fl.Float64Var(&f.rangeRatio, "session-range-ratio", 0, "sessions dataset: message, reply and tool-result lengths uniform in len × [1−r, 1+r]")
	fl.StringVar(&f.thinkTime, "think-time", "0", "sessions dataset: seconds between a reply and the next message: S, exponential:MEAN or uniform:MIN:MAX")
	fl.IntVar(&f.templateTokens, "chat-template-tokens", scenarios.DefaultChatTemplateTokens, "sessions dataset: chat-template tokens per message (Llama-3's: 5)")
	fl.Float64Var(&f.toolCallProb, "tool-call-probability", 0, "sessions dataset: chance a reply (not the last) is a tool call")
	fl.StringVar(&f.toolLatency, "tool-latency", "0", "sessions dataset: seconds a tool call takes: S, exponential:MEAN or uniform:MIN:MAX")
	fl.IntVar(&f.toolResultLen, "tool-result-len", 0, "sessions dataset: tokens of a tool result")
	fl.StringVar(&f.datasetPath, "dataset-path", "", "the dataset's file (bench serve's name): lengths dataset: JSONL or CSV of prompt_len, output_len[, prefix_group, prefix_len]; trace dataset (what a --dataset-path without --dataset-name selects): CSV of arrival_s, prompt_tokens, output_tokens[, prefix_group, prefix_tokens, …]")
	fl.BoolVar(&f.disableShuffle, "disable-shuffle", false, "lengths dataset: take samples in file order")
	fl.BoolVar(&f.noOversample, "no-oversample", false, "lengths dataset: send only the file's samples when it has fewer than --num-prompts")
	fl.IntVar(&f.randomPrefixLen, "random-prefix-len", 0, "random dataset: tokens of one prefix shared by every prompt, before its --random-input-len tokens")
}

// applyDatasetFlags edits the workload from the sessions, lengths and
// random-prefix flags the user set. --num-prompts is the lengths
// dataset's draw count too (bench serve's meaning); it reports whether it
// took --num-prompts.
func applyDatasetFlags(w *scenarios.Workload, f *simFlags, set func(string) bool) (bool, error) {
	d := &f.data
	if anySet(set, sessionFlagNames...) && w.Dataset != "sessions" {
		return false, fmt.Errorf("%s: only for --dataset-name sessions, but the workload's dataset is %s", strings.Join(setFlags(set, sessionFlagNames), ", "), w.Dataset)
	}
	lengthsOnly := lengthsFlagNames
	if w.Dataset == "trace" {
		lengthsOnly = lengthsFlagNames[1:] // --dataset-path is also the trace's CSV
	}
	if anySet(set, lengthsOnly...) && w.Dataset != "lengths" {
		which := "--dataset-name lengths"
		if set("dataset-path") { // the trace's CSV too
			which = "--dataset-name lengths or trace"
		}
		return false, fmt.Errorf("%s: only for %s, but the workload's dataset is %s", strings.Join(setFlags(set, lengthsOnly), ", "), which, w.Dataset)
	}
	if set("random-prefix-len") {
		if w.Dataset != "random" {
			return false, fmt.Errorf("--random-prefix-len: only for the random dataset, but the workload's dataset is %s", w.Dataset)
		}
		if w.Random == nil {
			w.Random = defaultRandom()
		}
		w.Random.PrefixLen = d.randomPrefixLen
	}
	switch w.Dataset {
	case "sessions":
		return false, applySessionFlags(w, d, set)
	case "lengths":
		if w.Lengths == nil {
			w.Lengths = &scenarios.LengthsData{NumPrompts: f.numPrompts} // bench serve's default 1000
		}
		if set("dataset-path") {
			p, _ := absPath(d.datasetPath)
			w.Lengths.Path = p
		}
		if set("num-prompts") {
			w.Lengths.NumPrompts = f.numPrompts
		}
		if set("disable-shuffle") {
			w.Lengths.DisableShuffle = d.disableShuffle
		}
		if set("no-oversample") {
			w.Lengths.NoOversample = d.noOversample
		}
		return true, nil
	}
	return false, nil
}

func applySessionFlags(w *scenarios.Workload, d *datasetFlags, set func(string) bool) error {
	s := w.Sessions
	if s == nil {
		// From flags alone: each flag's default, as if all were given.
		v := scenarios.DefaultSessions()
		s, w.Sessions = &v, &v
		s.NumSessions, s.SystemPromptLen, s.UserMessageLen, s.OutputLen = d.numSessions, d.systemPromptLen, d.userMessageLen, d.outputLen
		for _, n := range []string{"num-turns", "think-time", "tool-latency"} {
			if !set(n) {
				if err := applyDistribution(s, d, n); err != nil {
					return err
				}
			}
		}
	}
	for _, c := range []struct {
		flag string
		dst  *int
		v    int
	}{
		{"num-sessions", &s.NumSessions, d.numSessions}, {"system-prompt-len", &s.SystemPromptLen, d.systemPromptLen},
		{"num-unique-system-prompts", &s.NumUniqueSystemPrompts, d.numSystemPrompts},
		{"num-users-per-system-prompt", &s.NumUsersPerSystemPrompt, d.usersPerSP}, {"user-message-len", &s.UserMessageLen, d.userMessageLen},
		{"session-output-len", &s.OutputLen, d.outputLen}, {"chat-template-tokens", &s.ChatTemplateTokens, d.templateTokens},
		{"tool-result-len", &s.ToolResultLen, d.toolResultLen},
	} {
		if set(c.flag) {
			*c.dst = c.v
		}
	}
	if set("concurrent-users") {
		s.ConcurrentUsers = nil // 0 = sessions start by the request rate
		if v := d.concurrentUsers; v != 0 {
			s.ConcurrentUsers = &v
		}
	}
	if set("session-range-ratio") {
		s.RangeRatio = d.rangeRatio
	}
	if set("tool-call-probability") {
		s.ToolCallProbability = d.toolCallProb
	}
	for _, n := range []string{"num-turns", "think-time", "tool-latency"} {
		if set(n) {
			if err := applyDistribution(s, d, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyDistribution sets the key of flag n from its value.
func applyDistribution(s *scenarios.Sessions, d *datasetFlags, n string) error {
	var err error
	switch n {
	case "num-turns":
		s.NumTurns, err = parseDistribution(n, d.numTurns, "N or uniform:MIN:MAX")
	case "think-time":
		s.ThinkTimeS, err = parseDistribution(n, d.thinkTime, "seconds S, exponential:MEAN or uniform:MIN:MAX")
	case "tool-latency":
		s.ToolLatencyS, err = parseDistribution(n, d.toolLatency, "seconds S, exponential:MEAN or uniform:MIN:MAX")
	}
	return err
}

// parseDistribution reads a distribution flag: V (fixed), fixed:V,
// exponential:MEAN or uniform:MIN:MAX.
func parseDistribution(flag, v, allowed string) (scenarios.Distribution, error) {
	parts := strings.Split(strings.TrimSpace(v), ":")
	nums := make([]float64, 0, 2)
	for _, p := range parts[1:] {
		x, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return scenarios.Distribution{}, fmt.Errorf("--%s: must be %s, got %q", flag, allowed, v)
		}
		nums = append(nums, x)
	}
	switch {
	case len(parts) == 1:
		x, err := strconv.ParseFloat(parts[0], 64)
		if err == nil {
			return scenarios.Fixed(x), nil
		}
	case parts[0] == "fixed" && len(nums) == 1:
		return scenarios.Fixed(nums[0]), nil
	case parts[0] == "exponential" && len(nums) == 1:
		return scenarios.Distribution{Distribution: "exponential", Mean: nums[0]}, nil
	case parts[0] == "uniform" && len(nums) == 2:
		return scenarios.Distribution{Distribution: "uniform", Min: nums[0], Max: nums[1]}, nil
	}
	return scenarios.Distribution{}, fmt.Errorf("--%s: must be %s, got %q", flag, allowed, v)
}
