package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"frontier/predictor"
	"frontier/profiles"
)

func newHardwareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hardware",
		Short: "List the hardware presets (--hardware values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-10s %-24s %10s %10s %12s %12s  %s\n", "name", "gpu", "mem GiB", "HBM TB/s", "bf16 TFLOPS", "NVLink GB/s", "operator tables")
			for _, name := range profiles.KnownHardware() {
				h, err := profiles.LookupHardware(name)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%-10s %-24s %10.2f %10.2f %12.0f %12.0f  %s\n", h.Name, h.GPUName,
					float64(predictor.TorchTotalBytes(h.Name, h.MemCapacityBytes))/(1<<30), h.MemBandwidth/1e12,
					h.BF16FLOPS/1e12, h.IntraNodeBW/1e9, tablesNote(h))
			}
			return nil
		},
	}
}

func newModelsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List the model ids known without a config path",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			tables := map[string]*profiles.Tables{}
			for _, hw := range []string{"h100-sxm", "h200-sxm"} {
				if t, err := profiles.DefaultTables(hw); err == nil {
					tables[hw] = t
				}
			}
			for _, id := range profiles.KnownModels() {
				m, err := profiles.LoadModel(id)
				if err != nil {
					fmt.Fprintf(w, "%-56s (not simulated: %v)\n", id, err)
					continue
				}
				kind := "dense"
				if m.IsMoE() {
					kind = fmt.Sprintf("MoE %d experts top-%d", m.NumExperts, m.NumExpertsPerToken)
				}
				fmt.Fprintf(w, "%-56s %6.1fB params  %2d layers  %-22s %s\n", id, float64(m.ParamCount())/1e9, m.NumLayers, kind, pricedOn(m, tables))
			}
			return nil
		},
	}
}

// pricedOn says on which hardware's embedded tables the model's
// operators can be priced (a predictor builds at TP 1), e.g.
// "tables: h100-sxm h200-sxm" or "tables: none (moe table has no fp8 rows ...)".
func pricedOn(m profiles.ModelSpec, tables map[string]*profiles.Tables) string {
	dtype := "bfloat16"
	if m.Quantization == "fp8" {
		dtype = "fp8"
	}
	var ok []string
	var why error
	for _, hw := range []string{"h100-sxm", "h200-sxm"} {
		h, err := profiles.LookupHardware(hw)
		if err != nil || tables[hw] == nil {
			continue
		}
		if _, err := predictor.New(predictor.Config{Model: m, Hardware: h, Tables: tables[hw], TP: 1, PP: 1,
			Dtype: dtype, KVDtype: "bfloat16"}); err != nil {
			why = err
			continue
		}
		ok = append(ok, hw)
	}
	if len(ok) == 0 {
		return fmt.Sprintf("tables: none (%v)", why)
	}
	return "tables: " + strings.Join(ok, " ")
}

// tablesNote says whose operator tables a preset uses.
func tablesNote(h profiles.Hardware) string {
	if h.TablesHardware == h.Name {
		return "its own"
	}
	return h.TablesHardware + "'s (same SM and HBM; collectives from its own NVLink figure)"
}
