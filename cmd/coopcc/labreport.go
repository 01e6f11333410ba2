package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coopcc/coopcc/emu"
	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/report"
	"github.com/coopcc/coopcc/lab/results"
)

// busyHostLine says how many invalid runs ran while the virtual machine's
// host took emu.StealNoted or more of its CPU time (emu.json cpu_steal), and
// what to do; "" when none did. Such a run is the host's, not its load's:
// run again later, the same run is likely valid.
func busyHostLine(runs []analysis.RunSummary) string {
	n, lo, hi := 0, 1.0, 0.0
	for _, r := range runs {
		if r.Valid || !(r.CPUSteal >= emu.StealNoted) {
			continue
		}
		n++
		lo, hi = min(lo, r.CPUSteal), max(hi, r.CPUSteal)
	}
	if n == 0 {
		return ""
	}
	took := fmt.Sprintf("%.0f–%.0f", 100*lo, 100*hi)
	if fmt.Sprintf("%.0f", 100*lo) == fmt.Sprintf("%.0f", 100*hi) {
		took = fmt.Sprintf("%.0f", 100*hi)
	}
	return fmt.Sprintf("%d of them ran on a busy host: its hypervisor took %s %% of the CPU time (emu.json cpu_steal); run them again later or on another machine", n, took)
}

// newLabReportCmd is `coopcc lab report DIR`: figures, CSVs, a summary table
// and one self-contained HTML page from a lab results directory.
func newLabReportCmd() *cobra.Command {
	var out, formats, window string
	var allowMixed bool
	cmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "Analyze a lab results directory: figures, CSVs, summary table and an HTML page",
		Long: `Reads a results directory written by 'coopcc lab run' and writes, into --out
(default DIR/report): report.html (self-contained), summary.txt/.csv, runs.csv,
and every figure as PNG/SVG with its data as CSV. Prints the summary table.
Metric definitions: docs/analysis.md.

Several directories (the shards of one sweep, 'coopcc lab run --shard K/N')
are merged into one report (--out required): they must come from the same
scenario file, coopcc binary and run options unless --allow-mixed, and no run
id may be in two of them.

--window FROM..TO measures goodput, the aggregate and the fairness indices
over that part of the traffic schedule (seconds after traffic start), e.g.
--window 10s..25s for steady state without slow start.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				if len(args) > 1 {
					return fmt.Errorf("merging %d directories: give the report's directory with --out", len(args))
				}
				out = filepath.Join(args[0], "report")
			}
			opt := report.Options{Formats: strings.Split(formats, ",")}
			if window != "" {
				var err error
				if opt.Window, err = analysis.ParseWindow(window); err != nil {
					return fmt.Errorf("--window: %w", err)
				}
			}
			res, err := results.Merge(args, results.MergeOptions{AllowMixed: allowMixed})
			if err != nil {
				return err
			}
			rep, err := report.Write(res, out, opt)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, warn := range rep.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", warn)
			}
			if note := rep.WindowNote(); note != "" {
				fmt.Fprintln(w, note)
			}
			if err := report.WriteSummaryTable(w, rep.Groups); err != nil {
				return err
			}
			if err := report.WriteKindTable(w, rep.Kinds); err != nil {
				return err
			}
			if len(rep.Knees) > 0 {
				fmt.Fprintln(w)
				if err := report.WriteKneeTable(w, rep.Knees); err != nil {
					return err
				}
			}
			invalid := 0
			for _, r := range rep.Runs {
				if !r.Valid {
					invalid++
				}
			}
			if invalid > 0 {
				fmt.Fprintf(w, "%d of %d runs INVALID (left out of the statistics; reasons in the report)\n", invalid, len(rep.Runs))
			}
			if line := busyHostLine(rep.Runs); line != "" {
				fmt.Fprintln(w, line)
			}
			fmt.Fprintf(w, "report: %s (%d figures)\n", rep.HTMLPath, len(rep.Figures))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output directory (default DIR/report)")
	cmd.Flags().StringVar(&formats, "format", "png,svg", "figure formats: png, svg or png,svg")
	cmd.Flags().BoolVar(&allowMixed, "allow-mixed", false, "merge directories of different scenario files, binaries or run options")
	cmd.Flags().StringVar(&window, "window", "", "measure goodput over FROM..TO of the traffic schedule, e.g. 10s..25s (steady state)")
	return cmd
}
