package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"frontier/scenarios"
)

// This file turns `frontier simulate`'s flags into a scenario: the
// embedded default, then every flag the user set, in the one place sweep
// and capacity build their points through too.

// The embedded default's model and GPU, also the --model and --hardware
// defaults.
const (
	defaultModel    = "meta-llama/Llama-3.1-8B-Instruct"
	defaultHardware = "h200-sxm"
)

// defaultRandom is the embedded default's random dataset, 1000 prompts of
// 512 in / 128 out, also the flags' defaults and what a random flag edits
// when the scenario has no random block.
func defaultRandom() *scenarios.RandomData {
	return &scenarios.RandomData{NumPrompts: 1000, InputLen: 512, OutputLen: 128}
}

// defaultScenario is the embedded default: Llama-3.1-8B bf16 on one
// H200-SXM, random 1000 × 512 in / 128 out at request rate inf.
func defaultScenario() *scenarios.Scenario {
	d := scenarios.DefaultDeployment()
	d.Model = defaultModel
	return &scenarios.Scenario{
		Name: "default", Hardware: defaultHardware, Deployment: &d,
		Workload: scenarios.Workload{
			Dataset:  "random",
			Random:   defaultRandom(),
			Arrivals: scenarios.DefaultArrivals(),
		},
	}
}

// buildScenario loads the scenario (or the default) and applies the flags
// the user set. frontier sweep and capacity build every point through it:
// a flag that changes the simulation must take effect here, not in
// runSimulate, to be sweepable.
func buildScenario(cmd *cobra.Command, f *simFlags) (*scenarios.Scenario, error) {
	var sc *scenarios.Scenario
	if f.scenario != "" {
		var err error
		if sc, err = scenarios.Load(f.scenario); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("--scenario: %w", pe)
			}
			return nil, err
		}
		if sc.Name == "" { // name is free text and optional: reports say which file
			sc.Name = filepath.Base(f.scenario)
		}
	} else {
		sc = defaultScenario()
	}
	set := cmd.Flags().Changed
	if err := checkFlagForms(cmd, f); err != nil {
		return nil, err
	}
	if f.scenario == "" && cmd.Flags().NFlag() > 0 {
		for _, n := range append(append([]string{"hardware"}, deploymentFlags...), "dataset-name", "dataset-path", "num-prompts",
			"random-input-len", "random-output-len", "random-range-ratio", "random-prefix-len", "request-rate", "burstiness", "max-concurrency", "seed", "timeout") {
			if set(n) {
				sc.Name = "command line (embedded default + flags)"
				break
			}
		}
	}
	if err := applyHardwareFlag(sc, f, set); err != nil {
		return nil, err
	}
	applyTableFlags(sc, &f.quant, set)
	if set("profile-dir") {
		p, _ := absPath(f.profile)
		sc.Profiles = &p
	}
	if set("calibration") {
		p, _ := absPath(f.calib)
		sc.Calibration = &p
	}
	if err := applyPredictorFlag(sc, &f.pred, set); err != nil {
		return nil, err
	}
	if sc.Deployment == nil {
		if sc.Disaggregation != nil && anySet(set, deploymentFlags...) {
			return nil, fmt.Errorf("deployment flags (%s) do not apply to a disaggregated scenario; edit its prefill/decode deployments", strings.Join(setFlags(set, deploymentFlags), ", "))
		}
	} else {
		applyDeployment(sc.Deployment, f, set)
	}
	if err := applyPolicyFlags(sc, &f.policy, set); err != nil {
		return nil, err
	}
	if err := applyWorkload(&sc.Workload, f, set); err != nil {
		return nil, err
	}
	return sc, nil
}

// deploymentFlags are the `vllm serve` flags that edit scenario.deployment.
var deploymentFlags = []string{"model", "dtype", "tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size",
	"enable-expert-parallel", "no-enable-expert-parallel", "max-num-seqs", "max-num-batched-tokens", "max-model-len", "gpu-memory-utilization",
	"block-size", "enable-prefix-caching", "no-enable-prefix-caching", "long-prefill-token-threshold", "enforce-eager",
	"kv-cache-dtype", "num-gpu-blocks-override", "cuda-graph-sizes", "async-scheduling", "no-async-scheduling", "api-server-count",
	"scheduling-policy", "quantization"}

func setFlags(set func(string) bool, names []string) []string {
	var out []string
	for _, n := range names {
		if set(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

func anySet(set func(string) bool, names ...string) bool {
	for _, n := range names {
		if set(n) {
			return true
		}
	}
	return false
}

func applyDeployment(d *scenarios.Deployment, f *simFlags, set func(string) bool) {
	if set("model") {
		d.Model = f.model
	}
	if set("dtype") {
		d.Dtype = f.dtype
	}
	applyQuantFlags(d, &f.quant, set)
	if set("tensor-parallel-size") {
		d.TensorParallelSize = f.tp
	}
	if set("pipeline-parallel-size") {
		d.PipelineParallelSize = f.pp
	}
	if set("data-parallel-size") {
		d.DataParallelSize = f.dp
	}
	if set("enable-expert-parallel") {
		d.EnableExpertParallel = f.ep
	}
	if set("no-enable-expert-parallel") && f.noEP {
		d.EnableExpertParallel = false
	}
	if set("max-num-seqs") {
		d.MaxNumSeqs = nonZero(f.maxNumSeqs)
	}
	if set("max-num-batched-tokens") {
		d.MaxNumBatchedTokens = nonZero(f.maxBatched)
	}
	if set("max-model-len") {
		d.MaxModelLen = nonZero(f.maxModelLen)
	}
	if set("gpu-memory-utilization") {
		d.GPUMemoryUtilization = f.gpuUtil
	}
	if set("block-size") {
		d.BlockSize = f.blockSize
	}
	if set("enable-prefix-caching") {
		v := f.prefixCaching
		d.EnablePrefixCaching = &v
	}
	if set("no-enable-prefix-caching") && f.noPrefixCaching {
		v := false
		d.EnablePrefixCaching = &v
	}
	if set("long-prefill-token-threshold") {
		d.LongPrefillTokenThreshold = f.longPrefill
	}
	if set("enforce-eager") {
		d.EnforceEager = f.eager
	}
	if set("kv-cache-dtype") {
		d.KVCacheDtype = f.kvDtype
	}
	if set("num-gpu-blocks-override") {
		v := f.blocksOverride
		d.NumGPUBlocksOverride = &v
	}
	if set("cuda-graph-sizes") {
		d.CUDAGraphSizes = f.graphSizes
	}
	if set("async-scheduling") {
		v := f.async
		d.AsyncScheduling = &v
	}
	if set("api-server-count") {
		v := f.apiServers
		d.APIServerCount = &v
	}
	if set("no-async-scheduling") && f.noAsync {
		v := false
		d.AsyncScheduling = &v
	}
}

// nonZero keeps an explicit 0 from meaning "default": it becomes
// scenarios.ExplicitZero so validation reports it ("must be ≥ 1, got 0").
func nonZero(v int) int {
	if v == 0 {
		return scenarios.ExplicitZero
	}
	return v
}

func applyWorkload(w *scenarios.Workload, f *simFlags, set func(string) bool) error {
	if set("dataset-name") {
		w.Dataset = f.dataset
	}
	if set("dataset-path") && !set("dataset-name") && w.Dataset != "lengths" {
		w.Dataset = "trace" // --dataset-path alone: a trace, as --trace FILE.csv was
	}
	tookNumPrompts, err := applyDatasetFlags(w, f, set)
	if err != nil {
		return err
	}
	randomFlags := []string{"num-prompts", "random-input-len", "random-output-len", "random-range-ratio"}
	if tookNumPrompts {
		randomFlags = randomFlags[1:]
	}
	known := w.Dataset != "random" && slices.Contains(scenarios.Datasets, w.Dataset)
	if known && anySet(set, randomFlags...) {
		return fmt.Errorf("%s: only for the random dataset, but the workload's dataset is %s", strings.Join(setFlags(set, randomFlags), ", "), w.Dataset)
	}
	rateFlags := []string{"request-rate", "burstiness"}
	if anySet(set, rateFlags...) && (len(w.Arrivals.Stages) > 0 || w.Dataset == "trace") {
		return fmt.Errorf("%s: not used here, the scenario's workload.arrivals.stages or the trace set the send times", strings.Join(setFlags(set, rateFlags), ", "))
	}
	if anySet(set, randomFlags...) {
		if w.Random == nil {
			w.Random = defaultRandom()
		}
		if set("num-prompts") {
			w.Random.NumPrompts = f.numPrompts
		}
		if set("random-input-len") {
			w.Random.InputLen = f.inLen
		}
		if set("random-output-len") {
			w.Random.OutputLen = f.outLen
		}
		if set("random-range-ratio") {
			w.Random.RangeRatio = f.rangeRatio
		}
	}
	if set("dataset-path") && w.Dataset == "trace" {
		p, _ := absPath(f.data.datasetPath)
		w.Trace = &scenarios.TraceData{Path: p}
	}
	if set("request-rate") {
		r, err := parseRate(f.rate)
		if err != nil {
			return err
		}
		w.Arrivals.RequestRate = r
	}
	if set("burstiness") {
		w.Arrivals.Burstiness = f.burstiness
	}
	if set("max-concurrency") {
		if err := negativeConcurrency(f.maxConcurrency); err != nil {
			return err
		}
		w.Arrivals.MaxConcurrency = nil // 0 = unlimited, as vllm bench serve
		if v := f.maxConcurrency; v != 0 {
			w.Arrivals.MaxConcurrency = &v
		}
	}
	if set("seed") {
		w.Seed = f.seed
	}
	if set("timeout") {
		v := f.timeout
		w.Arrivals.TimeoutS = &v
	}
	return nil
}

func parseRate(s string) (scenarios.Rate, error) {
	if strings.EqualFold(strings.TrimPrefix(s, "+"), "inf") {
		return scenarios.Rate(math.Inf(1)), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("--request-rate: must be a number of requests/s or inf, got %q", s)
	}
	return scenarios.Rate(v), nil
}

func absPath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") {
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return p, err
	}
	return wd + "/" + p, nil
}
