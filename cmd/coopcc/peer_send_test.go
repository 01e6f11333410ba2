package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/peer"
)

func TestPeerSendRefusesOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "101Gbps"}, "at most 100Gbps"},
		{[]string{"--rate", "fast"}, "--rate"},
		{[]string{"--flows", "70000"}, "active flows 70000"},
		{[]string{"--srtt", "61s"}, "srtt"},
		{[]string{"--lo", "9", "--hi", "3"}, "lower bound 9 > upper bound 3"},
		{[]string{}, "--iface and --key-file are required"},
	} {
		_, err := runCLI(t, append([]string{"peer", "send"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("peer send %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestPeerSendIsHeard: `coopcc peer send` in one namespace, a listening
// node in another on the same link: the listener hears a member of the
// group with exactly the lie on the command line (100 Gbit/s, RTT 0, 65,535
// flows) and, after the sender stops, its goodbye.
func TestPeerSendIsHeard(t *testing.T) {
	nettest.RequireRoot(t)
	bin := nettest.CoopccBinary(t)
	a, b := nettest.NewNS(t, "cpsa"), nettest.NewNS(t, "cpsb")
	la, lb := nettest.Veth(t, a, "10.77.232.1/24", b, "10.77.232.2/24")
	keyHex := strings.Repeat("5c", 32)
	keyFile := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(keyFile, []byte(keyHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := peer.ParseKey([]byte(keyHex))
	if err != nil {
		t.Fatal(err)
	}
	var node *peer.Node
	err = b.Do(func() error {
		tr, err := peer.ListenBroadcast4(lb.Dev, peer.DefaultPort)
		if err != nil {
			return err
		}
		node, err = peer.NewNode(peer.NodeConfig{Codec: peer.NewCodec(key, peer.GroupID("lab")), Transport: tr, ReceiveOnly: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = node.Run(ctx) }()

	cmd := a.Command(ctx, bin, "peer", "send", "--iface", la.Dev, "--key-file", keyFile, "--group", "lab",
		"--rate", "100Gbps", "--srtt", "0", "--min-rtt", "0", "--flows", "65535", "--cwnd", "1000000", "--interval", "100ms", "--duration", "2s")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("peer send: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stopped: ") || !strings.Contains(string(out), "sender id ") {
		t.Fatalf("output:\n%s", out)
	}
	c := node.Table().Counters()
	if ok := c.ByReason[peer.OK]; ok < 12 || ok > 25 {
		t.Fatalf("listener accepted %d messages in 2 s at 100 ms: %+v\n%s", ok, c, out)
	}
	// The goodbye removed it; the last status it sent is in the leave event's
	// record, so check the lie through a fresh run that is still going.
	cmd = a.Command(ctx, bin, "peer", "send", "--iface", la.Dev, "--key-file", keyFile, "--group", "lab",
		"--rate", "100Gbps", "--srtt", "0", "--flows", "65535", "--interval", "100ms", "--duration", "3s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Second)
	for {
		live := node.Live(time.Now())
		if len(live) == 1 {
			s := live[0]
			if s.DeliveryRate != peer.MaxRate || s.Capability != peer.MaxRate || s.SRTT != 0 || s.MinRTT != 0 || s.ActiveFlows != peer.MaxActiveFlows || s.Policy != "coop" {
				t.Fatalf("heard %+v", s)
			}
			if node.N(time.Now()) != 2 {
				t.Fatalf("N %d, want 2 (the listener and the sender)", node.N(time.Now()))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live sender after 2 s: %+v", node.Table().Counters())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
