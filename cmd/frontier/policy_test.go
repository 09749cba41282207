package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// Bad policy input exits 2 with a message naming the flag or key and
// what is allowed; nothing is simulated.
func TestPolicyBadInput(t *testing.T) {
	dir := t.TempDir()
	prioTrace := writeFile(t, dir, "prio.csv", "arrival_s,prompt_tokens,output_tokens,priority\n0,64,4,0\n0.1,64,4,2\n")
	fracTrace := writeFile(t, dir, "frac.csv", "arrival_s,prompt_tokens,output_tokens,priority\n0,64,4,1.5\n")
	n := 0
	classes := func(body string) string {
		n++
		return writeFile(t, dir, "c"+strconv.Itoa(n)+".yaml", "hardware: h200-sxm\ndeployment: {model: meta-llama/Llama-3.1-8B-Instruct, scheduling_policy: priority}\n"+
			"workload:\n  dataset: random\n  random: {num_prompts: 10, input_len: 64, output_len: 4}\n  classes:\n"+body)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown policy", withTiny("--scheduling-policy", "lifo"), []string{"--scheduling-policy", `"lifo"`, "allowed: fcfs, priority, sjf"}},
		{"priority under fcfs", []string{"simulate", "--quiet", "--dataset-path", prioTrace},
			[]string{"--scheduling-policy", "is fcfs", "request 1", `"Got priority 2 but Priority scheduling is not enabled."`}},
		{"priority not an integer", []string{"simulate", "--quiet", "--dataset-path", fracTrace, "--scheduling-policy", "priority"},
			[]string{"line 2", "priority: must be an integer", `"1.5"`}},
		{"shares not summing to 1", []string{"simulate", "--quiet", "--scenario", classes("    - {name: a, share: 0.5}\n    - {name: b, share: 0.4}\n")},
			[]string{"workload.classes: the shares must sum to 1, got 0.9"}},
		{"class without a name", []string{"simulate", "--quiet", "--scenario", classes("    - {share: 1}\n")},
			[]string{"workload.classes[0].name: required"}},
		{"class priority not an integer", []string{"simulate", "--quiet", "--scenario", classes("    - {name: a, share: 1, priority: high}\n")},
			[]string{"workload.classes[0].priority: must be an integer", `"high"`}},
		{"replicas 0", withTiny("--replicas", "0"), []string{"--replicas: must be in [1, 1024], got 0"}},
		{"replicas × DP", withTiny("--replicas", "600", "--data-parallel-size", "2"), []string{"--replicas", "1200 engines, more than 1024"}},
		{"unknown router", withTiny("--replicas", "2", "--router", "random"), []string{"--router", `"random"`, "allowed: kv-usage, least-requests, prefix-cache, queue, round-robin, session, weighted"}},
		{"session router without sessions", withTiny("--replicas", "2", "--router", "session"), []string{"--router", "session routes by session id", "no request of the workload has one"}},
		{"session scorer without sessions", withTiny("--replicas", "2", "--router", "weighted", "--router-weights", "session=1,queue=1"), []string{"--router", "session scorer"}},
		{"unknown scorer", withTiny("--replicas", "2", "--router-weights", "cache=1"), []string{"--router-weights", `unknown scorer "cache"`, "allowed: kv-usage"}},
		{"weight not a number", withTiny("--replicas", "2", "--router-weights", "queue=x"), []string{"--router-weights", `"queue=x"`}},
		{"negative weight", withTiny("--replicas", "2", "--router-weights", "queue=-2"), []string{"--router-weights: queue: must be in [0, 1e6], got -2"}},
		{"weights without weighted", withTiny("--replicas", "2", "--router", "queue", "--router-weights", "queue=1"), []string{"--router-weights", "only for the weighted router"}},
		{"negative interval", withTiny("--replicas", "2", "--router-metrics-interval-ms", "-1"), []string{"--router-metrics-interval-ms", "got -1"}},
		{"replicas of a disaggregated scenario", []string{"simulate", "--quiet", "--scenario", "../../scenarios/examples/llama-3.1-8b-h200-1p1d.yaml", "--replicas", "2"},
			[]string{"--replicas", "not for a disaggregated scenario"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireBadInput(t, c.args, c.want...) })
	}
}

// A trace with a priority column under --scheduling-policy priority: the
// summary names the policy and prints one row per priority, and the
// result JSON carries scheduling_policy and the classes with bench
// serve's keys. Counts are exact: 3 requests of priority 0, 2 of 5.
func TestPriorityTracePerClassOutput(t *testing.T) {
	dir := t.TempDir()
	trace := writeFile(t, dir, "prio.csv", "arrival_s,prompt_tokens,output_tokens,priority\n0,64,4,5\n0,64,4,0\n0,64,4,0\n0.01,64,4,5\n0.02,64,4,0\n")
	res := filepath.Join(dir, "r.json")
	out, _, err := run(t, "simulate", "--quiet", "--dataset-path", trace, "--scheduling-policy", "priority", "--save-result", "--result-filename", res)
	require.NoError(t, err)
	assert.Regexp(t, `Scheduling policy:\s+priority`, out)
	assert.Regexp(t, `priority 0\s+0\s+3\s+0 `, out)
	assert.Regexp(t, `priority 5\s+5\s+2\s+0 `, out)
	var j struct {
		Frontier struct {
			Policy  string           `json:"scheduling_policy"`
			Classes []map[string]any `json:"classes"`
		} `json:"frontier"`
	}
	data, err := os.ReadFile(res)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &j))
	assert.Equal(t, "priority", j.Frontier.Policy)
	require.Len(t, j.Frontier.Classes, 2)
	assert.Equal(t, "priority 0", j.Frontier.Classes[0]["name"])
	assert.EqualValues(t, 3, j.Frontier.Classes[0]["completed"])
	assert.EqualValues(t, 2, j.Frontier.Classes[1]["completed"])
	assert.EqualValues(t, 8, j.Frontier.Classes[1]["total_output_tokens"])
	assert.Contains(t, j.Frontier.Classes[0], "p99_ttft_ms")
	assert.NotContains(t, j.Frontier.Classes[0], "mean_itl_ms")
}

// --replicas 1 is the single deployment, byte for byte: summary, result
// JSON (but its date), requests and steps CSV, whatever the router.
func TestOneReplicaIsTheSingleDeployment(t *testing.T) {
	dir := t.TempDir()
	outputs := func(tag string, extra ...string) []string {
		res, reqs, steps := filepath.Join(dir, tag+".json"), filepath.Join(dir, tag+"-r.csv"), filepath.Join(dir, tag+"-s.csv")
		out, errOut, err := run(t, withTiny(append([]string{"--num-prompts", "200", "--request-rate", "50", "--save-result", "--result-filename", res,
			"--requests-csv", reqs, "--steps-csv", steps}, extra...)...)...)
		require.NoError(t, err)
		var files []string
		for _, p := range []string{res, reqs, steps} {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			files = append(files, regexp.MustCompile(`"date":"[^"]*"`).ReplaceAllString(string(b), ""))
		}
		return append(files, out, errOut)
	}
	single := outputs("single")
	for _, r := range []string{"prefix-cache", "kv-usage", "weighted"} {
		assert.Equal(t, single, outputs(r, "--replicas", "1", "--router", r), "--replicas 1 --router %s", r)
	}
}
