package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"frontier/scenarios"
	"frontier/sim/engine"
)

// sessionsPlan builds dataset: sessions (scenarios.Sessions): every
// session's turns in order, session after session, in one stage. A
// session's first turn is sent at its start (workload.arrivals, or t = 0
// for the first concurrent_users sessions); every later turn, and a
// user's next session, is closed-loop. maxModelLen > 0 drops a turn's
// oldest turns when its prompt + output would exceed it.
func sessionsPlan(p *scenarios.Sessions, a *scenarios.Arrivals, rng *rand.Rand, maxModelLen int) (*Plan, error) {
	var starts []int64
	users := p.NumSessions
	if p.ConcurrentUsers != nil {
		users = *p.ConcurrentUsers
	} else {
		var err error
		if starts, err = sendTimes(p.NumSessions, a, rng, "session"); err != nil {
			return nil, err
		}
	}
	g := newSessionGen(p, rng, maxModelLen)
	var reqs []Request
	last := make([]int, p.NumSessions) // each session's last turn
	for s := range p.NumSessions {
		first := len(reqs)
		var err error
		if reqs, err = g.session(reqs, s); err != nil {
			return nil, err
		}
		last[s] = len(reqs) - 1
		switch {
		case s >= users: // the user of session s − users starts it
			reqs[last[s-users]].Next = int32(first)
			reqs[first].ClosedLoop, reqs[first].turnOf().thinkNs = true, g.draw(p.ThinkTimeS)
		case starts != nil:
			reqs[first].At = starts[s]
		}
	}
	for i := range reqs {
		reqs[i].ID = int32(i)
	}
	plan := &Plan{Stages: []Stage{{Requests: reqs}}}
	if g.cut > 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("sessions: %d of %d turns would exceed max_model_len %d (prompt + output tokens); their oldest turns were dropped (the system prompt kept), as a chat client cuts history, so those prompts differ from the previous turn's after the system prompt and miss the prefix cache there", g.cut, len(reqs), maxModelLen))
	}
	return plan, nil
}

// sessionGen draws sessions' turns.
type sessionGen struct {
	p              *scenarios.Sessions
	rng            *rand.Rand
	maxModelLen    int
	tmpl           int // chat template tokens per message
	msgLo, msgHi   int
	outLo, outHi   int
	toolLo, toolHi int
	cut            int // turns whose oldest turns were dropped
	turns          []turnDraw
	hist           []engine.Segment // the session's conversation
	run            []engine.Segment // the current run of cut turns' prompt (prompt)
	msgs, outs     []int            // per turn: message segment and reply lengths
}

// turnDraw is one turn's drawn lengths and delay.
type turnDraw struct {
	msg, out int   // new message (user message or tool result) and reply, tokens
	tool     bool  // the reply is a tool call
	delayNs  int64 // think time, or tool latency after a tool call
}

func newSessionGen(p *scenarios.Sessions, rng *rand.Rand, maxModelLen int) *sessionGen {
	g := &sessionGen{p: p, rng: rng, maxModelLen: maxModelLen, tmpl: p.ChatTemplateTokens}
	g.msgLo, g.msgHi = lengthRange(p.UserMessageLen, p.RangeRatio)
	g.outLo, g.outHi = lengthRange(p.OutputLen, p.RangeRatio)
	if p.ToolResultLen > 0 {
		g.toolLo, g.toolHi = lengthRange(p.ToolResultLen, p.RangeRatio)
	}
	return g
}

// draw is one value of d, seconds, as ns (0 when d is not given).
func (g *sessionGen) draw(d scenarios.Distribution) int64 {
	var v float64
	switch d.Distribution {
	case "fixed":
		v = d.Value
	case "exponential":
		v = d.Mean * g.rng.ExpFloat64()
	case "uniform":
		v = d.Min + (d.Max-d.Min)*g.rng.Float64()
	}
	return int64(math.Round(v * 1e9))
}

func (g *sessionGen) intIn(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

// session appends session s's turns (session number s + 1). Draws, per
// turn: the delay before it (turns after the first), its new message's
// length, its reply's length, and whether the reply is a tool call (not
// for the last turn, and only when tool_call_probability > 0).
func (g *sessionGen) session(reqs []Request, s int) ([]Request, error) {
	p := g.p
	n := s + 1
	t := int(p.NumTurns.Value)
	if p.NumTurns.Distribution == "uniform" {
		t = g.intIn(int(p.NumTurns.Min), int(p.NumTurns.Max))
	}
	g.turns = g.turns[:0]
	for k := range t {
		var d turnDraw
		prevTool := k > 0 && g.turns[k-1].tool
		switch {
		case prevTool:
			d.delayNs = g.draw(p.ToolLatencyS)
		case k > 0:
			d.delayNs = g.draw(p.ThinkTimeS)
		}
		if prevTool {
			d.msg = g.intIn(g.toolLo, g.toolHi)
		} else {
			d.msg = g.intIn(g.msgLo, g.msgHi)
		}
		d.out = g.intIn(g.outLo, g.outHi)
		if k < t-1 && p.ToolCallProbability > 0 {
			d.tool = g.rng.Float64() < p.ToolCallProbability
		}
		g.turns = append(g.turns, d)
	}
	// The conversation as one list of segments: the system prompt, then
	// per turn its new message (template tokens before it, and the
	// generation prompt, the reply's template share, after it) and its
	// reply.
	group := (s / p.NumUsersPerSystemPrompt) % p.NumUniqueSystemPrompts
	sysKey, sysLen := streamKey(keySystem, uint64(group), 0), 0
	g.hist = g.hist[:0:0] // a fresh list: earlier sessions' prompts keep theirs
	if p.SystemPromptLen > 0 {
		sysLen = g.tmpl + p.SystemPromptLen
		g.hist = append(g.hist, engine.Segment{Key: sysKey, End: sysLen})
	}
	end := sysLen
	g.msgs, g.outs = g.msgs[:0], g.outs[:0]
	for k, d := range g.turns {
		g.msgs = append(g.msgs, 2*g.tmpl+d.msg)
		g.outs = append(g.outs, d.out)
		end += g.msgs[k]
		g.hist = append(g.hist, engine.Segment{Key: streamKey(keyMessage, uint64(n), uint64(k+1)), End: end})
		end += d.out
		g.hist = append(g.hist, engine.Segment{Key: streamKey(keyReply, uint64(n), uint64(k+1)), End: end})
	}
	sys := len(g.hist) - 2*t // 1 with a system prompt, else 0
	prevDrop := 0
	for k, d := range g.turns {
		drop, segs, prompt, err := g.prompt(k, sysLen, n, prevDrop)
		if err != nil {
			return nil, err
		}
		if prompt+d.out > math.MaxInt32 { // only without max_model_len (Build)
			return nil, fmt.Errorf("workload.sessions: session %d turn %d's prompt + output would be %d tokens, more than %d; set max_model_len", n, k+1, prompt+d.out, math.MaxInt32)
		}
		if k > 0 {
			prev := &reqs[len(reqs)-1]
			prev.Next = int32(len(reqs))
			if drop == prevDrop { // this prompt repeats the previous turn's and its reply
				prev.turn.reusedTokens = prev.PromptTokens + prev.OutputTokens
			}
		}
		prevDrop = drop
		reqs = append(reqs, Request{
			PromptTokens: int32(prompt), OutputTokens: int32(d.out),
			PrefixKey: sysKey, PrefixTokens: int32(sysLen), ContentKey: g.hist[sys+2*k].Key, UniquePrompt: true,
			turn: &turnFields{segments: segs, outputKey: g.hist[sys+2*k+1].Key, thinkNs: d.delayNs,
				session: int32(n), turn: int32(k + 1)},
			ClosedLoop: k > 0,
		})
	}
	return reqs, nil
}

// prompt is turn k's prompt (0-based) of session n: how many of the
// oldest turns it drops to fit max_model_len with its reply, its segments
// and its length. Without a drop the segments are the front of the
// conversation's list. A turn drops at least as many turns as the one
// before (prevDrop): the conversation only grows. A cut turn that drops
// as many as the turn before repeats that turn's prompt and reply, so its
// segments extend the run's list (g.run) as the conversation's list
// grows; one that drops more starts a run: its kept history after the
// system prompt is one new stream (keyKept), since no earlier prompt
// holds those tokens at those positions. Either way a turn costs O(1)
// segments, not one per turn it keeps (on a copy of them, one session of
// 10,000 one-token turns cut to 5,000 took 854 MB).
func (g *sessionGen) prompt(k, sysLen, n, prevDrop int) (drop int, segs []engine.Segment, prompt int, err error) {
	sys := 0
	if sysLen > 0 {
		sys = 1
	}
	msgIdx := sys + 2*k // turn k's message in hist
	full := g.hist[msgIdx].End
	cut := func(d int) int { // tokens of turns [0, d)
		if d == 0 {
			return 0
		}
		return g.hist[sys+2*d-1].End - sysLen
	}
	need := func(d int) int { return full - cut(d) + g.outs[k] } // prompt + reply after dropping turns [0, d)
	if g.maxModelLen <= 0 || need(0) <= g.maxModelLen {
		return 0, g.hist[: msgIdx+1 : msgIdx+1], full, nil
	}
	for drop = max(prevDrop, 1); drop <= k && need(drop) > g.maxModelLen; drop++ {
	}
	if drop > k {
		which := fmt.Sprintf("session %d's first turn needs", n)
		if k > 0 {
			which = fmt.Sprintf("session %d turn %d needs, even without its earlier turns,", n, k+1)
		}
		return 0, nil, 0, fmt.Errorf("workload.sessions: %s %d prompt + %d output tokens, more than max_model_len %d (vLLM rejects prompt + max_tokens > max_model_len): shorten system_prompt_len, user_message_len, tool_result_len or output_len, lower chat_template_tokens, or raise deployment.max_model_len",
			which, sysLen+g.msgs[k], g.outs[k], g.maxModelLen)
	}
	g.cut++
	prompt = full - cut(drop)
	if drop == prevDrop { // the run goes on: the previous prompt, its reply, this message
		prev := g.run[len(g.run)-1].End
		g.run = append(g.run, engine.Segment{Key: g.hist[msgIdx-1].Key, End: prev + g.outs[k-1]}, engine.Segment{Key: g.hist[msgIdx].Key, End: prompt})
	} else { // a new list: earlier turns keep theirs
		g.run = make([]engine.Segment, 0, 8)
		if sys > 0 {
			g.run = append(g.run, g.hist[0])
		}
		g.run = append(g.run, engine.Segment{Key: streamKey(keyKept, uint64(n), uint64(k+1)), End: prompt})
	}
	return drop, g.run[:len(g.run):len(g.run)], prompt, nil
}

// sessionClasses draws each session's class (workload.classes) as
// mixClasses draws a prompt's, and gives it to every turn of the session.
func sessionClasses(reqs []Request, w *scenarios.Workload) {
	if len(w.Classes) == 0 {
		return
	}
	var firsts []Request // one per session, in session order
	for _, r := range reqs {
		if r.Turn() == 1 {
			firsts = append(firsts, r)
		}
	}
	mixClasses(firsts, w)
	for i := range reqs {
		c := &firsts[reqs[i].Session()-1]
		reqs[i].Class, reqs[i].Priority = c.Class, c.Priority
	}
}
