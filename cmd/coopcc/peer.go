package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/peer"
	"github.com/spf13/cobra"
)

func newPeerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "peer",
		Short: "Debug the cooperation protocol (docs/protocol.md)",
	}
	cmd.AddCommand(newPeerListenCmd(), newPeerKeygenCmd(), newPeerDecodeCmd(), newPeerEncodeCmd(), newPeerSendCmd())
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
			tr, err := openPeerTransport(iface, port, ipv6, group6)
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
			ctx, stop := untilSignal(cmd.Context(), 0)
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

// openPeerTransport opens the peer transport of listen and send: IPv4
// broadcast, or with ipv6 link-local multicast on group6 ("" = the default
// group).
func openPeerTransport(iface string, port int, ipv6 bool, group6 string) (*peer.UDPTransport, error) {
	if !ipv6 {
		return peer.ListenBroadcast4(iface, port)
	}
	var g netip.Addr
	if group6 != "" {
		var err error
		if g, err = netip.ParseAddr(group6); err != nil {
			return nil, fmt.Errorf("--group6 %q: %w", group6, err)
		}
	}
	return peer.ListenMulticast6(iface, port, g)
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

// peerCodec builds the codec of `peer decode` / `peer encode` from a key file
// or, without one, from $COOPCC_PASSPHRASE (the agent's group.passphrase).
func peerCodec(keyFile, group string) (*peer.Codec, error) {
	var (
		key peer.Key
		err error
	)
	switch pass := os.Getenv("COOPCC_PASSPHRASE"); {
	case keyFile != "":
		key, err = peer.LoadKeyFile(keyFile)
	case pass != "":
		key, err = peer.DeriveKey(pass, group)
	default:
		return nil, errors.New("--key-file is required (or set COOPCC_PASSPHRASE)")
	}
	if err != nil {
		return nil, err
	}
	return peer.NewCodec(key, peer.GroupID(group)), nil
}

func newPeerDecodeCmd() *cobra.Command {
	var keyFile, group string
	cmd := &cobra.Command{
		Use:   "decode [HEX...]",
		Short: "Check and decode status messages given in hex (arguments, or one per line on stdin) into JSON",
		Long: `Decodes coopcc status messages (docs/protocol.md) given as hex, e.g. copied
from a packet capture, with the group's key: one JSON line per message, the
message's fields in the form of the protocol's test vectors
(peer/testdata/vectors.json), or {"reason": ..., "error": ...} for a message
that is rejected (bad MAC, wrong group, malformed, ...); the exit status is 1
when any message was rejected. Replay and clock rules are the receiver's
table's, not the decoder's: they are not checked here.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := peerCodec(keyFile, group)
			if err != nil {
				return err
			}
			msgs := args
			if len(msgs) == 0 {
				sc := bufio.NewScanner(cmd.InOrStdin())
				sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
				for sc.Scan() {
					if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
						msgs = append(msgs, line)
					}
				}
				if err := sc.Err(); err != nil {
					return err
				}
			}
			out := json.NewEncoder(cmd.OutOrStdout())
			out.SetEscapeHTML(false)
			rejected := 0
			for _, h := range msgs {
				msg, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(h), "0x"))
				if err != nil {
					return fmt.Errorf("message %.20q…: not hex: %w", h, err)
				}
				s, err := c.Decode(msg)
				if err != nil {
					rejected++
					if err := out.Encode(struct {
						Reason string `json:"reason"`
						Error  string `json:"error"`
					}{peer.ReasonOf(err).String(), err.Error()}); err != nil {
						return err
					}
					continue
				}
				if err := out.Encode(peer.FieldsOf(s)); err != nil {
					return err
				}
			}
			if rejected > 0 {
				cmd.SilenceUsage = true
				return fmt.Errorf("%d of %d messages rejected", rejected, len(msgs))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&keyFile, "key-file", "", "group key file: 64 hex digits or 32 raw bytes, mode 600 (or $COOPCC_PASSPHRASE)")
	f.StringVar(&group, "group", "coopcc", "group name (normally the SSID)")
	return cmd
}

func newPeerEncodeCmd() *cobra.Command {
	var keyFile, group string
	cmd := &cobra.Command{
		Use:   "encode",
		Short: "Encode JSON status fields read from stdin (the decode form) into authenticated messages, one hex line each",
		Long: `Reads JSON objects in the form "coopcc peer decode" prints (the protocol's
test vectors' "fields") from stdin and prints each as a complete status message
in hex, authenticated with the group's key. The inverse of decode: a message
decoded and encoded again is the same bytes (unless it carried unknown TLVs).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := peerCodec(keyFile, group)
			if err != nil {
				return err
			}
			dec := json.NewDecoder(cmd.InOrStdin())
			dec.DisallowUnknownFields()
			for n := 1; ; n++ {
				var f peer.Fields
				if err := dec.Decode(&f); errors.Is(err, io.EOF) {
					if n == 1 {
						return errors.New("no JSON object on stdin")
					}
					return nil
				} else if err != nil {
					return fmt.Errorf("object %d: %w", n, err)
				}
				s, err := f.Status()
				if err != nil {
					return fmt.Errorf("object %d: %w", n, err)
				}
				msg, err := c.Encode(s)
				if err != nil {
					return fmt.Errorf("object %d: %w", n, err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), hex.EncodeToString(msg))
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&keyFile, "key-file", "", "group key file: 64 hex digits or 32 raw bytes, mode 600 (or $COOPCC_PASSPHRASE)")
	f.StringVar(&group, "group", "coopcc", "group name (normally the SSID)")
	return cmd
}

// sendFlags are the flags of `coopcc peer send`.
type sendFlags struct {
	iface, keyFile, group, group6 string
	port                          int
	ipv6, noGoodbye               bool
	interval, duration            time.Duration
	rate, capability              string
	srtt, minRTT                  time.Duration
	flows, cwnd, lo, hi           uint32
	demand                        uint64
	appLimited                    bool
	policy                        string
}

func newPeerSendCmd() *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Broadcast a chosen status as a group member (tests: an insider who lies)",
		Long: `Joins the group with the key like an agent (a fresh random sender id) and
broadcasts the status given by the flags every --interval until Ctrl-C, SIGTERM
or --duration, then (unless --no-goodbye) says goodbye. Nothing is measured:
the status is whatever the flags say, so a key holder can report, e.g.,
--rate 100Gbps --srtt 0 --flows 65535 (docs/protocol.md §8). Messages are
built by the peer package's node and encoder, exactly as an agent's; values
are clamped into the protocol's ranges (docs/protocol.md, "Message").
The lab's insider fault runs it (docs/scenarios.md, Faults).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.status()
			if err != nil {
				return err
			}
			if f.iface == "" || f.keyFile == "" {
				return errors.New("--iface and --key-file are required")
			}
			key, err := peer.LoadKeyFile(f.keyFile)
			if err != nil {
				return err
			}
			tr, err := openPeerTransport(f.iface, f.port, f.ipv6, f.group6)
			if err != nil {
				return err
			}
			node, err := peer.NewNode(peer.NodeConfig{
				Codec: peer.NewCodec(key, peer.GroupID(f.group)), Transport: tr, Interval: f.interval,
				Status: func() peer.Status { return st }, NoGoodbye: f.noGoodbye,
			})
			if err != nil {
				tr.Close()
				return err
			}
			out := cmd.OutOrStdout()
			c := st.Clamp()
			fmt.Fprintf(out, "sending: %v, group %q, sender id %016x, every %v: flows %d, cwnd %d, srtt %v, min rtt %v, delivery rate %d B/s, capability %d B/s, lo %d, hi %d, policy %q\n",
				tr, f.group, node.ID(), f.interval, c.ActiveFlows, c.Cwnd, c.SRTT, c.MinRTT, c.DeliveryRate, c.Capability, c.Lo, c.Hi, c.Policy)
			ctx, stop := untilSignal(cmd.Context(), f.duration)
			defer stop()
			err = node.Run(ctx)
			fmt.Fprintf(out, "stopped: %d messages sent, %d send errors\n", node.Counters().Sent, node.Counters().SendErrors)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.iface, "iface", "", "interface to send on (required)")
	fl.StringVar(&f.keyFile, "key-file", "", "group key file: 64 hex digits or 32 raw bytes (required)")
	fl.StringVar(&f.group, "group", "coopcc", "group name (normally the SSID)")
	fl.IntVar(&f.port, "port", peer.DefaultPort, "UDP port")
	fl.BoolVar(&f.ipv6, "ipv6", false, "use IPv6 link-local multicast instead of IPv4 broadcast")
	fl.StringVar(&f.group6, "group6", "", "IPv6 multicast group (default ff02::114)")
	fl.DurationVar(&f.interval, "interval", peer.DefaultInterval, "send interval (± 10 % jitter)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (0 = until Ctrl-C or SIGTERM)")
	fl.BoolVar(&f.noGoodbye, "no-goodbye", false, "stop without the goodbye message (peers expire the sender instead)")
	fl.StringVar(&f.rate, "rate", "0", "reported delivery rate, e.g. 100Gbps, 20Mbps (at most 100Gbps)")
	fl.StringVar(&f.capability, "capability", "", "reported throughput when alone (default: --rate)")
	fl.DurationVar(&f.srtt, "srtt", 0, "reported smoothed RTT (0 = unknown)")
	fl.DurationVar(&f.minRTT, "min-rtt", 0, "reported minimum RTT (0 = unknown)")
	fl.Uint32Var(&f.flows, "flows", 1, "reported active uploads (0 = idle, not counted in N; at most 65535)")
	fl.Uint32Var(&f.cwnd, "cwnd", 10, "reported aggregate cwnd, segments")
	fl.Uint32Var(&f.lo, "lo", 0, "reported lower bound, segments (0 = none)")
	fl.Uint32Var(&f.hi, "hi", 0, "reported upper bound, segments (0 = none)")
	fl.Uint64Var(&f.demand, "demand", 0, "reported bytes waiting to be sent")
	fl.BoolVar(&f.appLimited, "app-limited", false, "report the uploads as application-limited")
	fl.StringVar(&f.policy, "policy", "coop", "reported policy name")
	return cmd
}

// status is the Status the flags describe; values outside the protocol's
// ranges are refused, not clamped, so that what is sent is what was asked.
func (f sendFlags) status() (peer.Status, error) {
	toBps := func(name, v string) (uint64, error) {
		r, err := scenario.ParseRate(v)
		if err != nil {
			return 0, fmt.Errorf("--%s: %w", name, err)
		}
		b := uint64(float64(r) / 8)
		if b > peer.MaxRate {
			return 0, fmt.Errorf("--%s %s: at most 100Gbps (the protocol's maximum)", name, v)
		}
		return b, nil
	}
	rate, err := toBps("rate", f.rate)
	if err != nil {
		return peer.Status{}, err
	}
	capab := rate
	if f.capability != "" {
		if capab, err = toBps("capability", f.capability); err != nil {
			return peer.Status{}, err
		}
	}
	st := peer.Status{ActiveFlows: f.flows, Cwnd: f.cwnd, SRTT: f.srtt, MinRTT: f.minRTT, DeliveryRate: rate,
		Capability: capab, Demand: f.demand, AppLimited: f.appLimited, Lo: f.lo, Hi: f.hi, Policy: f.policy}
	// The header fields are the node's; fill placeholders to validate the rest.
	chk := st
	chk.Sender, chk.Seq, chk.SentAt = 1, 1, time.Now()
	if err := chk.Validate(); err != nil {
		return peer.Status{}, fmt.Errorf("status out of the protocol's range: %w", err)
	}
	return st, nil
}
