package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// Sessions is a multi-turn chat or agent workload (dataset: sessions).
// Each session is one conversation: turn k's prompt is the system prompt,
// every earlier message and reply, and a new message; turn k+1 is sent
// closed-loop, a think time (or, after a tool call, the tool's latency)
// after turn k's last token. Lengths are tokens, times seconds.
type Sessions struct {
	// NumSessions is how many conversations the run holds.
	NumSessions int `yaml:"num_sessions"`
	// ConcurrentUsers, when set, is a fixed number of users: the first
	// ConcurrentUsers sessions start at t = 0 and each user starts its
	// next session a think time after its last one ended. Nil: sessions
	// start by workload.arrivals (request_rate = sessions started per s).
	ConcurrentUsers *int `yaml:"concurrent_users"`
	// NumTurns is the turns per session: fixed, or drawn per session
	// (uniform integers).
	NumTurns Distribution `yaml:"num_turns"`
	// SystemPromptLen is the system prompt's length (0 = none); session i
	// uses system prompt ⌊i / NumUsersPerSystemPrompt⌋ mod
	// NumUniqueSystemPrompts (inference-perf's groups).
	SystemPromptLen         int `yaml:"system_prompt_len"`
	NumUniqueSystemPrompts  int `yaml:"num_unique_system_prompts"`
	NumUsersPerSystemPrompt int `yaml:"num_users_per_system_prompt"`
	// UserMessageLen and OutputLen are each turn's new user message and
	// reply (ignore_eos), uniform in len × [1 − RangeRatio, 1 + RangeRatio]
	// as bench serve's random dataset draws.
	UserMessageLen int     `yaml:"user_message_len"`
	OutputLen      int     `yaml:"output_len"`
	RangeRatio     float64 `yaml:"range_ratio"`
	// ThinkTimeS is the delay between a reply's last token and the user's
	// next message, seconds.
	ThinkTimeS Distribution `yaml:"think_time_s"`
	// ChatTemplateTokens is what the chat template adds per message
	// (DefaultChatTemplateTokens).
	ChatTemplateTokens int `yaml:"chat_template_tokens"`
	// ToolCallProbability is the chance that a turn other than the last
	// ends in a tool call: the next turn then starts ToolLatencyS after
	// the reply, with a tool result of ToolResultLen tokens (range_ratio
	// applies) instead of a user message.
	ToolCallProbability float64      `yaml:"tool_call_probability"`
	ToolLatencyS        Distribution `yaml:"tool_latency_s"`
	ToolResultLen       int          `yaml:"tool_result_len"`
}

// DefaultChatTemplateTokens is the chat-template overhead per message:
// Llama-3-Instruct's template wraps every message as
// <|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>, 5
// tokens, and opens the conversation with <|begin_of_text|>; counting 5
// per message, the generation prompt being the reply's share, gives that
// template's exact prompt lengths (Llama-3.1's template also puts a dated
// preamble, about 25 tokens, in the system message: add it to
// system_prompt_len).
const DefaultChatTemplateTokens = 5

// UnmarshalYAML fills the defaults (one system prompt, one user per
// system prompt, DefaultChatTemplateTokens) before reading the keys.
func (s *Sessions) UnmarshalYAML(n *yaml.Node) error {
	*s = DefaultSessions()
	type plain Sessions
	return n.Decode((*plain)(s))
}

// DefaultSessions is a Sessions with every default set and nothing else.
func DefaultSessions() Sessions {
	return Sessions{NumUniqueSystemPrompts: 1, NumUsersPerSystemPrompt: 1, ChatTemplateTokens: DefaultChatTemplateTokens}
}

// Distribution is a number drawn per use. In YAML, a plain number is fixed;
// a mapping names the distribution: {distribution: fixed, value: V},
// {distribution: exponential, mean: M} or {distribution: uniform, min: A,
// max: B}. The zero Distribution is "not given".
type Distribution struct {
	Distribution string  `yaml:"distribution"` // fixed | exponential | uniform
	Value        float64 `yaml:"value"`
	Mean         float64 `yaml:"mean"`
	Min          float64 `yaml:"min"`
	Max          float64 `yaml:"max"`
}

// Distributions are the Distribution.Distribution values.
var Distributions = []string{"fixed", "exponential", "uniform"}

// Fixed is a Distribution that is always v.
func Fixed(v float64) Distribution { return Distribution{Distribution: "fixed", Value: v} }

// UnmarshalYAML reads a plain number as Fixed.
func (d *Distribution) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var v float64
		if err := n.Decode(&v); err != nil {
			return err
		}
		*d = Fixed(v)
		return nil
	}
	type plain Distribution
	return n.Decode((*plain)(d))
}

// IsSet reports whether the distribution was given.
func (d Distribution) IsSet() bool { return d != Distribution{} }

// String writes the distribution as its flag form: V, exponential:MEAN or
// uniform:MIN:MAX.
func (d Distribution) String() string {
	switch d.Distribution {
	case "exponential":
		return fmt.Sprintf("exponential:%g", d.Mean)
	case "uniform":
		return fmt.Sprintf("uniform:%g:%g", d.Min, d.Max)
	}
	return fmt.Sprintf("%g", d.Value)
}

// validate checks the distribution of key: values in [lo, hi], integers
// when integer.
func (d Distribution) validate(key string, lo, hi float64, integer bool) error {
	bad := func(v float64) bool {
		return math.IsNaN(v) || v < lo || v > hi || (integer && v != math.Trunc(v))
	}
	what := "a number"
	if integer {
		what = "an integer"
	}
	rng := fmt.Sprintf("%s in [%g, %g]", what, lo, hi)
	switch d.Distribution {
	case "fixed":
		if bad(d.Value) {
			return fmt.Errorf("%s: must be %s, got %g", key, rng, d.Value)
		}
	case "exponential":
		if integer {
			return fmt.Errorf("%s: must be fixed or uniform (integers), got exponential", key)
		}
		if bad(d.Mean) {
			return fmt.Errorf("%s.mean: must be %s, got %g", key, rng, d.Mean)
		}
	case "uniform":
		if bad(d.Min) {
			return fmt.Errorf("%s.min: must be %s, got %g", key, rng, d.Min)
		}
		if bad(d.Max) || d.Max < d.Min {
			return fmt.Errorf("%s.max: must be %s and ≥ min (%g), got %g", key, rng, d.Min, d.Max)
		}
	default:
		return fmt.Errorf("%s.distribution: must be one of %s, got %q", key, strings.Join(Distributions, ", "), d.Distribution)
	}
	return nil
}

// Upper bounds of the sessions workload.
const (
	MaxTurns    = 10_000 // turns per session
	MaxToolProb = 1.0
)

// Validate checks the sessions block and the arrivals it uses.
func (s *Sessions) Validate(a *Arrivals) error {
	const p = "workload.sessions."
	if s.NumSessions < 1 {
		return fmt.Errorf("%snum_sessions: required, an integer ≥ 1 (got %d); with system prompt groups, e.g. num_unique_system_prompts × num_users_per_system_prompt", p, s.NumSessions)
	}
	if err := atMost(p+"num_sessions", s.NumSessions, MaxRequests); err != nil {
		return err
	}
	if u := s.ConcurrentUsers; u != nil {
		if *u < 1 || *u > s.NumSessions {
			return fmt.Errorf("%sconcurrent_users: must be in [1, num_sessions = %d] or null (sessions start by workload.arrivals), got %d", p, s.NumSessions, *u)
		}
		if !math.IsInf(float64(a.RequestRate), 1) {
			return fmt.Errorf("workload.arrivals.request_rate: not used with %sconcurrent_users (each user starts its next session when the last one ends); remove one of them", p)
		}
	}
	if len(a.Stages) > 0 {
		return errors.New("workload.arrivals.stages: not supported with dataset sessions (sessions start by request_rate, or concurrent_users)")
	}
	if !s.NumTurns.IsSet() {
		return fmt.Errorf("%snum_turns: required, an integer ≥ 1 or {distribution: uniform, min: A, max: B}", p)
	}
	if err := s.NumTurns.validate(p+"num_turns", 1, MaxTurns, true); err != nil {
		return err
	}
	for _, c := range []struct {
		key    string
		v, min int
	}{
		{"system_prompt_len", s.SystemPromptLen, 0}, {"num_unique_system_prompts", s.NumUniqueSystemPrompts, 1},
		{"num_users_per_system_prompt", s.NumUsersPerSystemPrompt, 1}, {"user_message_len", s.UserMessageLen, 1},
		{"output_len", s.OutputLen, 1}, {"chat_template_tokens", s.ChatTemplateTokens, 0},
	} {
		if c.v < c.min {
			return fmt.Errorf("%s%s: must be ≥ %d, got %d", p, c.key, c.min, c.v)
		}
		if err := atMost(p+c.key, c.v, MaxTokens); err != nil {
			return err
		}
	}
	if !(s.RangeRatio >= 0 && s.RangeRatio < 1) {
		return fmt.Errorf("%srange_ratio: must be in [0, 1), got %g", p, s.RangeRatio)
	}
	if s.ThinkTimeS.IsSet() {
		if err := s.ThinkTimeS.validate(p+"think_time_s", 0, MaxSeconds, false); err != nil {
			return err
		}
	}
	if !(s.ToolCallProbability >= 0 && s.ToolCallProbability <= MaxToolProb) {
		return fmt.Errorf("%stool_call_probability: must be in [0, 1], got %g", p, s.ToolCallProbability)
	}
	if s.ToolCallProbability > 0 && s.ToolResultLen < 1 {
		return fmt.Errorf("%stool_result_len: must be ≥ 1 when tool_call_probability > 0, got %d", p, s.ToolResultLen)
	}
	if s.ToolResultLen < 0 {
		return fmt.Errorf("%stool_result_len: must be ≥ 0, got %d", p, s.ToolResultLen)
	}
	if err := atMost(p+"tool_result_len", s.ToolResultLen, MaxTokens); err != nil {
		return err
	}
	if s.ToolLatencyS.IsSet() {
		if err := s.ToolLatencyS.validate(p+"tool_latency_s", 0, MaxSeconds, false); err != nil {
			return err
		}
	}
	turns := s.NumTurns.Value
	if s.NumTurns.Distribution == "uniform" {
		turns = s.NumTurns.Max
	}
	if float64(s.NumSessions)*turns > MaxRequests {
		return fmt.Errorf("%s: num_sessions × num_turns must be ≤ %d requests, got %d × %g", strings.TrimSuffix(p, "."), MaxRequests, s.NumSessions, turns)
	}
	return nil
}
