package main

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/coopcc/coopcc/peer"
	"github.com/spf13/cobra"
)

func newPeerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "peer",
		Short: "Debug the cooperation protocol (docs/protocol.md)",
	}
	cmd.AddCommand(newPeerListenCmd(), newPeerKeygenCmd())
	return cmd
}

func newPeerListenCmd() *cobra.Command {
	var (
		iface, keyFile, group, group6 string
		port                          int
		ipv6, send                    bool
		interval                      time.Duration
		flows                         uint32
	)
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Print the peers heard on an interface, join/leave events and rejection counters",
		Long: `Listens for coopcc status messages on an interface and prints every join and
leave, and once per second N and the counters by reason (bad MAC, replay, ...).
With --send it also announces itself (with --flows active uploads) so that other
terminals see it. Stop with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if iface == "" || keyFile == "" {
				return errors.New("--iface and --key-file are required (create a key with: coopcc peer keygen > key && chmod 600 key)")
			}
			key, err := peer.LoadKeyFile(keyFile)
			if err != nil {
				return err
			}
			var tr *peer.UDPTransport
			if ipv6 {
				var g netip.Addr
				if group6 != "" {
					if g, err = netip.ParseAddr(group6); err != nil {
						return fmt.Errorf("--group6 %q: %w", group6, err)
					}
				}
				tr, err = peer.ListenMulticast6(iface, port, g)
			} else {
				tr, err = peer.ListenBroadcast4(iface, port)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			node, err := peer.NewNode(peer.NodeConfig{
				Codec:       peer.NewCodec(key, peer.GroupID(group)),
				Transport:   tr,
				Interval:    interval,
				ReceiveOnly: !send,
				Status:      func() peer.Status { return peer.Status{ActiveFlows: flows, Policy: "listen"} },
				Table:       peer.TableConfig{OnEvent: func(e peer.Event) { printEvent(out, e) }},
			})
			if err != nil {
				tr.Close()
				return err
			}
			fmt.Fprintf(out, "listening: %v, group %q (%v), sender id %016x, send=%v\n", tr, group, peer.GroupID(group), node.ID(), send)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			done := make(chan error, 1)
			go func() { done <- node.Run(ctx) }()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case err := <-done:
					return err
				case now := <-tick.C:
					printSummary(out, node, now)
				}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&iface, "iface", "", "interface to listen on (required)")
	f.StringVar(&keyFile, "key-file", "", "group key file: 64 hex digits or 32 raw bytes, mode 600 (required)")
	f.StringVar(&group, "group", "coopcc", "group name (normally the SSID)")
	f.IntVar(&port, "port", peer.DefaultPort, "UDP port")
	f.BoolVar(&ipv6, "ipv6", false, "use IPv6 link-local multicast instead of IPv4 broadcast")
	f.StringVar(&group6, "group6", "", "IPv6 multicast group (default ff02::114)")
	f.BoolVar(&send, "send", false, "also send status messages")
	f.DurationVar(&interval, "interval", peer.DefaultInterval, "send interval with --send")
	f.Uint32Var(&flows, "flows", 0, "active uploads to announce with --send (0 = idle, not counted in N)")
	return cmd
}

func printEvent(w io.Writer, e peer.Event) {
	fmt.Fprintf(w, "%s %-5s %016x (%s) flows=%d cwnd=%d srtt=%v policy=%q\n", e.At.Format("15:04:05.000"), e.Kind, e.Peer, e.Why,
		e.Status.ActiveFlows, e.Status.Cwnd, e.Status.SRTT, e.Status.Policy)
}

func printSummary(w io.Writer, node *peer.Node, now time.Time) {
	c := node.Table().Counters()
	var parts []string
	for _, r := range peer.Reasons() {
		if v := c.ByReason[r]; v > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", strings.ReplaceAll(r.String(), " ", "_"), v))
		}
	}
	slices.Sort(parts)
	fmt.Fprintf(w, "%s N=%d live=%d entries=%d sent=%d %s\n", now.Format("15:04:05.000"), node.N(now),
		len(node.Table().Live(now)), c.Entries, node.Counters().Sent, strings.Join(parts, " "))
}

func newPeerKeygenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen",
		Short: "Print a new random group key (64 hex digits) for --key-file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := peer.NewRandomKey()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), k.Hex())
			return nil
		},
	}
}
