package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"frontier/profiles"
	"frontier/sim"
)

// modelsMaxModelLen is the max_model_len `frontier models` sizes
// deployments for: long enough for the default workload, short enough
// that a model with a huge max_position_embeddings (Llama-4-Scout's
// 10,485,760) is not refused for its KV cache alone.
const modelsMaxModelLen = 4096

func newModelsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List the embedded model configs and the GPUs that price each",
		Long: `List every embedded model config (its HuggingFace id works as --model
without a config path): size, layer count, MoE/MLA, weight quantization,
and each hardware preset whose operator tables price it, with the
smallest tensor-parallel size vLLM would start it at with
--max-model-len 4096 (vLLM's defaults otherwise). A model no preset
prices says why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printModels(cmd.OutOrStdout())
		},
	}
}

// modelRow is one line of `frontier models`: a model and where it runs.
type modelRow struct {
	ID   string
	Spec profiles.ModelSpec
	Err  error      // the model is not simulated
	Fits []modelFit // hardware presets that price it
	Why  error      // why none does (when Fits is empty)
}

// modelFit is one hardware preset that prices the model and the smallest
// TP that starts.
type modelFit struct {
	Hardware string
	TP       int
}

// listModels resolves every embedded model on every hardware preset.
func listModels() []modelRow {
	var rows []modelRow
	for _, id := range profiles.EmbeddedModels() {
		r := modelRow{ID: id}
		r.Spec, r.Err = profiles.LoadModel(id)
		if r.Err == nil {
			for _, hw := range profiles.KnownHardware() {
				f, err := sim.SmallestTP(id, hw, modelsMaxModelLen)
				if err != nil {
					if r.Why == nil {
						r.Why = fmt.Errorf("%s: %w", hw, err)
					}
					continue
				}
				r.Fits = append(r.Fits, modelFit{Hardware: hw, TP: f.TP})
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// printModels lists the models, their columns as wide as their longest
// entry (fmt pads by runes: "MoE 128×top-8" is 13 wide).
func printModels(w io.Writer) error {
	rows := listModels()
	kinds := make([]string, len(rows))
	idW, kindW := len("model"), len("kind")
	for i, r := range rows {
		idW = max(idW, utf8.RuneCountInString(r.ID))
		if r.Err == nil {
			kinds[i] = modelKind(r.Spec)
			kindW = max(kindW, utf8.RuneCountInString(kinds[i]))
		}
	}
	fmt.Fprintf(w, "%-*s %8s %6s  %-*s %s\n", idW, "model", "params", "layers", kindW, "kind", "priced on (smallest TP that starts, max_model_len 4096)")
	for i, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(w, "%-*s not simulated: %v\n", idW, r.ID, r.Err)
			continue
		}
		m := r.Spec
		var where []string
		for _, f := range r.Fits {
			where = append(where, fmt.Sprintf("%s TP%d", f.Hardware, f.TP))
		}
		on := strings.Join(where, ", ")
		if len(where) == 0 {
			on = fmt.Sprintf("none (%v)", r.Why)
		}
		fmt.Fprintf(w, "%-*s %7.1fB %6d  %-*s %s\n", idW, r.ID, float64(m.ParamCount())/1e9, m.NumLayers, kindW, kinds[i], on)
	}
	return nil
}

// modelKind says dense or MoE, MLA, and the weights' quantization.
func modelKind(m profiles.ModelSpec) string {
	kind := "dense"
	if m.IsMoE() {
		kind = fmt.Sprintf("MoE %d×top-%d", m.NumExperts, m.NumExpertsPerToken)
	}
	if m.IsMLA() {
		kind += " MLA"
	}
	if m.Quant.Quantized() {
		kind += " " + m.Quant.Describe()
	}
	return kind
}
