package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coopcc/coopcc/emu"
)

func newEmuCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "emu",
		Short: "The WLAN emulator: 802.11 DCF medium, AP and wired pipe between namespaces",
	}
	c.AddCommand(newEmuValidateCmd(), newEmuRunCmd(), newEmuBenchCmd())
	return c
}

func newEmuValidateCmd() *cobra.Command {
	var o emu.ValidateOptions
	var ns string
	var maxErr float64
	c := &cobra.Command{
		Use:   "validate",
		Short: "Saturated stations in virtual time against Bianchi's analytic DCF model",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, s := range strings.Split(ns, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil {
					return fmt.Errorf("--n %q: want a comma-separated list of station counts, e.g. 1,2,5,10,20", ns)
				}
				o.N = append(o.N, n)
			}
			rows, err := emu.Validate(o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "PHY %s, %d B frames, %g s per N (virtual time, seed %d)\n\n", o.PHY, o.Frame, o.Seconds, o.Seed)
			if err := emu.WriteValidationTable(out, rows); err != nil {
				return err
			}
			if o.RateControl != "" && o.RateControl != "constant" {
				fmt.Fprintf(out, "\nRate control %s: Bianchi's model assumes the fixed preset rate, so the difference is what rate control costs (no pass/fail).\n", o.RateControl)
				return nil
			}
			if e := emu.MaxAbsErr(rows); e > maxErr {
				return fmt.Errorf("validation failed: largest error %.2f%% exceeds %.1f%%", e, maxErr)
			}
			return nil
		},
	}
	c.Flags().StringVar(&ns, "n", "1,2,5,10,15,20", "station counts, comma-separated")
	c.Flags().StringVar(&o.PHY, "phy", "g", "PHY preset: b, g, n, ac")
	c.Flags().IntVar(&o.Frame, "frame", 1500, "MSDU (IP packet) size in bytes")
	c.Flags().Float64Var(&o.Seconds, "seconds", 100, "virtual seconds measured per N")
	c.Flags().Uint64Var(&o.Seed, "seed", 1, "random seed")
	c.Flags().IntVar(&o.RetryLimit, "retry-limit", 0, "attempts per frame (0 = preset)")
	c.Flags().StringVar(&o.RateControl, "rate-control", "", "stations' rate controller: constant (default), arf, aarf, minstrel")
	c.Flags().Float64Var(&maxErr, "max-error", 3, "fail when any |error %| exceeds this")
	return c
}

func newEmuRunCmd() *cobra.Command {
	var cfgPath, out string
	c := &cobra.Command{
		Use:   "run",
		Short: "Create the TAPs, print ready, emulate the WLAN until SIGTERM/SIGINT, write stats into --out",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgPath == "" || out == "" {
				return fmt.Errorf("need --config FILE and --out DIR")
			}
			cfg, err := emu.LoadConfig(cfgPath)
			if err != nil {
				return err
			}
			ctx, stop := untilSignal(context.Background(), 0)
			defer stop()
			rep, err := emu.Run(ctx, cfg, out, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if !rep.Valid {
				fmt.Fprintf(cmd.ErrOrStderr(), "emu: run marked invalid: %s\n", rep.Reason)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "emu: %d events, lateness p50 %.0f µs p99 %.0f µs max %.0f µs; stats in %s\n",
				rep.Events, rep.LatenessUs["p50"], rep.LatenessUs["p99"], rep.LatenessUs["max"], out)
			return nil
		},
	}
	c.Flags().StringVar(&cfgPath, "config", "", "emulator config (TOML, see docs/emulator.md)")
	c.Flags().StringVar(&out, "out", "", "directory for stations.csv, apqueue.csv, emu.json")
	return c
}

// emuBenchFlags are the inputs of `coopcc emu bench`.
type emuBenchFlags struct {
	opts    emu.BenchOptions // PPS is set per rate of pps
	pps     string
	engine  string
	tapLoop bool
}

func newEmuBenchCmd() *cobra.Command {
	var f emuBenchFlags
	c := &cobra.Command{
		Use:   "bench",
		Short: "Drive the real-time engine with synthetic frames (no TAPs, or --tap) and report scheduling lateness per offered rate",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmuBench(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.opts.PHY, "phy", "g", "PHY preset")
	fl.IntVar(&f.opts.Stations, "stations", 20, "stations")
	fl.StringVar(&f.pps, "pps", "1000,2000,4000", "offered frame rates (total, half uplink half downlink), comma-separated")
	fl.IntVar(&f.opts.Frame, "frame", 1514, "Ethernet frame bytes")
	fl.DurationVar(&f.opts.Duration, "duration", 5*time.Second, "real time per rate")
	fl.IntVar(&f.opts.Priority, "rt-priority", 10, "SCHED_FIFO priority of the loop (0 = ordinary scheduling)")
	fl.Uint64Var(&f.opts.Seed, "seed", 1, "random seed")
	fl.BoolVar(&f.opts.TAP, "tap", false, "through TAP devices in a scratch namespace (root): AF_PACKET injection, UDP sink")
	fl.StringVar(&f.engine, "engine", "threaded", "with --tap: threaded (writer threads write the TAPs, the timing thread reads them), io (the writer threads also read) or inline (the timing thread reads and writes)")
	fl.IntVar(&f.opts.Writers, "writers", 0, "with --tap: writer threads (0 = one per CPU but one)")
	fl.Float64Var(&f.opts.SpinDuty, "spin-duty", 0, "with --tap: share of every 20 ms the timing thread may busy-wait (0 = engine default: 0.8 threaded, 1 inline)")
	fl.BoolVar(&f.tapLoop, "tap-loop", false, "measure the one-core limit of TAP I/O alone: inject, read, write on one thread for --duration (root)")
	return c
}

// runEmuBench runs `coopcc emu bench`: the TAP I/O limit (--tap-loop), or
// one benchmark point per rate of --pps, a table row each, then the sweep's
// sustained rates.
func runEmuBench(out, errOut io.Writer, f emuBenchFlags) error {
	o := f.opts
	if err := setBenchEngine(&o, f.engine); err != nil {
		return err
	}
	if f.tapLoop {
		return printTapLoop(out, o)
	}
	writeBenchHeader(out, o.TAP)
	var rs []emu.BenchResult
	for _, s := range strings.Split(f.pps, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("--pps %q: want a comma-separated list of rates", f.pps)
		}
		o.PPS = v
		r, err := emu.Bench(o)
		if err != nil {
			return err
		}
		if r.RTErr != "" {
			fmt.Fprintf(errOut, "SCHED_FIFO refused: %s\n", r.RTErr)
		}
		rs = append(rs, r)
		writeBenchRow(out, errOut, f.engine, o, r)
	}
	printSustained(out, rs, o.TAP)
	return nil
}

// setBenchEngine sets the options of the --engine that runs the TAP bench:
// threaded, io or inline.
func setBenchEngine(o *emu.BenchOptions, engine string) error {
	switch engine {
	case "threaded":
	case "io":
		o.ThreadReads = true
	case "inline":
		o.Inline = true
	default:
		return fmt.Errorf("--engine %q: want threaded, io or inline", engine)
	}
	return nil
}

// printTapLoop measures the one-core limit of TAP I/O alone (--tap-loop)
// and prints it as a one-row table.
func printTapLoop(out io.Writer, o emu.BenchOptions) error {
	r, err := emu.TapLoop(o.Frame, o.Duration, o.Priority)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "| frame B | frames | inject ns | read ns | write ns | read+write limit fps (1 core) | write-only limit fps (1 core) |\n|--|--|--|--|--|--|--|\n| %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
		o.Frame, r.Frames, r.InjectNs, r.ReadNs, r.WriteNs, r.LimitPPS, r.WriteOnlyPPS)
	return nil
}

// writeBenchHeader prints the header of the bench table, with the TAP
// columns when tap is set.
func writeBenchHeader(out io.Writer, tap bool) {
	if tap {
		fmt.Fprintf(out, "| engine | PHY | stations | frame B | offered pps | delivered pps | events/s | p50 µs | p99 µs | max µs | delivery p99 µs | p99 < 100 µs | cores: emulator | loop | writers | helpers | verdict |\n|--|--|--|--|--|--|--|--|--|--|--|--|--|--|--|--|--|\n")
	} else {
		fmt.Fprintf(out, "| PHY | stations | frame B | offered pps | delivered pps | events/s | p50 µs | p99 µs | max µs | p99 < 100 µs | CPU | spin µs |\n|--|--|--|--|--|--|--|--|--|--|--|--|\n")
	}
}

// writeBenchRow prints the table row of one benchmark point r of engine
// and o; through TAPs it also prints the delivery and loop-time details to
// errOut.
func writeBenchRow(out, errOut io.Writer, engine string, o emu.BenchOptions, r emu.BenchResult) {
	if !o.TAP {
		fmt.Fprintf(out, "| %s | %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %v | %.0f%% | %.0f |\n", o.PHY, o.Stations, o.Frame, r.OfferedPPS, r.Delivered, r.EventsPerSec, r.P50, r.P99, r.MaxUs, r.Valid, 100*r.CPU, float64(r.Spin)/1e3)
		return
	}
	verdict := "valid"
	if !r.Report.Valid {
		verdict = r.Report.Resource
	}
	fmt.Fprintf(out, "| %s | %s | %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %v | %.2f | %.2f | %.2f | %.2f | %s |\n", engine, o.PHY, o.Stations, o.Frame,
		r.OfferedPPS, r.Delivered, r.EventsPerSec, r.P50, r.P99, r.MaxUs, r.DeliveryP99, r.Valid, r.CPU, r.LoopCPU, r.WriterCPU, r.HelperCPU, verdict)
	fmt.Fprintf(errOut, "delivery p50 %.0f µs max %.0f µs; loop time: handling %.1f%% writing %.1f%% sleeping %.1f%% spinning %.1f%% reading %.1f%%; %.1f µs per read, %.1f µs per inline write; late_by %v; %s\n",
		r.Report.DeliveryUs["p50"], r.Report.DeliveryUs["max"], 100*r.Phase[0], 100*r.Phase[1], 100*r.Phase[2], 100*r.Phase[3], 100*r.Phase[4], r.ReadUs, r.WriteUs, r.Report.LateBy, r.Report.Reason)
}

// printSustained ends a bench sweep with its sustained rates: the highest
// delivered frames/s whose point, and every lower one, stays under each
// bound (and, through TAPs, that the emulator judged valid).
func printSustained(out io.Writer, rs []emu.BenchResult, tap bool) {
	fmt.Fprintf(out, "\nsustained (delivered frames/s, every lower rate passing too): p99 < 100 µs: %.0f; p99 < 200 µs: %.0f",
		emu.Sustained(rs, emu.Under(100)), emu.Sustained(rs, emu.Under(200)))
	if tap {
		fmt.Fprintf(out, "; valid as a lab run (p99 < 200 µs, no frame lost to overload, delivery p99 < 1 ms): %.0f", emu.Sustained(rs, emu.EmulatorValid))
	}
	fmt.Fprintln(out)
}
