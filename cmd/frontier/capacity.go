package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/plan"
)

// capacityFlags are `frontier capacity`'s own flags; the deployment and
// workload take every simulate flag.
type capacityFlags struct {
	slo        []string
	precision  float64
	seeds      int
	closedLoop bool
	usd        float64
	jobs       int
	vary       []string
	zip        bool
	gpus       int
	plot       string
	simSet     *pflag.FlagSet
	sim        *simFlags
}

// defaultProbeRequests is a probe's length when --num-prompts is not
// given: long enough that a queue growing at 1–2 % over capacity shows
// in its last quarter at the usual rates; a probe still growing is
// lengthened (twice, ×2 each) before it fails.
const defaultProbeRequests = 2000

func newCapacityCmd() *cobra.Command {
	cmd, _ := capacityCommand()
	return cmd
}

// capacityCommand builds `frontier capacity` and returns its flags too.
func capacityCommand() (*cobra.Command, *capacityFlags) {
	f := &capacityFlags{}
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Find the highest request rate (or concurrency) a deployment serves within SLOs; with --gpus, the best deployment on N GPUs",
		Long: `Search the highest request rate (Poisson, or --burstiness) at which the
deployment meets every --slo, or with --closed-loop the highest
--max-concurrency (requests sent as soon as others finish).

SLOs: METRIC:STAT<=VALUE[ms|s], METRIC ttft, tpot, itl or e2el, STAT mean
or pNN[.N], over all requests of a probe (a failed request violates every
SLO; bench serve's own percentiles drop failures). The search brackets
the capacity, then bisects to --precision. A probe counts only at steady
state: one whose queue or TTFT is still growing at its last sends, or
whose server is still filling (its first quarter of requests outlasting a
quarter of the sends; sim.DetectGrowth), is rerun with twice the
requests, and fails if it still is after two doublings. Every seed of
--seeds must hold. The workload is the random dataset (--num-prompts ≥ 40
requests per probe).

With --gpus N: every deployment vLLM accepts on N GPUs of one node (TP ×
PP × DP, EP for MoE models, prefill/decode disaggregation with per-pool
TP), crossed with --vary, ranked by capacity per GPU, with the Pareto
front of output tok/s per GPU against output tok/s per user.`,
		Args: listArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCapacity(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.slo, "slo", nil, "SLO METRIC:STAT<=VALUE[ms|s], e.g. ttft:p99<=500ms (repeatable or comma-separated)")
	fl.Float64Var(&f.precision, "precision", 0.02, "stop when the bracket's width is within this fraction of the capacity")
	fl.IntVar(&f.seeds, "seeds", 1, "workload seeds (--seed, --seed+1, …) that must all hold")
	fl.BoolVar(&f.closedLoop, "closed-loop", false, "search the highest --max-concurrency (request rate inf) instead of a request rate")
	fl.Float64Var(&f.usd, "gpu-hour-usd", 0, "price of one GPU-hour, to report the cost per 10^6 output tokens")
	fl.IntVar(&f.jobs, "jobs", 0, "simulations in parallel (default: all cores)")
	fl.StringArrayVar(&f.vary, "vary", nil, "also search each value of a simulate flag: KEY=V1,V2,… or KEY=START:STOP:STEP (repeatable)")
	fl.BoolVar(&f.zip, "zip", false, "pair the --vary axes' values instead of crossing them")
	fl.IntVar(&f.gpus, "gpus", 0, "enumerate every deployment on this many GPUs of one node and rank them")
	fl.StringVar(&f.plot, "plot", "", "with --gpus: draw the Pareto front to FILE.png or FILE.svg")
	f.simSet, f.sim = addSimulateFlags(cmd)
	hideRefused(cmd, "goodput") // refused in prepareCapacity
	return cmd, f
}

// capacityRun is a validated capacity request.
type capacityRun struct {
	b          *pointBuilder
	slos       []plan.SLO
	seeds      []int64
	requests   int
	candidates []plan.Point
	labels     []string  // the candidates' names in tables
	refused    []refusal // --gpus deployments vLLM refuses
}

func prepareCapacity(cmd *cobra.Command, f *capacityFlags) (*capacityRun, error) {
	b, err := newPointBuilder(cmd, f.simSet)
	if err != nil {
		return nil, err
	}
	set := cmd.Flags().Changed
	r := &capacityRun{b: b, requests: defaultProbeRequests}
	if r.slos, err = plan.ParseSLOs(f.slo); err != nil {
		return nil, err
	}
	switch {
	case len(r.slos) == 0:
		return nil, fmt.Errorf("--slo: give at least one, %s", plan.SLOGrammar)
	case !(f.precision > 0 && f.precision < 1):
		return nil, fmt.Errorf("--precision: must be in (0, 1), e.g. 0.02 for 2 %%, got %g", f.precision)
	case f.seeds < 1 || f.seeds > 100:
		return nil, fmt.Errorf("--seeds: must be in [1, 100], got %d", f.seeds)
	case f.usd < 0 || math.IsInf(f.usd, 0) || math.IsNaN(f.usd):
		return nil, fmt.Errorf("--gpu-hour-usd: must be ≥ 0, got %g", f.usd)
	case f.jobs < 0:
		return nil, fmt.Errorf("--jobs: must be ≥ 1 (0 = all cores), got %d", f.jobs)
	case set("request-rate"):
		return nil, errors.New("--request-rate: the search sets it (give the workload's other flags; --closed-loop searches --max-concurrency)")
	case f.closedLoop && set("max-concurrency"):
		return nil, errors.New("--max-concurrency: --closed-loop searches it")
	case set("goodput"):
		return nil, errors.New("--goodput: capacity is judged on --slo (distributions over all requests); bench serve's per-request --goodput is for simulate and sweep")
	case f.plot != "" && f.gpus == 0:
		return nil, errors.New("--plot: draws the Pareto front of --gpus N")
	}
	if set("num-prompts") {
		r.requests = f.sim.numPrompts
		if r.requests < sim.GrowthMinRequests {
			return nil, fmt.Errorf("--num-prompts: a capacity probe needs at least %d requests to show whether its queue keeps growing (sim.GrowthMinRequests), got %d",
				sim.GrowthMinRequests, r.requests)
		}
	}
	for k := 0; k < f.seeds; k++ {
		r.seeds = append(r.seeds, f.sim.seed+int64(k))
	}
	var axes []plan.Axis
	for _, v := range f.vary {
		a, err := plan.ParseVary(v)
		if err != nil {
			return nil, err
		}
		if a.Key == "request-rate" || a.Key == "max-concurrency" || a.Key == "seed" || a.Key == "num-prompts" {
			return nil, fmt.Errorf("--vary %s: the capacity search sets it", a.Key)
		}
		axes = append(axes, a)
	}
	if err := plan.CheckKeys(axes, b.keys()); err != nil {
		return nil, err
	}
	points, err := plan.Expand(axes, f.zip, nil)
	if err != nil {
		return nil, err
	}
	r.candidates = points
	for _, p := range points {
		r.labels = append(r.labels, p.Label())
	}
	var shapes []plan.Topology
	if f.gpus != 0 {
		if r.candidates, r.labels, shapes, err = topologies(b, f.gpus, points, set); err != nil {
			return nil, err
		}
	}
	for _, p := range r.candidates {
		label := func(err error) error {
			if p.Label() == "base" {
				return err // no axis: the error is the run's own
			}
			return fmt.Errorf("%s: %w", p.Label(), err)
		}
		sc, err := b.scenario(p.Args(), p.Deployment, false)
		if err != nil {
			return nil, label(err)
		}
		if err := probedDataset(sc, set, f.sim.scenario); err != nil {
			return nil, err
		}
		if sc, err = b.scenario(append(p.Args(), r.probeArgs(1, r.seeds[0], r.requests, f.closedLoop)...), p.Deployment, true); err != nil {
			return nil, label(err)
		}
		if len(sc.Workload.Arrivals.Stages) > 0 {
			return nil, errors.New("--scenario: capacity sets the request rate; a scenario with workload.arrivals.stages has none")
		}
	}
	if f.gpus != 0 {
		if err := r.dropRefused(f.closedLoop, f.gpus, shapes); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// probedDataset refuses a workload other than the random dataset, naming
// where it came from (--dataset-name, or the --scenario file's key). Why
// random only: the search lengthens a probe by doubling --num-prompts and
// reseeds it (--seeds), which draws fresh prompts of the same lengths only
// in the random dataset; a lengths file resends its prompts once
// oversampled (prefix-cache hits growing with the probe), a trace has its
// own send times, and sessions and shared prefixes are not counted in
// --num-prompts.
func probedDataset(sc *scenarios.Scenario, set func(string) bool, file string) error {
	ds := sc.Workload.Dataset
	if ds == "random" {
		return nil
	}
	where := "--dataset-name " + ds
	if !set("dataset-name") && file != "" {
		where = file + ": workload.dataset: " + ds
	}
	return fmt.Errorf("%s: capacity probes the random dataset only: it lengthens a probe by doubling --num-prompts and reseeds it, "+
		"which keeps the workload the same only for random prompts (a lengths file resends its prompts once oversampled, a trace has its own send times, "+
		"sessions and shared prefixes are not counted in --num-prompts); give the lengths as --random-input-len, --random-output-len, --random-range-ratio, "+
		"or run this dataset at chosen rates with frontier sweep --vary request-rate=R1,R2,…", where)
}

// probeArgs are the flags a probe sets: the load, the seed, the length.
func (r *capacityRun) probeArgs(x float64, seed int64, n int, closed bool) []string {
	load := "--request-rate=" + strconv.FormatFloat(x, 'g', -1, 64)
	if math.IsInf(x, 1) {
		load = "--request-rate=inf"
	}
	args := []string{load, "--seed=" + strconv.FormatInt(seed, 10), "--num-prompts=" + strconv.Itoa(n)}
	if closed {
		args = []string{"--request-rate=inf", "--max-concurrency=" + strconv.Itoa(int(x)), args[1], args[2]}
	}
	return args
}

// doubleAPIServers sets sc's co-located deployment to twice its API
// server processes (api_server_count, default the DP size, as vLLM's),
// for the binding limit's counterfactual probe (plan.Search.MoreAPI); an
// error when sc has no co-located deployment or is at the most allowed.
func doubleAPIServers(sc *scenarios.Scenario) error {
	d := sc.Deployment
	if d == nil {
		return errors.New("no co-located deployment")
	}
	n := d.DataParallelSize
	if d.APIServerCount != nil {
		n = *d.APIServerCount
	}
	if 2*n > scenarios.MaxEngines {
		return fmt.Errorf("api_server_count %d is at the most allowed", n)
	}
	n *= 2
	d.APIServerCount = &n
	return nil
}

// search runs candidate p's capacity search (and, when curve, its
// points below capacity for the Pareto front).
func (r *capacityRun) search(p plan.Point, f *capacityFlags, jobs int, label string, curve bool) ranked {
	s := &plan.Search{SLOs: r.slos, Precision: f.precision, Seeds: r.seeds, Requests: r.requests, Lengthen: 2,
		ClosedLoop: f.closedLoop, Jobs: jobs}
	s.Probe = func(x float64, seed int64, n int) *plan.Outcome {
		sc, err := r.b.scenario(append(p.Args(), r.probeArgs(x, seed, n, f.closedLoop)...), p.Deployment, true)
		if err != nil {
			return &plan.Outcome{Refused: err.Error()} // validated before any run: a bound only (n too large)
		}
		return plan.Simulate(sc, plan.RunOptions{Signals: true})
	}
	s.MoreAPI = func(x float64, seed int64, n int) *plan.Outcome {
		sc, err := r.b.scenario(append(p.Args(), r.probeArgs(x, seed, n, f.closedLoop)...), p.Deployment, true)
		if err == nil {
			err = doubleAPIServers(sc)
		}
		if err != nil {
			return &plan.Outcome{Refused: err.Error()} // no such probe: the limit falls back to the signals
		}
		return plan.Simulate(sc, plan.RunOptions{Signals: true})
	}
	k := ranked{label: label, point: p, cap: s.Run()}
	if curve {
		k.curve = s.Curve(label, k.cap)
	}
	return k
}

func runCapacity(cmd *cobra.Command, f *capacityFlags) error {
	r, err := prepareCapacity(cmd, f)
	if err != nil {
		return bad(err)
	}
	if f.plot != "" {
		if err := checkPlotPath("--plot", f.plot); err != nil {
			return bad(err)
		}
	}
	all := make([]ranked, len(r.candidates))
	inner := f.jobs
	if len(r.candidates) > 1 {
		inner = 1
	}
	progress := progressBar(cmd.ErrOrStderr(), "deployments", f.sim.quiet || len(r.candidates) == 1)
	err = plan.Ordered(len(r.candidates), f.jobs, func(k int) ranked {
		return r.search(r.candidates[k], f, inner, r.labels[k], f.gpus > 0 || f.plot != "")
	}, func(k int, v ranked) error { all[k] = v; return nil }, progress)
	if err != nil {
		return err
	}
	if len(r.candidates) == 1 && f.gpus == 0 {
		base, err := r.b.scenario(nil, nil, false)
		if err != nil {
			return bad(err)
		}
		return printCapacity(cmd.OutOrStdout(), base, r, f, r.candidates[0], all[0].cap)
	}
	return printRanking(cmd, r, f, all)
}
