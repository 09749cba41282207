package main

import (
	"fmt"
	"math"
	"strings"

	"frontier/scenarios"
	"frontier/sim"
)

// perTurn is the summary's per-turn section of a session workload (empty
// otherwise): completed requests, mean prompt, prefix-cache hit rate
// (cached / prompt tokens at admission) and TTFT by turn index, then all
// turns together.
func perTurn(res *sim.Result) string {
	stats := sim.PerTurn(res.Requests)
	if stats == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %9s %11s %8s %10s %12s %11s\n", "turn", "completed", "mean prompt", "cached %", "mean TTFT", "median TTFT", "mean E2EL")
	for _, s := range stats {
		turn := fmt.Sprint(s.Turn)
		if s.Turn == 0 {
			turn = "all"
		}
		if s.Completed == 0 {
			fmt.Fprintf(&b, "%-5s %9d %11s %8s %10s %12s %11s\n", turn, 0, "-", "-", "-", "-", "-")
			continue
		}
		fmt.Fprintf(&b, "%-5s %9d %11.0f %7.1f%% %10.2f %12.2f %11.2f\n", turn, s.Completed, float64(s.PromptTokens)/float64(s.Completed),
			100*s.HitRate(), s.MeanTTFTMs, s.MedianTTFTMs, s.MeanE2ELMs)
	}
	b.WriteString("(ms; cached % = prefix-cache hit tokens / prompt tokens)\n")
	return b.String()
}

// perTurnJSON is the result JSON's frontier.per_turn: one object per turn
// index (turn 0 = all turns), nil without sessions.
func perTurnJSON(res *sim.Result) []map[string]any {
	var out []map[string]any
	for _, s := range sim.PerTurn(res.Requests) {
		o := map[string]any{"turn": s.Turn, "completed": s.Completed, "prompt_tokens": s.PromptTokens, "cached_tokens": s.CachedTokens}
		if s.Completed > 0 {
			o["prefix_cache_hit_rate"] = s.HitRate()
			o["mean_ttft_ms"], o["median_ttft_ms"], o["mean_e2el_ms"] = s.MeanTTFTMs, s.MedianTTFTMs, s.MeanE2ELMs
		}
		out = append(out, o)
	}
	return out
}

// describeSessions says how a sessions workload starts its sessions.
func describeSessions(w *scenarios.Workload) string {
	s := w.Sessions
	if s.ConcurrentUsers != nil {
		return fmt.Sprintf("sessions: %d concurrent users (closed loop), %d sessions", *s.ConcurrentUsers, s.NumSessions)
	}
	r := float64(w.Arrivals.RequestRate)
	if math.IsInf(r, 1) {
		return fmt.Sprintf("sessions: all %d start at t = 0, then closed loop", s.NumSessions)
	}
	return fmt.Sprintf("sessions: %d start at %g sessions/s (burstiness %g), then closed loop", s.NumSessions, r, w.Arrivals.Burstiness)
}
