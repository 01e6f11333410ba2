package datapath

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/monitor"
)

// testNet is a client namespace uploading through a router namespace to a
// server namespace. The router's egress towards the server is the
// bottleneck: HTB at rate with a pfifo queue, so drops there are real
// network losses for the client (a rate limit on the client itself would
// only cause local congestion, CWR, never retransmissions).
type testNet struct {
	cli, rtr, srv *nettest.NS
	rtrDev        string
	srvAddr       string
	srvAddr6      string // IPv6 address of the server
	cliDev        string
	srvDev        string
	rtrCliDev     string // the router's end towards the client (downloads' bottleneck)
}

// newTestNet uses 10.77.octet.0/24 (client side) and 10.77.octet+1.0/24
// (server side).
func newTestNet(t *testing.T, octet int, rate string, queue int) *testNet {
	t.Helper()
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	cli := nettest.NewNS(t, "dpc")
	rtr := nettest.NewNS(t, "dpr")
	srv := nettest.NewNS(t, "dps")
	a, b := fmt.Sprintf("10.77.%d", octet), fmt.Sprintf("10.77.%d", octet+1)
	cliEnd, rtrCli := nettest.Veth(t, cli, a+".1/24", rtr, a+".254/24")
	// One MSS per packet (no GSO batches), so that the bottleneck's packet
	// queue counts segments as cwnd does.
	cli.Exec(t, "ip", "link", "set", "dev", cliEnd.Dev, "gso_max_segs", "1")
	toSrv, srvEnd := nettest.Veth(t, rtr, b+".254/24", srv, b+".1/24")
	rtr.Sysctl(t, "net.ipv4.ip_forward", "1")
	cli.Exec(t, "ip", "route", "add", "default", "via", a+".254")
	srv.Exec(t, "ip", "route", "add", "default", "via", b+".254")
	nettest.RateLimit(t, toSrv, rate, queue)
	// The namespaces inherit the host default (bbr here). "cubic" cannot be
	// made the default of a non-initial namespace unless it is listed in the
	// host's net.ipv4.tcp_allowed_congestion_control, so plain-CUBIC flows
	// use iperf3 -C cubic instead.
	// IPv6 on the same path (fd77:<octet>::/64 and fd77:<octet+1>::/64).
	a6, b6 := fmt.Sprintf("fd77:%d::", octet), fmt.Sprintf("fd77:%d::", octet+1)
	rtr.Sysctl(t, "net.ipv6.conf.all.forwarding", "1")
	cli.Exec(t, "ip", "-6", "addr", "add", a6+"1/64", "dev", cliEnd.Dev, "nodad")
	rtr.Exec(t, "ip", "-6", "addr", "add", a6+"fe/64", "dev", rtrCli.Dev, "nodad")
	rtr.Exec(t, "ip", "-6", "addr", "add", b6+"fe/64", "dev", toSrv.Dev, "nodad")
	srv.Exec(t, "ip", "-6", "addr", "add", b6+"1/64", "dev", srvEnd.Dev, "nodad")
	cli.Exec(t, "ip", "-6", "route", "add", "default", "via", a6+"fe")
	srv.Exec(t, "ip", "-6", "route", "add", "default", "via", b6+"fe")
	return &testNet{cli: cli, rtr: rtr, srv: srv, rtrDev: toSrv.Dev, srvAddr: b + ".1", srvAddr6: b6 + "1", cliDev: cliEnd.Dev, srvDev: srvEnd.Dev, rtrCliDev: rtrCli.Dev}
}

// limitDownload makes the router's egress towards the client a bottleneck
// too (HTB at rate, pfifo of queue packets), for downloads.
func (n *testNet) limitDownload(t *testing.T, rate string, queue int) {
	t.Helper()
	nettest.RateLimit(t, nettest.Link{NS: n.rtr, Dev: n.rtrCliDev}, rate, queue)
}

// setQueue changes the bottleneck's pfifo limit (a tiny limit drops a burst
// of packets).
func (n *testNet) setQueue(t *testing.T, limit int) {
	t.Helper()
	n.rtr.Exec(t, "tc", "qdisc", "change", "dev", n.rtrDev, "parent", "1:10", "handle", "10:", "pfifo", "limit", fmt.Sprint(limit))
}

// flowSample is one inet_diag reading of the bulk flow.
type flowSample struct {
	t               time.Time
	cwnd, ssthresh  uint32
	mss             uint32
	srtt            time.Duration
	caState         uint8
	totalRetrans    uint32
	bytesAcked      uint64
	deliveryRateBps uint64
	cc              string
}

// bulkFlow reads, through the monitor (inet_diag), the established
// connection to port with the most acked bytes (iperf3's data connection,
// not its control connection) in ns. It also reports the flow's CC.
func bulkFlow(ns string, port uint16) (flowSample, bool, error) {
	m, err := monitor.New(monitor.Options{Netns: ns, Filter: monitor.Filter{Port: port, States: []uint8{1}}})
	if err != nil {
		return flowSample{}, false, err
	}
	defer m.Close()
	flows, err := m.Snapshot()
	if err != nil {
		return flowSample{}, false, err
	}
	var best *monitor.Flow
	for i := range flows {
		f := &flows[i]
		if f.Dst.Port() != port {
			continue
		}
		if best == nil || f.BytesAcked > best.BytesAcked {
			best = f
		}
	}
	if best == nil {
		return flowSample{}, false, nil
	}
	return flowSample{
		t: time.Now(), cwnd: best.Cwnd, ssthresh: best.Ssthresh, mss: best.MSS,
		srtt: best.SRTT, caState: best.CAState, cc: best.CC,
		totalRetrans: best.TotalRetrans, bytesAcked: best.BytesAcked, deliveryRateBps: best.DeliveryRate,
	}, true, nil
}

// sampler polls bulkFlow every interval until stop is closed.
func sampleFlow(t *testing.T, ns string, port uint16, every time.Duration, stop <-chan struct{}) <-chan []flowSample {
	out := make(chan []flowSample, 1)
	go func() {
		var got []flowSample
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				out <- got
				return
			case <-tk.C:
				s, ok, err := bulkFlow(ns, port)
				if err != nil {
					t.Errorf("sample flow: %v", err)
					out <- got
					return
				}
				if ok {
					got = append(got, s)
				}
			}
		}
	}()
	return out
}

// ccOfFlows returns the congestion control names of established
// connections to port in ns, as `ss -ti` reports them.
func ccOfFlows(t *testing.T, ns *nettest.NS, port int) []string {
	t.Helper()
	out := ns.Exec(t, "ss", "-Htin", "state", "established", fmt.Sprintf("dport = :%d", port))
	var names []string
	for _, f := range strings.Fields(out) {
		for _, known := range []string{"cubic", "coopcc_", "bbr", "reno"} {
			if strings.HasPrefix(f, known) {
				names = append(names, f)
			}
		}
	}
	sort.Strings(names)
	return names
}

func maxCwnd(s []flowSample) uint32 {
	var m uint32
	for _, x := range s {
		m = max(m, x.cwnd)
	}
	return m
}

// heartbeat refreshes d's lease every lease/3 until the test ends.
func heartbeat(t *testing.T, d *Datapath) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(d.Lease() / 3)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if err := d.Heartbeat(); err != nil {
					if !d.isClosed() {
						t.Errorf("heartbeat: %v", err)
					}
					return
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// iperf3Rate returns the receiver-side goodput (bytes/s) of an iperf3 -J report.
func iperf3Rate(t *testing.T, out string) float64 {
	t.Helper()
	var rep struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("parse iperf3 report: %v\n%s", err, out)
	}
	return rep.End.SumReceived.BitsPerSecond / 8
}
