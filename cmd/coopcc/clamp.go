package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/coopcc/coopcc/datapath"
	"github.com/spf13/cobra"
)

// clampFlags are the inputs of `coopcc clamp`.
type clampFlags struct {
	maxCwnd, minCwnd uint32
	dst, netns       string
	backend          string
	forDur, lease    time.Duration
	probe, noSwitch  bool
}

func newClampCmd() *cobra.Command {
	var f clampFlags
	cmd := &cobra.Command{
		Use:   "clamp --max N [--min M] [--dst ADDR] [--for DURATION] [--netns NAME]",
		Short: "Bound the cwnd of the kernel's CUBIC by hand (experiments, calibration)",
		Long: `clamp loads the coopcc datapath, bounds the congestion window of TCP flows
(all destinations, or --dst) to [--min, --max] segments, and keeps the bound
alive until SIGINT/SIGTERM or --for expires; then it prints how often each
bound was applied and restores the previous congestion control. If the process
dies without cleaning up, the bounds expire after the lease (fail-open).
--probe only prints which backend this kernel supports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd.OutOrStdout(), cmd.Flags().Changed("max"))
		},
	}
	fl := cmd.Flags()
	fl.Uint32Var(&f.maxCwnd, "max", 0, "upper cwnd bound in segments (>= 1)")
	fl.Uint32Var(&f.minCwnd, "min", 0, "lower cwnd bound in segments (0 = none; struct_ops backend only)")
	fl.StringVar(&f.dst, "dst", "", "bound only flows to this destination address (default: all)")
	fl.DurationVar(&f.forDur, "for", 0, "remove the bound after this long (0 = until SIGINT/SIGTERM)")
	fl.StringVar(&f.netns, "netns", "", "network namespace (ip netns name) whose flows to bound (default: current)")
	fl.StringVar(&f.backend, "backend", datapath.BackendAuto, "auto, struct_ops or sockops")
	fl.DurationVar(&f.lease, "lease", datapath.DefaultLease, "bounds expire this long after the last heartbeat")
	fl.BoolVar(&f.noSwitch, "no-switch-existing", false, "leave connections that exist at start alone")
	fl.BoolVar(&f.probe, "probe", false, "print the supported backend and what is missing, then exit")
	return cmd
}

// run prints the datapath's capabilities (--probe), or bounds the flows
// until SIGINT/SIGTERM or --for; maxSet says whether --max was given.
func (f clampFlags) run(out io.Writer, maxSet bool) error {
	if f.probe {
		printProbe(out)
		return nil
	}
	cfg, err := f.config(maxSet)
	if err != nil {
		return err
	}
	ctx, stop := untilSignal(context.Background(), f.forDur)
	defer stop()
	return datapath.RunClamp(ctx, cfg, out)
}

// config checks the flags, in the order their errors are reported, and
// returns the clamp they ask for.
func (f clampFlags) config(maxSet bool) (datapath.ClampConfig, error) {
	cfg := datapath.ClampConfig{
		Options: datapath.Options{Netns: f.netns, Lease: f.lease, Backend: f.backend, SwitchExisting: !f.noSwitch},
		Bounds:  datapath.Bounds{Lo: f.minCwnd, Hi: f.maxCwnd},
	}
	if !maxSet {
		return cfg, fmt.Errorf("--max N is required (N >= 1 segments)")
	}
	if f.maxCwnd == 0 {
		return cfg, fmt.Errorf("--max 0: the upper bound must be at least 1 segment")
	}
	if f.dst != "" {
		a, err := netip.ParseAddr(f.dst)
		if err != nil {
			return cfg, fmt.Errorf("--dst %q: not an IP address", f.dst)
		}
		cfg.Dst = a
	}
	if f.lease <= 0 {
		return cfg, fmt.Errorf("--lease %v: must be positive", f.lease)
	}
	if f.forDur < 0 {
		return cfg, fmt.Errorf("--for %v: must not be negative", f.forDur)
	}
	return cfg, cfg.Validate()
}

// printProbe prints the backend this kernel supports, which of the
// datapath's features it has, and what is missing.
func printProbe(out io.Writer) {
	c := datapath.Probe()
	fmt.Fprintln(out, "backend:", c.Backend)
	fmt.Fprintln(out, "struct_ops:", c.StructOps)
	fmt.Fprintln(out, "sockops:", c.Sockops)
	fmt.Fprintln(out, "receive:", c.Receive)
	for _, m := range c.Missing {
		fmt.Fprintln(out, "missing:", m)
	}
}
