package main

import (
	"fmt"

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

// tablesNote says whose operator tables a preset uses.
func tablesNote(h profiles.Hardware) string {
	if h.TablesHardware == h.Name {
		return "its own"
	}
	return h.TablesHardware + "'s (same SM and HBM; collectives from its own NVLink figure)"
}
