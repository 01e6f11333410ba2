package main

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/coopcc/coopcc/lab"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
)

func newLabCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Run the papers' experiments on this machine (scenarios, testbed, results)",
		Long: `lab runs scenario files (TOML; presets are embedded, see "coopcc lab list")
on a testbed of network namespaces around the WLAN emulator, with iperf3
traffic and the agent on managed terminals, and writes a results directory
that "coopcc lab report" turns into figures. docs/scenarios.md is the schema.`,
	}
	cmd.AddCommand(newLabRunCmd(), newLabListCmd(), newLabCleanCmd(), newLabReportCmd())
	return cmd
}

func newLabRunCmd() *cobra.Command {
	var out, backend, only, coopcc, shardArg, lockPath string
	var quick, dry bool
	var duration time.Duration
	var wait bool
	var reps, firstRep, retryBusy int
	var waitQuiet time.Duration
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario (preset name or .toml file) and write its results directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := scenario.Load(args[0])
			if err != nil {
				return err
			}
			var shard scenario.Shard
			if shardArg != "" {
				if shard, err = scenario.ParseShard(shardArg); err != nil {
					return err
				}
			}
			if dry {
				runs, err := s.Expand(scenario.Options{Quick: quick, Duration: scenario.Duration(duration), Repetitions: reps, FirstRep: firstRep})
				if err != nil {
					return err
				}
				if runs, err = scenario.SelectRuns(runs, only); err != nil {
					return err
				}
				if runs, err = shard.Select(runs); err != nil {
					return err
				}
				total := time.Duration(0)
				for _, r := range runs {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%d stations\t%v\n", r.ID, len(r.Stations), r.Length)
					total += r.Length.D()
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d runs, %v of traffic\n", len(runs), total)
				return nil
			}
			if out == "" {
				out = filepath.Join("results", s.Name+"-"+time.Now().Format("20060102-150405"))
			}
			sum, err := lab.RunScenario(cmd.Context(), s, lab.RunnerConfig{Out: out, Quick: quick, Duration: scenario.Duration(duration), Repetitions: reps, FirstRep: firstRep, Backend: backend,
				Coopcc: coopcc, Only: only, Wait: wait, Lock: lockPath, Shard: shard, RetryBusyHost: retryBusy, WaitQuietHost: waitQuiet, Log: cmd.ErrOrStderr()})
			if sum != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "%d runs (%d failed) in %v; results in %s\n", sum.Runs, sum.Failed, sum.Took.Round(time.Second), sum.Out)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&quick, "quick", false, "apply the scenario's [quick] reductions (shorter runs, fewer sweep points)")
	f.DurationVar(&duration, "duration", 0, "override the traffic duration (every start/stop time scales with it), e.g. 30s")
	f.IntVar(&reps, "repetitions", 0, "override the number of repetitions of every run (after --quick), 1..100")
	f.IntVar(&firstRep, "first-rep", 0, "number the repetitions from this one (default 1), so that runs made by separate invocations have distinct ids and emulator seeds and lab report DIR... pools them (e.g. --repetitions 1 --first-rep 2 for a second repetition)")
	f.StringVar(&out, "out", "", "results directory (default results/SCENARIO-TIMESTAMP; must be empty)")
	f.StringVar(&backend, "backend", "", `"emu" (WLAN emulator) or "veth" (plain bridge, no emulation); default emu when available`)
	f.StringVar(&only, "only", "", "run only the runs that match: key=value terms, all must hold, alternatives with | (e.g. 'mode=cubic|coop,n=10'), or a substring of the run id")
	f.StringVar(&coopcc, "coopcc", "", "coopcc binary for the emulator and agents (default: this one)")
	f.StringVar(&shardArg, "shard", "", "run only shard K/N of the runs (after --only), e.g. 2/4; the shards of one scenario are disjoint and cover it, and lab report DIR... merges their results")
	f.BoolVar(&dry, "dry-run", false, "list the runs the scenario expands to and exit")
	f.IntVar(&retryBusy, "retry-busy-host", 0, "run a run again, up to this many times, when the emulator marks it invalid while the machine's hypervisor took 1 % or more of its CPU time (emu.json cpu_steal: mostly the host's verdict, not the run's); the invalid attempts are kept in retried/ and named in meta.json")
	f.DurationVar(&waitQuiet, "wait-quiet-host", 0, "before each run (and retry), wait up to this long (e.g. 10m) for the machine's hypervisor to take under 1 % of its CPU time over 5 s (/proc/stat steal), then run anyway; 0 = do not wait")
	f.BoolVar(&wait, "wait", false, "if another lab run is in progress, wait for it instead of failing (one emulator at a time: "+lab.DefaultLock+")")
	f.StringVar(&lockPath, "lock", lab.DefaultLock, "the lock file this run holds while its emulator runs; on a machine with cores for several emulators, runs with different locks go side by side (each run's validity check says whether they starved each other), e.g. the shards of one sweep")
	return cmd
}

func newLabListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the embedded preset scenarios",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := scenario.Presets()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tRUNS\tQUICK\tDESCRIPTION")
			for _, s := range ps {
				full, _ := s.Expand(scenario.Options{})
				q, _ := s.Expand(scenario.Options{Quick: true})
				fmt.Fprintf(tw, "%s\t%d (%s)\t%d (%s)\t%s\n", s.Name, len(full), trafficTime(full), len(q), trafficTime(q), s.Description)
			}
			return tw.Flush()
		},
	}
}

func trafficTime(runs []scenario.Run) string {
	var d time.Duration
	for _, r := range runs {
		d += r.Length.D()
	}
	return d.Round(time.Second).String()
}

func newLabCleanCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove network namespaces left by interrupted lab runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, err := testbed.Clean(all)
			for _, n := range removed {
				fmt.Fprintln(cmd.OutOrStdout(), "removed", n)
			}
			if len(removed) == 0 && err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to clean")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove namespaces of lab runs that are still running")
	return cmd
}
