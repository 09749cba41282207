package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"frontier/profiles"
)

func newProfileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Show and compare operator tables: embedded, measured by profiles/collect, or a folder",
		Long: `Inspect the operator tables Frontier prices steps from. 'profile show' prints
what shapes one set covers; 'profile compare A B' prints latency ratios where
two sets measured the same shape. Measure your own GPUs with
profiles/collect (see profiles/collect/README.md) and point
'frontier simulate --profile-dir' at the result.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return bad(fmt.Errorf("profile: unknown subcommand %q (show | compare)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newProfileShowCmd(), newProfileCompareCmd())
	return cmd
}

func newProfileShowCmd() *cobra.Command {
	var (
		hardware, dir, version string
		measured               bool
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print which shapes a set of operator tables covers, per operator family",
		Long: `Print, per operator family, the row count, dtypes and shape ranges of one
set of tables, then its notes. The set is the default embedded tables for
--hardware, our collector's measurements for it (--measured), or a folder
(--profile-dir, aiconfigurator layout or the collector's CSVs; --hardware is
then ignored).`,
		Args: func(cmd *cobra.Command, args []string) error { return bad(cobra.NoArgs(cmd, args)) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			var spec string
			switch {
			case measured && dir != "":
				return bad(fmt.Errorf("--measured and --profile-dir: give one (the folder, or the embedded measurements for --hardware)"))
			case measured && version != "":
				return bad(fmt.Errorf("--measured and --vllm-version: our collector's measurements have no vLLM versions"))
			case dir != "":
				spec = dir
				if version != "" {
					spec += "@" + version
				}
			case measured:
				spec = "measured:" + hardware
			default:
				spec = "default:" + hardware
				if version != "" {
					spec += "@" + version
				}
			}
			t, err := resolveTables(spec)
			if err != nil {
				return bad(err)
			}
			printCoverage(cmd.OutOrStdout(), t)
			if hw, err := profiles.LookupHardware(t.Hardware); err == nil {
				printRegression(cmd.OutOrStdout(), t, hw)
			} else if hw, err := profiles.LookupHardware(hardware); err == nil {
				printRegression(cmd.OutOrStdout(), t, hw)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&hardware, "hardware", defaultHardware, "GPU whose tables to show: "+strings.Join(profiles.KnownHardware(), " | ")+" (--measured: "+
		strings.Join(profiles.MeasuredHardware(), " | ")+")")
	fl.StringVar(&dir, "profile-dir", "", "show this folder's tables (aiconfigurator layout or the collector's CSVs)")
	fl.BoolVar(&measured, "measured", false, "show our collector's measurements for --hardware (profiles/measured) instead of the default tables")
	fl.StringVar(&version, "vllm-version", "", "the embedded (or --profile-dir) table set of this vLLM version (default: the hardware's default set; frontier hardware lists them)")
	return cmd
}

func newProfileCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare A B",
		Short: "Print latency ratios A/B per operator family over the shapes both tables hold",
		Long: `Compare two sets of operator tables at identical keys. A and B are each
default:<hardware>[@<vLLM version>] (an embedded set), measured:<hardware> (our
collector's measurements, profiles/measured) or a folder (aiconfigurator
layout or the collector's CSVs).

Per family group (gemm per dtype, context attention, generation attention,
moe per dtype and distribution, comm per op and backend, ops per name) it
prints how many shapes both hold, how many only one holds, and the median,
p10 and p90 of latency A / latency B. Shapes match on every key column.
Decode attention matches on the context length: our collector's step is the
context length, aiconfigurator's is context - 1 (its grid is 2^k - 1), so
the collector's step 1024 meets aiconfigurator's 1023. Collectives treat
half and bfloat16 as one dtype. A shape one table holds twice counts once,
at the median of its repeats.`,
		Args: func(cmd *cobra.Command, args []string) error { return bad(cobra.ExactArgs(2)(cmd, args)) },
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := resolveTables(args[0])
			if err != nil {
				return bad(fmt.Errorf("A: %w", err))
			}
			b, err := resolveTables(args[1])
			if err != nil {
				return bad(fmt.Errorf("B: %w", err))
			}
			printComparison(cmd.OutOrStdout(), args[0], args[1], a, b)
			return nil
		},
	}
}

// resolveTables loads default:<hardware>[@<vLLM version>] (an embedded
// set), measured:<hardware> or a folder[@<vLLM version>].
func resolveTables(spec string) (*profiles.Tables, error) {
	if hw, ok := strings.CutPrefix(spec, "default:"); ok {
		hw, version, _ := strings.Cut(hw, "@")
		return profiles.TablesFor(hw, version)
	}
	if hw, ok := strings.CutPrefix(spec, "measured:"); ok {
		return profiles.MeasuredTables(hw)
	}
	dir, version, _ := strings.Cut(spec, "@")
	return profiles.LoadTablesVersion(dir, version)
}

func printCoverage(w io.Writer, t *profiles.Tables) {
	fmt.Fprintf(w, "%s operator tables from %s\n", t.Hardware, t.Source)
	if t.Version != "" {
		fmt.Fprintf(w, "table set: vLLM %s\n", t.Version)
	}
	fmt.Fprintln(w)
	for _, f := range profiles.Describe(t) {
		if f.Rows == 0 {
			fmt.Fprintf(w, "%s: no rows\n", f.Family)
			continue
		}
		fmt.Fprintf(w, "%s: %d rows, dtypes %s\n", f.Family, f.Rows, strings.Join(f.Dtypes, " "))
		for _, g := range f.Groups {
			fmt.Fprintf(w, "  %s\n", g)
		}
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range t.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

func printComparison(w io.Writer, specA, specB string, a, b *profiles.Tables) {
	describe := func(t *profiles.Tables) string {
		conv := "step = context"
		if t.DecodeContextOffset != 0 {
			conv = fmt.Sprintf("step = context - %d", t.DecodeContextOffset)
		}
		return fmt.Sprintf("%s from %s (decode %s)", t.Hardware, t.Source, conv)
	}
	fmt.Fprintf(w, "A = %s: %s\n", specA, describe(a))
	fmt.Fprintf(w, "B = %s: %s\n", specB, describe(b))
	fmt.Fprintln(w, "ratio = latency A / latency B at identical keys (decode attention keyed by context length)")
	fmt.Fprintln(w)

	c := profiles.CompareTables(a, b)
	width := len("family")
	for _, f := range c.Families {
		width = max(width, len(f.Family))
	}
	fmt.Fprintf(w, "%-*s %7s %7s %7s %8s %8s %8s\n", width, "family", "shared", "only A", "only B", "median", "p10", "p90")
	for _, f := range c.Families {
		if f.Shared == 0 {
			fmt.Fprintf(w, "%-*s %7d %7d %7d %8s %8s %8s\n", width, f.Family, 0, f.OnlyA, f.OnlyB, "-", "-", "-")
			continue
		}
		fmt.Fprintf(w, "%-*s %7d %7d %7d %8.3f %8.3f %8.3f\n", width, f.Family, f.Shared, f.OnlyA, f.OnlyB, f.Median, f.P10, f.P90)
	}
	if len(c.Families) == 0 {
		fmt.Fprintln(w, "(no operator family in both)")
	}
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(w, "\nonly in A: %s\n", strings.Join(c.OnlyA, ", "))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(w, "\nonly in B: %s\n", strings.Join(c.OnlyB, ", "))
	}
}
