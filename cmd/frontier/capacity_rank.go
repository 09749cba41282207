package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim"
	"frontier/sim/plan"
)

// refusal is a deployment vLLM refuses, with why.
type refusal struct {
	label, reason string
	engineGPUs    int
}

// topologies crosses every deployment of --gpus N (plan.Enumerate) with
// the --vary points: co-located ones as layout flags, disaggregated ones
// as whole deployments built from the base deployment (its engine flags
// in both pools). It returns the points and their labels.
func topologies(b *pointBuilder, n int, vary []plan.Point, set func(string) bool) ([]plan.Point, []string, []plan.Topology, error) {
	if layout := append(append([]string{}, layoutFlags...), "replicas"); anySet(set, layout...) {
		return nil, nil, nil, fmt.Errorf("%s: --gpus enumerates the layout (TP, PP, DP, EP, disaggregation) of one vllm serve on the GPUs", strings.Join(setFlags(set, layout), ", "))
	}
	base, err := b.scenario(nil, nil, false)
	if err != nil {
		return nil, nil, nil, err
	}
	if base.Deployment == nil {
		return nil, nil, nil, errors.New("--gpus: the base scenario must be a co-located deployment (the enumeration lays its model out)")
	}
	hw, err := profiles.LookupHardware(base.Hardware)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--hardware: %w", err)
	}
	m, err := profiles.LoadModel(base.Deployment.Model)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--model: %w", err)
	}
	topos, err := plan.Enumerate(m, n, hw)
	if err != nil {
		return nil, nil, nil, err
	}
	var points []plan.Point
	var labels []string
	var shapes []plan.Topology
	for _, v := range vary {
		for _, t := range topos {
			p := plan.Point{Index: len(points)}
			label := t.Label()
			if len(v.Set) > 0 {
				label += " " + v.Label()
			}
			if t.Prefill == nil {
				p.Set = append([]plan.Assignment{
					{Key: "tensor-parallel-size", Value: fmt.Sprint(t.TP)},
					{Key: "pipeline-parallel-size", Value: fmt.Sprint(t.PP)},
					{Key: "data-parallel-size", Value: fmt.Sprint(t.DP)},
					{Key: "enable-expert-parallel", Value: fmt.Sprint(t.EP)}}, v.Set...)
			} else {
				pool := func(pl *plan.Pool) scenarios.Pool {
					d := *base.Deployment
					d.TensorParallelSize, d.PipelineParallelSize, d.DataParallelSize, d.EnableExpertParallel = pl.TP, 1, 1, pl.EP
					return scenarios.Pool{Instances: pl.Instances, Deployment: d}
				}
				p.Deployment = &plan.Entry{Name: strings.ReplaceAll(t.Label(), " ", ""),
					Disaggregation: &scenarios.Disaggregation{Prefill: pool(t.Prefill), Decode: pool(t.Decode)}}
				p.Set = v.Set
			}
			points = append(points, p)
			labels = append(labels, label)
			shapes = append(shapes, t)
		}
	}
	return points, labels, shapes, nil
}

// dropRefused keeps the candidates vLLM accepts (sim.Resolve) and
// records the others; when none is left it is bad input, saying why for
// the closest ones (the largest engines).
func (r *capacityRun) dropRefused(closed bool, n int, shapes []plan.Topology) error {
	var keep []plan.Point
	var labels []string
	for i, p := range r.candidates {
		sc, err := r.b.scenario(append(p.Args(), r.probeArgs(1, r.seeds[0], r.requests, closed)...), p.Deployment, true)
		if err == nil {
			_, err = sim.Resolve(sc)
		}
		if err != nil {
			r.refused = append(r.refused, refusal{r.labels[i], err.Error(), shapes[i].EngineGPUs()})
			continue
		}
		p.Index = len(keep)
		keep = append(keep, p)
		labels = append(labels, r.labels[i])
	}
	r.candidates, r.labels = keep, labels
	if len(keep) > 0 {
		return nil
	}
	sort.SliceStable(r.refused, func(i, j int) bool { return r.refused[i].engineGPUs > r.refused[j].engineGPUs })
	var why []string
	for i, x := range r.refused {
		if i == 3 {
			break
		}
		why = append(why, x.label+": "+x.reason)
	}
	return fmt.Errorf("--gpus %d: no deployment of the model fits; the closest (largest engines): %s", n, strings.Join(why, "; "))
}

// ranked is one searched deployment.
type ranked struct {
	label string
	point plan.Point
	cap   *plan.Capacity
	curve []plan.CurvePoint
}

// printRanking reports several deployments: ranked by capacity per GPU,
// the Pareto front, the refused ones, and each one's launch lines.
func printRanking(cmd *cobra.Command, r *capacityRun, f *capacityFlags, all []ranked) error {
	w := cmd.OutOrStdout()
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		return perGPU(all[order[i]].cap, f.closedLoop) > perGPU(all[order[j]].cap, f.closedLoop)
	})
	sc, _ := r.candidateSetup(all[0].point, f.closedLoop)
	title := " Capacity per GPU (simulated) "
	if f.gpus > 0 {
		hw, _ := profiles.LookupHardware(sc.Hardware)
		title = fmt.Sprintf(" Best deployments on %d × %s ", f.gpus, hw.Name)
		fmt.Fprintln(w, center(title, '='))
		fmt.Fprintf(w, "%-34s %s\n", "Model:", modelName(sc))
		fmt.Fprintf(w, "%-34s every TP × PP × DP (EP for MoE) and xPyD split of %d GPUs in one %s node (%d GPUs per node); %d deployments, %d refused\n",
			"Enumerated:", f.gpus, hw.Name, hw.GPUsPerNode, len(all)+len(r.refused), len(r.refused))
	} else {
		fmt.Fprintln(w, center(title, '='))
	}
	fmt.Fprintf(w, "%-34s %s\n", "Workload:", describeWorkload(sc, r, f.closedLoop))
	fmt.Fprintf(w, "%-34s %s (over all requests; a failed request violates every SLO)\n", "SLOs:", plan.SLOList(r.slos))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"rank", "deployment", "gpus", map[bool]string{false: "capacity_req_s", true: "capacity_concurrency"}[f.closedLoop], "req_s_per_gpu", "output_tok_s_per_gpu"}
	for _, o := range r.slos {
		head = append(head, o.Name()+"_ms")
	}
	if f.usd > 0 {
		head = append(head, "usd_per_1M_output_tokens")
	}
	head = append(head, "binding limit")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for rank, i := range order {
		k := &all[i]
		c := k.cap
		row := []string{fmt.Sprint(rank + 1), k.label}
		if c.At == nil {
			why := c.Refused
			if why == "" && c.Above != nil {
				why = c.Above.Why
			}
			row = append(row, "-", "none", "-", "-")
			for range r.slos {
				row = append(row, "-")
			}
			if f.usd > 0 {
				row = append(row, "-")
			}
			fmt.Fprintln(tw, strings.Join(append(row, why), "\t"))
			continue
		}
		at := c.At
		row = append(row, fmt.Sprint(at.GPUs), fmt.Sprintf("%.2f", c.X), fmt.Sprintf("%.3f", perGPU(c, f.closedLoop)), fmt.Sprintf("%.1f", at.OutputThroughput/float64(at.GPUs)))
		for _, v := range at.Values {
			row = append(row, fmt.Sprintf("%.2f", v))
		}
		if f.usd > 0 {
			row = append(row, fmt.Sprintf("%.4g", costPerMTok(f.usd, at.GPUs, at.OutputThroughput)))
		}
		fmt.Fprintln(tw, strings.Join(append(row, c.Limit), "\t"))
	}
	tw.Flush()
	if len(r.refused) > 0 {
		fmt.Fprintln(w, center(" Refused by vLLM ", '-'))
		for _, x := range r.refused {
			fmt.Fprintf(w, "%s: %s\n", x.label, firstSentence(x.reason))
		}
	}
	var points []plan.CurvePoint
	for _, i := range order {
		points = append(points, all[i].curve...)
	}
	front := plan.Front(points)
	if len(front) > 0 {
		fmt.Fprintln(w, center(" Pareto front: output tok/s per GPU vs per user ", '-'))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "deployment\t"+map[bool]string{false: "request_rate", true: "max_concurrency"}[f.closedLoop]+"\toutput_tok_s_per_gpu\toutput_tok_s_per_user")
		for _, p := range front {
			fmt.Fprintf(tw, "%s\t%.4g\t%.1f\t%.1f\n", p.Deployment, p.X, p.PerGPU, p.PerUser)
		}
		tw.Flush()
	}
	if f.plot != "" {
		title := fmt.Sprintf("%s: output tok/s per GPU vs per user", modelName(sc))
		if err := plan.SaveFront(f.plot, title, points, front); err != nil {
			return err
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "plot:", f.plot)
	}
	fmt.Fprintln(w, center(" Launch lines (at capacity) ", '-'))
	for rank, i := range order {
		k := &all[i]
		if k.cap.At == nil {
			continue
		}
		fmt.Fprintf(w, "# %d. %s\n", rank+1, k.label)
		writeLaunch(w, r.launchScenario(k.point, k.cap, f.closedLoop), k.cap.X, f.closedLoop)
	}
	return nil
}

// printLaunch writes the launch section of a single deployment.
func printLaunch(w io.Writer, sc *scenarios.Scenario, _ *sim.Setup, x float64, closed bool) {
	fmt.Fprintln(w, center(" Launch lines (at capacity) ", '-'))
	writeLaunch(w, sc, x, closed)
}

func writeLaunch(w io.Writer, sc *scenarios.Scenario, x float64, closed bool) {
	l := plan.LaunchLines(sc, x, closed)
	for _, s := range l.Lines() {
		fmt.Fprintln(w, s)
	}
	if l.Proxy != "" {
		fmt.Fprintf(w, "# proxy: vLLM's NIXL example proxy (%s, from a vLLM source checkout), round-robin over the instances\n", plan.ProxyScript)
	}
}

// firstSentence shortens a refusal to its first sentence (vLLM's reason;
// the memory figures follow it in the full text).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}
