package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// shellWords splits a one-line shell command (quotes dropped, variables
// substituted from env).
func shellWords(t *testing.T, cmd string, env map[string]string) []string {
	t.Helper()
	cmd = regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(cmd, func(m string) string {
		v, ok := env[m[2:len(m)-1]]
		require.True(t, ok, "unset variable %s", m)
		return v
	})
	var out []string
	for _, w := range strings.Fields(cmd) {
		out = append(out, strings.Trim(w, `"'`))
	}
	return out
}

// runShards runs the shard command of a job file for every index (with
// fewer requests per point, the same points) and merges the shards: the
// merged table equals the unsharded sweep's.
func runShards(t *testing.T, words []string, n int, env func(i int) map[string]string, raw string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	var base []string
	for i := 0; i < n; i++ {
		args := shellWords(t, raw, env(i))
		require.Equal(t, words, args[:2], "the job runs frontier sweep")
		for k, a := range args {
			if strings.HasPrefix(a, "/results/") || strings.HasPrefix(a, "results/") {
				args[k] = filepath.Join(dir, filepath.Base(a))
				files = append(files, args[k])
			}
		}
		_, stderr, err := run(t, append(args[1:], "--num-prompts", "4", "--random-input-len", "32", "--random-output-len", "4")...)
		require.NoError(t, err, stderr)
		base = args[1:]
	}
	merged, stderr, err := run(t, append([]string{"sweep", "merge"}, files...)...)
	require.NoError(t, err, stderr)
	var whole []string
	for i := 0; i < len(base); i++ {
		if base[i] == "--shard" || base[i] == "--out-jsonl" {
			i++
			continue
		}
		if base[i] != "--skip-done" {
			whole = append(whole, base[i])
		}
	}
	want, stderr, err := run(t, append(whole, "--num-prompts", "4", "--random-input-len", "32", "--random-output-len", "4")...)
	require.NoError(t, err, stderr)
	assert.Equal(t, want, merged)
}

func TestKubernetesIndexedJobRuns(t *testing.T) {
	data, err := os.ReadFile("../../docs/sweep-indexed-job.yaml")
	require.NoError(t, err)
	var job struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &job))
	assert.Equal(t, "Indexed", job.Spec.CompletionMode)
	raw := job.Spec.Template.Spec.Containers[0].Args[0]
	assert.Contains(t, raw, `--shard "${JOB_COMPLETION_INDEX}/8"`)
	assert.Equal(t, 8, job.Spec.Completions, "completions = the N of --shard")
	runShards(t, []string{"frontier", "sweep"}, job.Spec.Completions, func(i int) map[string]string {
		return map[string]string{"JOB_COMPLETION_INDEX": string(rune('0' + i))}
	}, raw)
}

func TestSlurmArrayRuns(t *testing.T) {
	data, err := os.ReadFile("../../docs/sweep-array.slurm")
	require.NoError(t, err)
	script := string(data)
	require.Contains(t, script, "#SBATCH --array=0-7")
	i := strings.Index(script, "frontier sweep \\")
	require.GreaterOrEqual(t, i, 0)
	raw := strings.ReplaceAll(script[i:], "\\\n", " ")
	raw = strings.SplitN(raw, "\n", 2)[0]
	runShards(t, []string{"frontier", "sweep"}, 8, func(i int) map[string]string {
		return map[string]string{"SLURM_ARRAY_TASK_ID": string(rune('0' + i)), "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_CPUS_PER_TASK": "2"}
	}, raw)
}
