package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/coopcc/coopcc/schema"
)

// Node is one network namespace of the testbed: a station or the server.
type Node struct {
	Name  string     // "sta1".."staN" or "srv"
	Netns string     // <prefix>-<name>
	Iface string     // the interface towards the AP
	Addr  netip.Addr // its IPv4 address
}

// Backends: how the stations reach the server.
const (
	BackendEmu  = "emu"  // the WLAN emulator (coopcc emu run) with TAPs
	BackendVeth = "veth" // a plain bridge over veth pairs: no WLAN, no delay (development and fallback)
)

// Addressing inside every testbed (namespaces are private, so runs never clash).
const (
	subnetPrefix = "10.77.200."
	serverHost   = 254
	stationIface = "wlan0"
	serverIface  = "eth0"
)

// Testbed is the set of namespaces, links and processes of one run. Close
// removes everything it created, whatever state it is in.
type Testbed struct {
	Prefix   string
	Stations []Node
	Server   Node
	hub      string   // veth backend: the namespace holding the bridge
	created  []string // namespaces to delete
	emu      *Proc
	procsMu  sync.Mutex // Exec runs on the clients' and the faults' goroutines
	procs    []*Proc    // agents, iperf3 servers and clients, insiders
	closed   bool
}

// MaxStations is the most stations a testbed has (the scenario language's
// limit on terminals, scenario.MaxTerminals).
const MaxStations = 200

// New creates the namespaces of a run with n stations and a server, with
// loopback up and nothing else. On error everything created is removed.
func New(n int) (*Testbed, error) {
	if n < 1 || n > MaxStations {
		return nil, fmt.Errorf("testbed: %d stations, want 1..%d", n, MaxStations)
	}
	tb := &Testbed{Prefix: newPrefix()}
	for k := 1; k <= n; k++ {
		name := fmt.Sprintf("sta%d", k)
		tb.Stations = append(tb.Stations, Node{Name: name, Netns: tb.Prefix + "-" + name, Iface: stationIface,
			Addr: netip.MustParseAddr(subnetPrefix + strconv.Itoa(k))})
	}
	tb.Server = Node{Name: schema.ServerName, Netns: tb.Prefix + "-" + schema.ServerName, Iface: serverIface,
		Addr: netip.MustParseAddr(subnetPrefix + strconv.Itoa(serverHost))}
	for _, nd := range tb.Nodes() {
		if err := createNetns(nd.Netns); err != nil {
			tb.Close()
			return nil, err
		}
		tb.created = append(tb.created, nd.Netns)
	}
	return tb, nil
}

// Nodes returns the stations and then the server.
func (tb *Testbed) Nodes() []Node { return append(append([]Node(nil), tb.Stations...), tb.Server) }

// Node returns the node by name ("sta3", "srv").
func (tb *Testbed) Node(name string) (Node, bool) {
	for _, nd := range tb.Nodes() {
		if nd.Name == name {
			return nd, true
		}
	}
	return Node{}, false
}

// SetSysctls sets sysctls in one node's namespace.
func (tb *Testbed) SetSysctls(nd Node, kv [][2]string) error { return setSysctls(nd.Netns, kv) }

// ReadSysctls reads the keys in every namespace, by node name; unreadable
// keys are left out.
func (tb *Testbed) ReadSysctls(keys ...string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, nd := range tb.Nodes() {
		if m, err := readSysctls(nd.Netns, keys); err == nil {
			out[nd.Name] = m
		}
	}
	return out
}

// ConnectVeth joins every node to a bridge in a hub namespace through veth
// pairs (no emulation: line rate, no delay), then addresses the interfaces.
func (tb *Testbed) ConnectVeth() error {
	tb.hub = tb.Prefix + "-ap"
	if err := createNetns(tb.hub); err != nil {
		return err
	}
	tb.created = append(tb.created, tb.hub)
	hubNs, err := netns.GetFromName(tb.hub)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", tb.hub, err)
	}
	defer hubNs.Close()
	hub, err := netlink.NewHandleAt(hubNs)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", tb.hub, err)
	}
	defer hub.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	if err := hub.LinkAdd(br); err != nil {
		return fmt.Errorf("add bridge in %s: %w", tb.hub, err)
	}
	if err := hub.LinkSetUp(br); err != nil {
		return fmt.Errorf("set bridge up in %s: %w", tb.hub, err)
	}
	for _, nd := range tb.Nodes() {
		ns, err := netns.GetFromName(nd.Netns)
		if err != nil {
			return fmt.Errorf("open namespace %s: %w", nd.Netns, err)
		}
		la := netlink.NewLinkAttrs()
		la.Name = nd.Iface
		la.Namespace = netlink.NsFd(int(ns))
		veth := &netlink.Veth{LinkAttrs: la, PeerName: nd.Name, PeerNamespace: netlink.NsFd(int(hubNs))}
		err = netlink.LinkAdd(veth)
		ns.Close()
		if err != nil {
			return fmt.Errorf("add veth %s/%s: %w", nd.Netns, nd.Iface, err)
		}
		peer, err := hub.LinkByName(nd.Name)
		if err != nil {
			return fmt.Errorf("find veth peer %s in %s: %w", nd.Name, tb.hub, err)
		}
		if err := hub.LinkSetMaster(peer, br); err != nil {
			return fmt.Errorf("attach %s to the bridge: %w", nd.Name, err)
		}
		if err := hub.LinkSetUp(peer); err != nil {
			return fmt.Errorf("set %s up in %s: %w", nd.Name, tb.hub, err)
		}
	}
	return tb.addressAll()
}

// addressAll gives every node's interface its address and brings it up,
// then writes every other node's link-layer address into its neighbour table
// as a permanent entry. Without that, a terminal that starts while the AP's
// queue holds seconds of ACKs cannot resolve the server (ARP gives up after
// 3 tries 1 s apart): "No route to host". The papers' terminals were
// associated and connected before they measured.
func (tb *Testbed) addressAll() error {
	nodes := tb.Nodes()
	macs := make([]net.HardwareAddr, len(nodes))
	for i, nd := range nodes {
		mac, err := addressIface(nd)
		if err != nil {
			return err
		}
		macs[i] = mac
	}
	for i, nd := range nodes {
		if err := addNeighbours(nd, nodes, macs, i); err != nil {
			return err
		}
	}
	return nil
}

// withHandle runs fn with a netlink handle in namespace ns.
func withHandle(ns string, fn func(*netlink.Handle) error) error {
	nsh, err := netns.GetFromName(ns)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", ns, err)
	}
	defer nsh.Close()
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", ns, err)
	}
	defer h.Close()
	return fn(h)
}

// addressIface addresses nd's interface, brings it up and returns its
// link-layer address.
func addressIface(nd Node) (net.HardwareAddr, error) {
	var mac net.HardwareAddr
	err := withHandle(nd.Netns, func(h *netlink.Handle) error {
		l, err := h.LinkByName(nd.Iface)
		if err != nil {
			return fmt.Errorf("find %s in %s: %w", nd.Iface, nd.Netns, err)
		}
		addr := &netlink.Addr{IPNet: netipToIPNet(netip.PrefixFrom(nd.Addr, 24))}
		if err := h.AddrAdd(l, addr); err != nil {
			return fmt.Errorf("address %s in %s: %w", nd.Iface, nd.Netns, err)
		}
		if err := h.LinkSetUp(l); err != nil {
			return fmt.Errorf("set %s up in %s: %w", nd.Iface, nd.Netns, err)
		}
		mac = l.Attrs().HardwareAddr
		return nil
	})
	return mac, err
}

// addNeighbours adds a permanent neighbour entry in nodes[self]'s namespace
// for every other node.
func addNeighbours(nd Node, nodes []Node, macs []net.HardwareAddr, self int) error {
	return withHandle(nd.Netns, func(h *netlink.Handle) error {
		l, err := h.LinkByName(nd.Iface)
		if err != nil {
			return fmt.Errorf("find %s in %s: %w", nd.Iface, nd.Netns, err)
		}
		for j, other := range nodes {
			if j == self || len(macs[j]) == 0 {
				continue
			}
			n := &netlink.Neigh{LinkIndex: l.Attrs().Index, Family: netlink.FAMILY_V4,
				State: netlink.NUD_PERMANENT, IP: other.Addr.AsSlice(), HardwareAddr: macs[j]}
			if err := h.NeighSet(n); err != nil {
				return fmt.Errorf("neighbour %s in %s: %w", other.Name, nd.Netns, err)
			}
		}
		return nil
	})
}

// StartEmu starts the emulator (argv built by the caller) and waits until
// it prints "ready", then addresses the TAPs it moved into the namespaces.
func (tb *Testbed) StartEmu(ctx context.Context, argv []string, logPath string, timeout time.Duration) error {
	// GOTRACEBACK=crash: a hang's SIGQUIT (Proc.kill) writes every
	// thread's stack, the runtime's own too, not only the goroutines'.
	p, ready, err := startLogged("emulator", argv, []string{"GOTRACEBACK=crash"}, logPath, "ready", syscall.SIGTERM)
	if err != nil {
		return err
	}
	p.realtime, p.dumpOnHang = true, true
	tb.emu = p
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ready.found:
	case <-p.done:
		return fmt.Errorf("emulator exited before it was ready: %v: %s", p.err, TailFile(logPath, 5))
	case <-t.C:
		return fmt.Errorf("emulator not ready after %v: %s", timeout, TailFile(logPath, 5))
	case <-ctx.Done():
		return ctx.Err()
	}
	return tb.addressAll()
}

// emuStopGrace is how long the emulator is given after SIGTERM to write
// its statistics and exit (StopEmu, Close) before it is taken for hung.
const emuStopGrace = 10 * time.Second

// StopEmu stops the emulator with SIGTERM so it writes its statistics.
func (tb *Testbed) StopEmu() error {
	if tb.emu == nil {
		return nil
	}
	err := tb.emu.Stop(syscall.SIGTERM, emuStopGrace)
	if tb.emu.starved {
		return fmt.Errorf("emulator starved: no exit within %v of SIGTERM at its real-time priority, exited once demoted to ordinary scheduling (its threads' state is in its log): %v", emuStopGrace, err)
	}
	if tb.emu.forced {
		return fmt.Errorf("emulator hung: no exit within %v of SIGTERM, stopped by SIGQUIT (its threads' state and its goroutines' stacks are in its log) or SIGKILL: %v", emuStopGrace, err)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		return fmt.Errorf("emulator killed: %w", err)
	}
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	return nil
}

// Exec starts argv inside a node's namespace (`ip netns exec`), output to
// the given writers. The testbed stops it on Close.
func (tb *Testbed) Exec(nd Node, name string, argv []string, stdout, stderr io.Writer, deathSig syscall.Signal) (*Proc, error) {
	full := append([]string{"ip", "netns", "exec", nd.Netns}, argv...)
	p, err := startProc(name, full, nil, stdout, stderr, deathSig)
	if err != nil {
		return nil, err
	}
	tb.procsMu.Lock()
	tb.procs = append(tb.procs, p)
	tb.procsMu.Unlock()
	return p, nil
}

// StopProcs stops the processes Exec started (agents, iperf3 servers and
// clients: SIGTERM, then SIGKILL after a grace period), newest first.
func (tb *Testbed) StopProcs() {
	tb.procsMu.Lock()
	procs := slices.Clone(tb.procs)
	tb.procsMu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		_ = procs[i].Stop(syscall.SIGTERM, 5*time.Second)
	}
}

// Close stops every process (clients and agents first, then the emulator)
// and deletes every namespace it created. Safe to call more than once.
func (tb *Testbed) Close() error {
	if tb.closed {
		return nil
	}
	tb.closed = true
	tb.StopProcs()
	if tb.emu != nil {
		_ = tb.emu.Stop(syscall.SIGTERM, emuStopGrace)
	}
	var errs []error
	for _, ns := range tb.created {
		if err := deleteNetns(ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
