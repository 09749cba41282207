package main

import (
	"strings"

	"github.com/spf13/pflag"

	"frontier/profiles"
	"frontier/scenarios"
)

// quantFlags are the `vllm serve` flags of weight quantization (issue 15).
type quantFlags struct {
	quantization string
}

// addQuantFlags registers --quantization (-q), vLLM's name and short form.
func addQuantFlags(fl *pflag.FlagSet, f *quantFlags) {
	fl.StringVarP(&f.quantization, "quantization", "q", "", "weight quantization method: "+strings.Join(profiles.KnownQuantMethods(), " | ")+
		" (default: the checkpoint's quantization_config; fp8 quantizes a 16-bit checkpoint online)")
}

// applyQuantFlags copies the quantization flags the user set into the
// deployment.
func applyQuantFlags(d *scenarios.Deployment, f *quantFlags, set func(string) bool) {
	if set("quantization") {
		d.Quantization = f.quantization
	}
}
