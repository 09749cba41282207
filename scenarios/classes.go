package scenarios

import (
	"fmt"
	"math"
)

// RequestClass is one class of a workload's request mix (added key
// workload.classes): each prompt of the dataset draws its class with
// probability share (seeded by workload.seed), and every request sending
// that prompt carries the class's priority, the OpenAI API's "priority"
// field that vLLM's priority scheduling reads (lower is served first).
// For the random dataset a class may also set its own lengths.
type RequestClass struct {
	Name     string  `yaml:"name"`
	Priority int     `yaml:"priority"`
	Share    float64 `yaml:"share"` // fraction of the prompts, in (0, 1]; the shares sum to 1
	// InputLen and OutputLen are the class's prompt and output lengths,
	// tokens (random dataset only; 0 = workload.random's), drawn with
	// workload.random.range_ratio as bench serve draws them.
	InputLen  int `yaml:"input_len"`
	OutputLen int `yaml:"output_len"`
}

// MaxClasses bounds workload.classes.
const MaxClasses = 64

// MaxPriority bounds |priority| (vLLM takes any integer; this keeps
// sums and comparisons far from overflow).
const MaxPriority = 1 << 40

// validateClasses checks workload.classes.
func (w *Workload) validateClasses() error {
	if len(w.Classes) == 0 {
		return nil
	}
	if w.Dataset == "trace" {
		return fmt.Errorf("workload.classes: not for the trace dataset; give the trace a priority column instead")
	}
	if len(w.Classes) > MaxClasses {
		return fmt.Errorf("workload.classes: at most %d classes, got %d", MaxClasses, len(w.Classes))
	}
	seen := map[string]bool{}
	total := 0.0
	for i, c := range w.Classes {
		k := func(key string) string { return fmt.Sprintf("workload.classes[%d].%s", i, key) }
		if c.Name == "" {
			return fmt.Errorf("%s: required (names the class in the per-class metrics)", k("name"))
		}
		if seen[c.Name] {
			return fmt.Errorf("%s: %q names two classes", k("name"), c.Name)
		}
		seen[c.Name] = true
		if c.Priority > MaxPriority || c.Priority < -MaxPriority {
			return fmt.Errorf("%s: must be an integer in [-%d, %d], got %d", k("priority"), MaxPriority, MaxPriority, c.Priority)
		}
		if !(c.Share > 0 && c.Share <= 1) {
			return fmt.Errorf("%s: must be in (0, 1], got %g", k("share"), c.Share)
		}
		total += c.Share
		for _, l := range []struct {
			key string
			v   int
		}{{"input_len", c.InputLen}, {"output_len", c.OutputLen}} {
			if l.v == 0 {
				continue
			}
			if w.Dataset != "random" {
				return fmt.Errorf("%s: lengths per class are for the random dataset; the %s dataset sets its own", k(l.key), w.Dataset)
			}
			if l.v < 1 || l.v > MaxTokens {
				return fmt.Errorf("%s: must be in [1, %d] or omitted (= workload.random's), got %d", k(l.key), MaxTokens, l.v)
			}
		}
	}
	if math.Abs(total-1) > 1e-6 {
		return fmt.Errorf("workload.classes: the shares must sum to 1, got %g", total)
	}
	return nil
}
