package datapath

import (
	"net/netip"
	"testing"
	"time"
)

func TestUpperBoundHolds(t *testing.T) {
	n := newTestNet(t, 61, "10mbit", 200)
	n.srv.Iperf3Server(t, 5201)
	d, err := Open(Options{Netns: n.cli.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Set(netip.Addr{}, Bounds{Hi: 7}); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, d)
	stop := make(chan struct{})
	samples := sampleFlow(t, n.cli.Name, 5201, 50*time.Millisecond, stop)
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 4*time.Second)
	time.Sleep(2 * time.Second)
	t.Log(ccOfFlows(t, n.cli, 5201))
	out, err := run.Wait()
	close(stop)
	s := <-samples
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	t.Logf("samples %d max cwnd %d", len(s), maxCwnd(s))
	for _, x := range s[len(s)/2:] {
		t.Logf("%+v", x)
	}
	c, err := d.Counters()
	t.Log(c, err)
}
