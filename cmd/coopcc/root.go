package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/coopcc/coopcc/internal/buildinfo"
	"github.com/spf13/cobra"
)

// newRootCmd builds the command tree. Each subcommand lives in its own file
// (mon.go, clamp.go, ...) and is added here, one line each.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "coopcc",
		Short: "Cooperative congestion-window control for hosts sharing a WLAN access point",
		Long: `coopcc bounds the congestion window of the kernel's own CUBIC on every terminal
of a crowded WLAN, from status the terminals exchange with each other, and ships
a testbed (namespaces, iperf3, an 802.11 emulator) that reproduces the papers.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addCPUProfile(root)
	root.AddCommand(newVersionCmd())
	// Subcommands, one line each:
	root.AddCommand(newLabCmd())
	root.AddCommand(newPolicyCmd())
	root.AddCommand(newPeerCmd())
	root.AddCommand(newMonCmd())
	root.AddCommand(newClampCmd())
	root.AddCommand(newEmuCmd())
	root.AddCommand(newAgentCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the git revision and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "coopcc %s (%s, %s/%s)\n", buildRevision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// buildRevision returns the stamped VCS revision shortened to 12 hex digits
// (with "-dirty" for modified trees), or "devel" when unknown.
func buildRevision() string {
	rev := buildinfo.Revision()
	if rev == "" {
		return "devel"
	}
	if h, dirty := strings.CutSuffix(rev, "-dirty"); len(h) > 12 {
		rev = h[:12]
		if dirty {
			rev += "-dirty"
		}
	}
	return rev
}
