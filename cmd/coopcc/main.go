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
	"time"
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

// untilSignal returns a context that ends on SIGINT or SIGTERM, or after d
// when d > 0, and the function that releases it.
func untilSignal(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	if d <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}
