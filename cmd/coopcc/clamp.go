package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coopcc/coopcc/datapath"
	"github.com/spf13/cobra"
)

func newClampCmd() *cobra.Command {
	var (
		maxCwnd, minCwnd uint32
		dst, netns       string
		backend          string
		forDur, lease    time.Duration
		probe, noSwitch  bool
	)
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
			out := cmd.OutOrStdout()
			if probe {
				c := datapath.Probe()
				fmt.Fprintln(out, "backend:", c.Backend)
				fmt.Fprintln(out, "struct_ops:", c.StructOps)
				fmt.Fprintln(out, "sockops:", c.Sockops)
				fmt.Fprintln(out, "receive:", c.Receive)
				for _, m := range c.Missing {
					fmt.Fprintln(out, "missing:", m)
				}
				return nil
			}
			cfg := datapath.ClampConfig{
				Options: datapath.Options{Netns: netns, Lease: lease, Backend: backend, SwitchExisting: !noSwitch},
				Bounds:  datapath.Bounds{Lo: minCwnd, Hi: maxCwnd},
			}
			if !cmd.Flags().Changed("max") {
				return fmt.Errorf("--max N is required (N >= 1 segments)")
			}
			if maxCwnd == 0 {
				return fmt.Errorf("--max 0: the upper bound must be at least 1 segment")
			}
			if dst != "" {
				a, err := netip.ParseAddr(dst)
				if err != nil {
					return fmt.Errorf("--dst %q: not an IP address", dst)
				}
				cfg.Dst = a
			}
			if lease <= 0 {
				return fmt.Errorf("--lease %v: must be positive", lease)
			}
			if forDur < 0 {
				return fmt.Errorf("--for %v: must not be negative", forDur)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if forDur > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, forDur)
				defer cancel()
			}
			return datapath.RunClamp(ctx, cfg, out)
		},
	}
	f := cmd.Flags()
	f.Uint32Var(&maxCwnd, "max", 0, "upper cwnd bound in segments (>= 1)")
	f.Uint32Var(&minCwnd, "min", 0, "lower cwnd bound in segments (0 = none; struct_ops backend only)")
	f.StringVar(&dst, "dst", "", "bound only flows to this destination address (default: all)")
	f.DurationVar(&forDur, "for", 0, "remove the bound after this long (0 = until SIGINT/SIGTERM)")
	f.StringVar(&netns, "netns", "", "network namespace (ip netns name) whose flows to bound (default: current)")
	f.StringVar(&backend, "backend", datapath.BackendAuto, "auto, struct_ops or sockops")
	f.DurationVar(&lease, "lease", datapath.DefaultLease, "bounds expire this long after the last heartbeat")
	f.BoolVar(&noSwitch, "no-switch-existing", false, "leave connections that exist at start alone")
	f.BoolVar(&probe, "probe", false, "print the supported backend and what is missing, then exit")
	return cmd
}
