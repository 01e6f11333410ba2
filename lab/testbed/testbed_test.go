package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/vishvananda/netlink"
)

// TestTestbedVeth builds a two-station testbed over veth, sets and reads
// back per-namespace sysctls, runs an iperf3 upload through it, and checks
// that Close removes every namespace and process.
func TestTestbedVeth(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	tb, err := New(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	if err := tb.ConnectVeth(); err != nil {
		t.Fatal(err)
	}
	sta1, srv := tb.Stations[0], tb.Server
	checkPermanentNeighbour(t, sta1, srv)
	checkPermanentNeighbour(t, srv, tb.Stations[1])
	if err := tb.SetSysctls(sta1, [][2]string{{"net.ipv4.tcp_congestion_control", "bbr"}}); err != nil {
		t.Fatal(err)
	}
	if err := tb.SetSysctls(tb.Stations[1], [][2]string{{"net.ipv4.tcp_congestion_control", "reno"}}); err != nil {
		t.Fatal(err)
	}
	sys := tb.ReadSysctls("net.ipv4.tcp_congestion_control")
	if sys["sta1"]["net.ipv4.tcp_congestion_control"] != "bbr" || sys["sta2"]["net.ipv4.tcp_congestion_control"] != "reno" {
		t.Fatalf("sysctls per namespace: %v / %v", sys["sta1"], sys["sta2"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server, err := tb.Exec(srv, "iperf3 server", []string{"iperf3", "-s", "-p", "5301"}, nil, nil, syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	if err := server.WaitListen(ctx, 5301, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	client, err := tb.Exec(sta1, "iperf3 client", []string{"iperf3", "-c", srv.Addr.String(), "-p", "5301", "-t", "1", "-J", "-C", "cubic"}, &out, &out, syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Wait(ctx); err != nil {
		t.Fatalf("iperf3 client: %v\n%s", err, out.String())
	}
	var rep struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			SenderTCPCongestion string `json:"sender_tcp_congestion"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("iperf3 JSON: %v", err)
	}
	if rep.End.SumReceived.BitsPerSecond <= 0 || rep.End.SenderTCPCongestion != "cubic" {
		t.Fatalf("iperf3 result: %+v", rep.End)
	}
	names := append([]string{tb.hub}, tb.created...)
	pid := server.cmd.Process.Pid
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(netnsDir, n)); err == nil {
			t.Errorf("namespace %s left after Close", n)
		}
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("iperf3 server %d still runs after Close", pid)
	}
}

// checkPermanentNeighbour fails unless nd's neighbour table holds a
// permanent entry for other's address with other's link-layer address.
func checkPermanentNeighbour(t *testing.T, nd, other Node) {
	t.Helper()
	var mac net.HardwareAddr
	if err := withHandle(other.Netns, func(h *netlink.Handle) error {
		l, err := h.LinkByName(other.Iface)
		if err == nil {
			mac = l.Attrs().HardwareAddr
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := withHandle(nd.Netns, func(h *netlink.Handle) error {
		l, err := h.LinkByName(nd.Iface)
		if err != nil {
			return err
		}
		neighs, err := h.NeighList(l.Attrs().Index, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, n := range neighs {
			if n.IP.Equal(other.Addr.AsSlice()) {
				if n.State&netlink.NUD_PERMANENT == 0 || n.HardwareAddr.String() != mac.String() {
					return fmt.Errorf("%s's entry for %s: state %#x, %s (want permanent, %s)", nd.Name, other.Name, n.State, n.HardwareAddr, mac)
				}
				return nil
			}
		}
		return fmt.Errorf("%s has no neighbour entry for %s (%s)", nd.Name, other.Name, other.Addr)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestClean removes a namespace whose owner is gone and keeps one whose
// owner runs.
func TestClean(t *testing.T) {
	nettest.RequireRoot(t)
	dead := fmt.Sprintf("%s%d-1-sta1", NamePrefix, 999999999)
	live := newPrefix() + "-sta1"
	for _, n := range []string{dead, live} {
		if err := createNetns(n); err != nil {
			t.Fatal(err)
		}
		n := n
		t.Cleanup(func() { _ = deleteNetns(n) })
	}
	ls, err := Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, l := range ls {
		if l.Name == dead || l.Name == live {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("Leftovers found %d of 2: %+v", found, ls)
	}
	removed := cleanOwn(t, dead, live)
	if !strings.Contains(strings.Join(removed, " "), dead) {
		t.Errorf("Clean did not remove %s: %v", dead, removed)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, live)); err != nil {
		t.Errorf("Clean removed %s, whose owner (this process) runs: %v", live, err)
	}
}
