package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/coopcc/coopcc/datapath"
	"github.com/coopcc/coopcc/monitor"
	"github.com/coopcc/coopcc/peer"
	"github.com/coopcc/coopcc/policy"
)

// RealParts returns the parts built from the real packages: the inet_diag
// monitor of the current network namespace, the BPF datapath, the peer
// protocol on the configured interface and the named policy.
func RealParts() Parts {
	return Parts{
		OpenFlows: func(Config) (FlowSource, io.Closer, error) {
			// Established flows only, filtered by the kernel; the agent's
			// own filter picks the managed ones.
			m, err := monitor.New(monitor.Options{Filter: monitor.Filter{States: []uint8{monitor.StateEstablished}}})
			if err != nil {
				return nil, nil, err
			}
			return m, m, nil
		},
		OpenDatapath: func(cfg Config) (Enforcer, error) {
			d, err := datapath.Open(datapath.Options{
				Lease: cfg.Datapath.Lease.Duration, Backend: cfg.Datapath.Backend, SwitchExisting: cfg.Datapath.SwitchExisting,
			})
			if err != nil {
				return nil, err
			}
			if cfg.Datapath.Receive == "off" {
				return d, nil
			}
			r, err := datapath.OpenReceive(datapath.Options{Lease: cfg.Datapath.Lease.Duration})
			if err != nil {
				if cfg.Datapath.Receive == "on" {
					return nil, errors.Join(fmt.Errorf("datapath.receive = \"on\": %w", err), d.Close())
				}
				return d, nil // auto: uploads only (the agent logs the backend)
			}
			return bothSides{send: d, recv: r}, nil
		},
		StartPeers: startPeers,
		NewPolicy:  newPolicy,
	}
}

// newPolicy builds the configured policy with its params decoded strictly.
func newPolicy(cfg Config) (Policy, error) {
	var p policy.Params
	if err := cfg.DecodePolicyParams(&p); err != nil {
		return nil, err
	}
	return policy.New(cfg.Policy.Name, p)
}

// GroupKey loads the group key from the key file or derives it from the
// passphrase.
func GroupKey(g GroupConfig) (peer.Key, error) {
	if g.KeyFile != "" {
		return peer.LoadKeyFile(g.KeyFile)
	}
	return peer.DeriveKey(g.Passphrase, g.ID)
}

func startPeers(ctx context.Context, cfg Config, status func() PeerStatus, log *slog.Logger) (PeerNode, func() error, error) {
	key, err := GroupKey(cfg.Group)
	if err != nil {
		return nil, nil, err
	}
	var tr peer.Transport
	switch cfg.Group.Transport {
	case "ipv6":
		tr, err = peer.ListenMulticast6(cfg.Iface, int(cfg.Group.Port), netip.Addr{})
	default:
		tr, err = peer.ListenBroadcast4(cfg.Iface, int(cfg.Group.Port))
	}
	if err != nil {
		return nil, nil, err
	}
	node, err := peer.NewNode(peer.NodeConfig{
		Codec: peer.NewCodec(key, peer.GroupID(cfg.Group.ID)), Transport: tr, Status: status,
		Interval: cfg.Group.Interval.Duration, Missed: cfg.Group.ExpiryIntervals, Logger: log,
		Table: peer.TableConfig{OnEvent: func(e peer.Event) {
			log.Info("peer "+e.Kind.String(), "peer", fmt.Sprintf("%016x", e.Peer), "why", e.Why,
				"active_flows", e.Status.ActiveFlows, "policy", e.Status.Policy)
		}},
	})
	if err != nil {
		_ = tr.Close()
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	return nodeAdapter{node}, func() error { return <-done }, nil
}

// nodeAdapter exposes a peer.Node as a PeerNode.
type nodeAdapter struct{ n *peer.Node }

func (a nodeAdapter) Live(now time.Time) []PeerStatus { return a.n.Table().Live(now) }
func (a nodeAdapter) N(now time.Time) int             { return a.n.N(now) }

// Counters merges the receive outcomes by reason ("ok", "bad_mac", ...)
// with the send side ("sent", "send_error", ...).
func (a nodeAdapter) Counters() map[string]uint64 {
	tc := a.n.Table().Counters()
	out := make(map[string]uint64, len(tc.ByReason)+4)
	for r, v := range tc.ByReason {
		out["recv_"+metricName(r.String())] = v
	}
	nc := a.n.Counters()
	out["sent"] = nc.Sent
	out["send_error"] = nc.SendErrors
	out["encode_error"] = nc.EncodeErrors
	out["read_error"] = nc.ReadErrors
	return out
}

func metricName(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "_")) }
