package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coopcc/coopcc/emu"
)

func newEmuCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "emu",
		Short: "The WLAN emulator: 802.11 DCF medium, AP and wired pipe between namespaces",
	}
	c.AddCommand(newEmuValidateCmd())
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
	c.Flags().Float64Var(&maxErr, "max-error", 3, "fail when any |error %| exceeds this")
	return c
}
