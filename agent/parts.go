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

	"github.com/cilium/ebpf"
	"github.com/coopcc/coopcc/datapath"
	"github.com/coopcc/coopcc/monitor"
	"github.com/coopcc/coopcc/peer"
	"github.com/coopcc/coopcc/peer/admit"
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
		OpenDatapath: openRealDatapath,
		Cleanup:      cleanupDatapath,
		StartPeers:   startPeers,
		NewPolicy:    newPolicy,
	}
}

// openRealDatapath opens the BPF datapath with the recovery setup: the
// recorded name, a dead predecessor's leftovers to adopt, the recording
// callback and the step hook.
func openRealDatapath(cfg Config, s DatapathSetup) (Enforcer, error) {
	opts := datapath.Options{
		Lease: cfg.Datapath.Lease.Duration, Backend: cfg.Datapath.Backend, SwitchExisting: cfg.Datapath.SwitchExisting,
		CCName: s.CCName, Original: s.Original, Adopt: s.Adopt, AdoptPrograms: programIDs(s.AdoptSockops),
		Step: s.Step,
	}
	var sent datapath.Loaded
	if s.OnLoaded != nil {
		opts.OnLoaded = func(l datapath.Loaded) error { sent = l; return s.OnLoaded(loadedOf(l)) }
	}
	d, err := datapath.Open(opts)
	if err != nil {
		return nil, err
	}
	if cfg.Datapath.Receive == "off" {
		return d, nil
	}
	r, err := datapath.OpenReceive(datapath.Options{Lease: opts.Lease})
	if err != nil {
		if cfg.Datapath.Receive == "on" {
			return nil, errors.Join(fmt.Errorf("datapath.receive = \"on\": %w", err), d.Close())
		}
		return d, nil // auto: uploads only (the backend in the log and status says so)
	}
	if s.OnLoaded != nil {
		// The receive side's program is a cgroup sockops program: recorded
		// so that a cleanup after a crash detaches it (a crash before this
		// line leaves it to the next start's stale-instance detection).
		if err := s.OnLoaded(withReceive(loadedOf(sent), r.Objects())); err != nil {
			return nil, errors.Join(fmt.Errorf("record the receive side's objects: %w", err), r.Close(), d.Close())
		}
	}
	return bothSides{send: d, recv: r}, nil
}

// withReceive adds the receive side's objects to the send side's record.
func withReceive(l DatapathLoaded, ids datapath.ObjectIDs) DatapathLoaded {
	for _, id := range ids.Programs {
		l.Programs = append(l.Programs, uint32(id))
		l.SockopsProgramIDs = append(l.SockopsProgramIDs, uint32(id))
	}
	for _, id := range ids.Maps {
		l.Maps = append(l.Maps, uint32(id))
	}
	return l
}

// loadedOf converts the datapath's report to the agent's (IDs as uint32).
func loadedOf(l datapath.Loaded) DatapathLoaded {
	out := DatapathLoaded{Backend: l.Backend, CCName: l.CCName, Original: l.Original,
		Programs: []uint32{}, Maps: []uint32{}, SockopsProgramIDs: []uint32{}}
	for _, id := range l.Objects.Programs {
		out.Programs = append(out.Programs, uint32(id))
	}
	for _, id := range l.Objects.Maps {
		out.Maps = append(out.Maps, uint32(id))
	}
	if l.Backend == datapath.BackendSockops {
		out.SockopsProgramIDs = append(out.SockopsProgramIDs, out.Programs...)
	}
	return out
}

func programIDs(ids []uint32) []ebpf.ProgramID {
	out := make([]ebpf.ProgramID, 0, len(ids))
	for _, id := range ids {
		out = append(out, ebpf.ProgramID(id))
	}
	return out
}

// cleanupDatapath removes a dead agent's leftovers from the current
// namespace (datapath.Cleanup) and says what it did.
func cleanupDatapath(l Leftovers) (string, error) {
	res, err := datapath.Cleanup(datapath.Leftovers{Original: l.Original, CCNames: l.CCNames, SockopsPrograms: programIDs(l.SockopsProgramIDs)})
	msg := "default congestion control unchanged"
	if res.DefaultTo != "" {
		msg = fmt.Sprintf("default congestion control %s -> %s", res.DefaultFrom, res.DefaultTo)
	}
	msg += fmt.Sprintf("; %d sockets moved off dead instances to cubic (%d failed); %d sockops programs detached",
		res.Switched.Switched, res.Switched.Failed, res.Detached)
	return msg, err
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
	var tr *peer.UDPTransport
	switch cfg.Group.Transport {
	case "ipv6":
		tr, err = peer.ListenMulticast6(cfg.Iface, int(cfg.Group.Port), netip.Addr{})
	default:
		tr, err = peer.ListenBroadcast4(cfg.Iface, int(cfg.Group.Port))
	}
	if err != nil {
		return nil, nil, err
	}
	filter := attachAdmission(tr, log)
	node, err := peer.NewNode(peer.NodeConfig{
		Codec: peer.NewCodec(key, peer.GroupID(cfg.Group.ID)), Transport: tr, Status: status, Admit: filter.admit,
		Interval: cfg.Group.Interval.Duration, Missed: cfg.Group.ExpiryIntervals, Logger: log, ClockSkew: cfg.Group.ClockSkew,
		Table: peer.TableConfig{OnEvent: func(e peer.Event) {
			msg := MsgPeerJoin // rate-limited by name (DefaultLimits)
			if e.Kind == peer.Leave {
				msg = MsgPeerLeave
			}
			log.Info(msg, "peer", fmt.Sprintf("%016x", e.Peer), "why", e.Why,
				"active_flows", e.Status.ActiveFlows, "policy", e.Status.Policy)
		}},
	})
	if err != nil {
		_ = tr.Close()
		filter.close()
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() {
		err := node.Run(ctx)
		filter.close()
		done <- err
	}()
	return nodeAdapter{node, filter}, func() error { return <-done }, nil
}

// admission is the peer socket's admission filter, or nothing where BPF
// is not permitted (the agent then reads every datagram, as it did without
// the filter: only a flood's cost differs).
type admission struct{ f *admit.Filter }

func attachAdmission(tr *peer.UDPTransport, log *slog.Logger) admission {
	f, err := tr.AttachAdmission(admit.Config{})
	if err != nil {
		log.Warn("peer admission filter not attached: a flood of forged datagrams costs more CPU", "err", err)
		return admission{}
	}
	return admission{f}
}

func (a admission) admit(addr netip.Addr) {
	if a.f != nil {
		_ = a.f.Admit(addr) // a failed update only leaves the source to the budget
	}
}

// dropped is how many datagrams the filter dropped (0 without one).
func (a admission) dropped() uint64 {
	if a.f == nil {
		return 0
	}
	n, _ := a.f.Dropped()
	return n
}

func (a admission) close() {
	if a.f != nil {
		_ = a.f.Close()
	}
}

// nodeAdapter exposes a peer.Node as a PeerNode.
type nodeAdapter struct {
	n      *peer.Node
	filter admission
}

func (a nodeAdapter) ID() uint64                      { return a.n.ID() }
func (a nodeAdapter) Live(now time.Time) []PeerStatus { return a.n.Live(now) }
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
	out["recv_filtered"] = a.filter.dropped()
	return out
}

func metricName(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "_")) }
