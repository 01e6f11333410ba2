package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

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

// buildRevision returns the VCS revision stamped by `go build`, with a
// "-dirty" suffix for modified trees, or "devel" when unknown.
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
