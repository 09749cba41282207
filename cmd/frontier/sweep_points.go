package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/plan"
)

// sweepSettingFlags are simulate's flags that do not change the simulated
// scenario: outputs, and the summary settings a whole sweep shares
// (--goodput, --metric-percentiles, --percentile-metrics, --label,
// --backend). They cannot be varied; every other simulate flag can.
var sweepSettingFlags = map[string]bool{
	"save-result": true, "append-result": true, "result-dir": true, "result-filename": true, "label": true,
	"backend": true, "requests-csv": true, "steps-csv": true, "save-detailed": true, "percentile-metrics": true,
	"metric-percentiles": true, "goodput": true, "quiet": true, "ignore-eos": true, "help": true,
}

// sweepRefusedFlags are simulate's per-run output flags, refused on sweep
// with what to use instead, and hidden from its --help.
var sweepRefusedFlags = map[string]string{
	"save-result":        "--result-dir DIR writes one bench serve JSON per point",
	"append-result":      "--out-jsonl FILE writes one line per point",
	"result-filename":    "--result-dir DIR writes one bench serve JSON per point",
	"requests-csv":       "run frontier simulate on the point for per-request rows",
	"steps-csv":          "run frontier simulate on the point for per-step rows",
	"percentile-metrics": "the table shows TTFT, TPOT, ITL and E2EL; --metric-percentiles picks the percentiles",
	"timeline":           reportOnePoint,
	"timeline-interval":  reportOnePoint,
	"metrics":            reportOnePoint,
	"trace":              reportOnePoint,
	"trace-max-requests": reportOnePoint,
	"plot-format":        "--plot FILE.png or FILE.svg: the name's extension picks the format",
	"save-detailed":      "run frontier simulate on the point with --requests-csv FILE for per-request detail", // simulate refuses it too
}

// reportOnePoint is the hint for the report flags (sim/report) a sweep or
// capacity search does not write: they describe one run.
const reportOnePoint = "run frontier simulate on the point for its timeline, metrics and trace"

// capacityNoResult is the hint for the result-file flags on capacity: it
// reports its probes in its own table and writes no bench serve JSON.
const capacityNoResult = "capacity writes no bench serve result file; frontier simulate --request-rate RATE --save-result writes one at a rate"

// capacityRefusedFlags are sweep's refusals with capacity's own hints,
// plus the flags that only name a result file (--result-dir, --label,
// --backend), which capacity does not write.
var capacityRefusedFlags = func() map[string]string {
	m := map[string]string{}
	for k, v := range sweepRefusedFlags {
		m[k] = v
	}
	for _, k := range []string{"save-result", "append-result", "result-filename", "result-dir", "label", "backend"} {
		m[k] = capacityNoResult
	}
	return m
}()

// refusedFlags are the simulate flags command name (sweep or capacity)
// refuses, with what to use instead.
func refusedFlags(name string) map[string]string {
	if name == "capacity" {
		return capacityRefusedFlags
	}
	return sweepRefusedFlags
}

// hideRefused hides from cmd's --help the simulate flags it refuses (and
// extra ones it refuses elsewhere): they still parse, so that using one
// gets its refusal with the hint, not "unknown flag".
func hideRefused(cmd *cobra.Command, extra ...string) {
	for name := range refusedFlags(cmd.Name()) {
		if f := cmd.Flags().Lookup(name); f != nil {
			f.Hidden = true
		}
	}
	for _, name := range extra {
		cmd.Flags().Lookup(name).Hidden = true
	}
}

// layoutFlags are the deployment flags that lay a deployment out on its
// GPUs: a disaggregated deployment's pools set their own.
var layoutFlags = []string{"tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size", "enable-expert-parallel", "no-enable-expert-parallel"}

// pointBuilder builds a point's scenario as simulate would: the base
// flags, then the point's --KEY=VALUE, parsed by a fresh simulate flag set
// and its buildScenario.
type pointBuilder struct {
	base    []string // canonical base flags ("--name=value"), sorted by name
	sim     *pflag.FlagSet
	refused map[string]string // the command's refused simulate flags
	// sweepFile is the --sweep file, named in errors about the keys of
	// its deployments ("" for capacity's generated ones).
	sweepFile string
}

// addSimulateFlags registers simulate's flags on cmd (for the base
// scenario), except those cmd defines itself, and returns simulate's flag
// set (for newPointBuilder) and the values they parse into (the sweep
// reads its shared settings, --goodput and the like, from there).
func addSimulateFlags(cmd *cobra.Command) (*pflag.FlagSet, *simFlags) {
	simCmd, f := simulateCommand()
	simCmd.Flags().VisitAll(func(f *pflag.Flag) {
		if cmd.Flags().Lookup(f.Name) == nil {
			if f.Shorthand != "" && cmd.Flags().ShorthandLookup(f.Shorthand) != nil {
				f.Shorthand = ""
			}
			cmd.Flags().AddFlag(f)
		}
	})
	return simCmd.Flags(), f
}

// newPointBuilder reads the base flags the user set on the sweep (or
// capacity) command: simulate's flags, minus the sweep's own settings,
// which it refuses when they are per-run outputs.
func newPointBuilder(cmd *cobra.Command, simFlags *pflag.FlagSet) (*pointBuilder, error) {
	b := &pointBuilder{sim: simFlags, refused: refusedFlags(cmd.Name())}
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if simFlags.Lookup(f.Name) != f || err != nil {
			return // a sweep flag, or a name the sweep redefines
		}
		if why, ok := b.refused[f.Name]; ok {
			err = fmt.Errorf("--%s: not a %s flag (%s)", f.Name, cmd.Name(), why)
			return
		}
		if sweepSettingFlags[f.Name] {
			return
		}
		b.base = append(b.base, flagArgs(f)...)
	})
	return b, err
}

// flagArgs writes a set flag back as arguments that parse to the same
// value: one per element for slice flags (they append).
func flagArgs(f *pflag.Flag) []string {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		var out []string
		for _, v := range sv.GetSlice() {
			out = append(out, "--"+f.Name+"="+v)
		}
		return out
	}
	return []string{"--" + f.Name + "=" + f.Value.String()}
}

// keys are the flags a point may set: simulate's, minus the settings and
// the refused flags.
func (b *pointBuilder) keys() []string {
	var out []string
	b.sim.VisitAll(func(f *pflag.Flag) {
		// simulate's --plot DIR draws one run; sweep and capacity have their own --plot.
		if _, refused := b.refused[f.Name]; !sweepSettingFlags[f.Name] && !refused && f.Name != "plot" {
			out = append(out, f.Name)
		}
	})
	sort.Strings(out)
	return out
}

// build returns point p's validated scenario. Errors are bad input
// (exit 2): they name the point and the flag or key.
func (b *pointBuilder) build(p plan.Point) (*scenarios.Scenario, error) {
	sc, err := b.scenario(p.Args(), p.Deployment, true)
	if err != nil {
		return nil, fmt.Errorf("point %d (%s): %w", p.Index, p.Label(), err)
	}
	if len(p.Set) > 0 || p.Deployment != nil {
		sc.Name += " [" + p.Label() + "]"
	}
	return sc, nil
}

// scenario parses the base flags and then args through a fresh simulate
// flag set (a base flag the args set again is dropped: slice flags would
// append), applies entry, and validates.
func (b *pointBuilder) scenario(args []string, entry *plan.Entry, validate bool) (*scenarios.Scenario, error) {
	cmd, f := simulateCommand()
	set := map[string]bool{}
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		set[name] = true
	}
	var all []string
	for _, a := range b.base {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !set[name] {
			all = append(all, a)
		}
	}
	all = append(all, args...)
	if err := cmd.Flags().Parse(all); err != nil {
		return nil, err
	}
	sc, err := buildScenario(cmd, f)
	if err != nil {
		return nil, nameTheFlag(err, cmd.Flags().Changed, f.scenario)
	}
	if entry != nil {
		entry.Apply(sc)
		if set["hardware"] {
			// The point's own --hardware (an axis) comes after its
			// deployment, as every other point setting.
			sc.Hardware = f.hardware
			if err := poolHardware(sc, "the deployment "+entry.Name); err != nil {
				return nil, err
			}
		}
		changed := cmd.Flags().Changed
		if sc.Deployment != nil {
			applyDeployment(sc.Deployment, f, changed)
		} else {
			// Engine flags apply to both pools; the parallel layout is
			// the pools' own.
			if anySet(changed, layoutFlags...) {
				return nil, fmt.Errorf("%s: not for the disaggregated deployment %s, whose pools set their own layout",
					strings.Join(setFlags(changed, layoutFlags), ", "), entry.Name)
			}
			g := sc.Disaggregation
			applyDeployment(&g.Prefill.Deployment, f, changed)
			applyDeployment(&g.Decode.Deployment, f, changed)
		}
	}
	if !validate {
		return sc, nil
	}
	if err := sc.Validate(); err != nil {
		return nil, b.nameSource(err, cmd.Flags().Changed, f.scenario, entry)
	}
	// A name outside frontier's lists is a typo (exit 2), not a point
	// vLLM refuses (a row).
	if err := sim.CheckNames(sc); err != nil {
		return nil, b.nameSource(err, cmd.Flags().Changed, f.scenario, entry)
	}
	return sc, nil
}

// nameSource makes a point's error name what the user wrote, as simulate
// does (nameTheFlag): the flag (a base flag or a --vary KEY) when one set
// the value; else, for a key of a --sweep file's deployment, that file
// and the deployment; else the --scenario file's key.
func (b *pointBuilder) nameSource(err error, changed func(string) bool, scenarioFile string, entry *plan.Entry) error {
	if entry == nil || b.sweepFile == "" {
		return nameTheFlag(err, changed, scenarioFile)
	}
	if named := nameFlag(err, changed, "", scenarioFile == ""); errors.As(named, new(flagError)) {
		return named
	}
	msg := err.Error()
	for _, top := range []string{"deployment", "disaggregation", "hardware"} {
		rest, ok := strings.CutPrefix(msg, top)
		if ok && rest != "" && strings.ContainsRune(".:[ ", rune(rest[0])) && (top != "hardware" || entry.Hardware != "") {
			return fmt.Errorf("%s: deployments %s: %w", b.sweepFile, entry.Name, err)
		}
	}
	return nameTheFlag(err, changed, scenarioFile)
}

// checkAxesMatter refuses an axis whose values all build the same
// scenario as each other: a flag that only shapes outputs, which a sweep
// would silently not vary.
func (b *pointBuilder) checkAxesMatter(axes []plan.Axis) error {
	for _, a := range axes {
		distinct := map[string]bool{}
		for _, v := range a.Values {
			distinct[v] = true
		}
		if len(distinct) < 2 {
			continue
		}
		seen := map[string]bool{}
		for v := range distinct {
			sc, err := b.scenario([]string{"--" + a.Key + "=" + v}, nil, false)
			if err != nil {
				return nil // the point pass reports it with the point's name
			}
			sc.Name = ""
			data, err := yaml.Marshal(sc)
			if err != nil {
				return err
			}
			seen[string(data)] = true
		}
		if len(seen) == 1 {
			return fmt.Errorf("--vary %s: its values all simulate the same scenario (a flag that only shapes outputs cannot be swept)", a.Key)
		}
	}
	return nil
}

// baseScenario is the sweep's base scenario (no point applied, not
// validated: a point may complete it), for the fingerprint.
func (b *pointBuilder) baseScenario() (*scenarios.Scenario, error) {
	return b.scenario(nil, nil, false)
}

// applyHardwareFlag sets --hardware when given, refusing it over a pool
// that names its own (poolHardware).
func applyHardwareFlag(sc *scenarios.Scenario, f *simFlags, set func(string) bool) error {
	if !set("hardware") {
		return nil
	}
	sc.Hardware = f.hardware
	return poolHardware(sc, f.scenario)
}

// poolHardware refuses --hardware over a disaggregated deployment whose
// pool names its own GPU (disaggregation.*.hardware wins over the
// scenario's hardware, so the flag would silently not apply); who names
// the deployment's source.
func poolHardware(sc *scenarios.Scenario, who string) error {
	if g := sc.Disaggregation; g != nil {
		for _, p := range []struct {
			name string
			pool *scenarios.Pool
		}{{"prefill", &g.Prefill}, {"decode", &g.Decode}} {
			if p.pool.Hardware != "" {
				return fmt.Errorf("--hardware: %s sets its %s pool's hardware (%s), which the flag would not change", who, p.name, p.pool.Hardware)
			}
		}
	}
	return nil
}
