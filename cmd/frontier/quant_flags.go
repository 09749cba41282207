package main

import (
	"strings"

	"github.com/spf13/pflag"

	"frontier/profiles"
	"frontier/scenarios"
)

// quantFlags are the flags of issue 15: `vllm serve`'s weight
// quantization and the vLLM version of the operator tables.
type quantFlags struct {
	quantization string
	vllmVersion  string
}

// addQuantFlags registers --quantization (-q), vLLM's name and short form.
func addQuantFlags(fl *pflag.FlagSet, f *quantFlags) {
	fl.StringVarP(&f.quantization, "quantization", "q", "", "weight quantization method: "+strings.Join(profiles.KnownQuantMethods(), " | ")+
		" (default, or None: the checkpoint's quantization_config; fp8 quantizes a 16-bit checkpoint online)")
	fl.StringVar(&f.vllmVersion, "vllm-version", "", "vLLM version of the operator tables (embedded versions per GPU: frontier hardware; default: the GPU's default set)")
}

// applyTableFlags copies --vllm-version into the scenario.
func applyTableFlags(sc *scenarios.Scenario, f *quantFlags, set func(string) bool) {
	if set("vllm-version") {
		sc.VLLMVersion = f.vllmVersion
	}
}

// applyQuantFlags copies the quantization flags the user set into the
// deployment. "None" is unset, as vLLM's optional arguments read it
// (vllm/engine/arg_utils.py optional_type: "" or "None" → None), so a
// sweep can vary it: --vary quantization=None,fp8.
func applyQuantFlags(d *scenarios.Deployment, f *quantFlags, set func(string) bool) {
	if set("quantization") {
		d.Quantization = f.quantization
		if d.Quantization == "None" {
			d.Quantization = ""
		}
	}
}
