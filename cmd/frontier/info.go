package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"frontier/profiles"
)

func newHardwareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hardware",
		Short: "List the hardware presets (--hardware values) and what each is built from",
		Long: `List the --hardware presets: the GPU, the memory vLLM sees (torch's total;
measured, or nvidia-smi's total less 512 MiB), peak bandwidth and bf16
FLOP/s, the GPU-to-GPU link, GPUs per node and per NVLink domain (the most
one engine may span), vllm serve's batch defaults on that GPU, and the
operator tables: NVIDIA aiconfigurator's system folder and the vLLM
versions embedded (* = the default; --vllm-version picks another).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return printHardware(cmd.OutOrStdout()) },
	}
}

func printHardware(w io.Writer) error {
	fmt.Fprintf(w, "%-13s %-45s %8s %8s %7s %-17s %5s %6s %-11s %s\n", "name", "gpu", "mem GiB", "TB/s", "TFLOPS",
		"link GB/s", "node", "domain", "batch", "operator tables (aiconfigurator vLLM versions, * default)")
	for _, name := range profiles.KnownHardware() {
		h, err := profiles.LookupHardware(name)
		if err != nil {
			return err
		}
		versions, def, err := profiles.TableVersions(name)
		if err != nil {
			return err
		}
		var vs []string
		for _, v := range versions {
			if v == def {
				v += "*"
			}
			vs = append(vs, v)
		}
		tables := h.System + " " + strings.Join(vs, " ")
		if h.TablesHardware != h.Name {
			tables += fmt.Sprintf(" (%s's compute tables; collectives from its own NVLink figure)", h.TablesHardware)
		}
		tokens, seqs := h.ServeBatchDefaults()
		domain := fmt.Sprint(h.NVLinkDomain)
		if h.NVLinkDomain == 0 {
			domain = "-"
		}
		fmt.Fprintf(w, "%-13s %-45s %8.2f %8.2f %7.0f %-17s %5d %6s %-11s %s\n", h.Name, h.GPUName,
			float64(h.TorchTotalBytes)/(1<<30), h.MemBandwidth/1e12, h.BF16FLOPS/1e12,
			fmt.Sprintf("%s %.0f", h.Interconnect, h.IntraNodeBW/1e9), h.GPUsPerNode, domain,
			fmt.Sprintf("%d/%d", tokens, seqs), tables)
	}
	fmt.Fprintln(w, "\nmem: torch-visible total (h100-sxm, h800: vLLM's memory log; h200-sxm: measured on ours; others: nvidia-smi's total − 512 MiB). link: GB/s per GPU per direction.")
	fmt.Fprintln(w, "batch: vllm serve's max_num_batched_tokens/max_num_seqs defaults. domain: GPUs one NVLink fabric joins (an engine may span it; - = PCIe only, one node).")
	return nil
}
