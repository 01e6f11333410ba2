// Command coopcc is cooperative congestion-window control for hosts that share
// a WLAN access point, and the testbed that reproduces the research behind it.
//
// Every feature is a subcommand; run `coopcc help` for the list.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "coopcc: %v\n", err)
		os.Exit(1)
	}
}
