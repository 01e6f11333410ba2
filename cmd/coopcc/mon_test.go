package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
)

// runCLI runs `coopcc args...` in-process (the binary's exact code path)
// and returns its stdout.
type jsonSnapshot struct {
	Netns string `json:"netns"`
	Flows []struct {
		Src        string `json:"src"`
		Dst        string `json:"dst"`
		CC         string `json:"cc"`
		Cwnd       uint32 `json:"cwnd"`
		SRTT       int64  `json:"srtt_us"`
		BytesAcked uint64 `json:"bytes_acked"`
		Cookie     uint64 `json:"cookie"`
	} `json:"flows"`
}

func monUpload(t *testing.T, d time.Duration) (*nettest.NS, string) {
	t.Helper()
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	cli := nettest.NewNS(t, "cmdmoncli")
	srv := nettest.NewNS(t, "cmdmonsrv")
	cl, sl := nettest.Veth(t, cli, "10.77.203.1/24", srv, "10.77.203.2/24")
	nettest.RateLimit(t, cl, "20mbit", 0)
	// One segment per packet (no 64 KB GSO packets), as on a WLAN.
	cli.Exec(t, "ip", "link", "set", "dev", cl.Dev, "gso_max_segs", "1")
	srv.Iperf3Server(t, 5201)
	cli.Iperf3Client(t, sl.Addr, 5201, d, "-C", "cubic")
	return cli, sl.Addr
}

func TestMonOnceJSONNetns(t *testing.T) {
	cli, server := monUpload(t, 8*time.Second)
	snap := func() (uint64, jsonSnapshot) {
		out, err := runCLI(t, "mon", "--once", "--json", "--netns", cli.Name, "--dst", server, "--port", "5201")
		if err != nil {
			t.Fatalf("coopcc mon: %v\n%s", err, out)
		}
		var s jsonSnapshot
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		var best uint64
		for _, f := range s.Flows {
			best = max(best, f.BytesAcked)
		}
		return best, s
	}
	var first uint64
	var s jsonSnapshot
	for deadline := time.Now().Add(5 * time.Second); first < 100_000; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no upload flow after 5 s: %+v", s)
		}
		first, s = snap()
	}
	if s.Netns != cli.Name {
		t.Errorf("netns %q, want %q", s.Netns, cli.Name)
	}
	for _, f := range s.Flows {
		if f.BytesAcked == first && (f.CC != "cubic" || f.Cwnd == 0 || f.SRTT <= 0 || !strings.HasSuffix(f.Dst, ":5201")) {
			t.Errorf("flow %+v: want cc cubic, cwnd > 0, srtt_us > 0", f)
		}
	}
	time.Sleep(time.Second)
	second, s2 := snap()
	if second < first+500_000 {
		t.Errorf("bytes_acked %d -> %d in 1 s: not growing at 20 Mbit/s (%+v)", first, second, s2)
	}
}

func TestMonRecordCSV(t *testing.T) {
	cli, _ := monUpload(t, 6*time.Second)
	path := filepath.Join(t.TempDir(), "flows.csv")
	time.Sleep(500 * time.Millisecond)
	if out, err := runCLI(t, "mon", "--netns", cli.Name, "--port", "5201", "--record", path, "--interval", "100ms", "--duration", "1s"); err != nil {
		t.Fatalf("coopcc mon --record: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "t_s,netns,src,dst,cc,cwnd,") {
		t.Fatalf("header %q", lines[0])
	}
	// 10 polls of >= 1 flow (data + control connection).
	if len(lines) < 1+8 {
		t.Fatalf("%d rows in 1 s at 100 ms:\n%s", len(lines)-1, b)
	}
	if !strings.Contains(lines[len(lines)-1], ","+cli.Name+",") || !strings.Contains(string(b), ",cubic,") {
		t.Errorf("rows lack the netns or cc:\n%s", lines[len(lines)-1])
	}
}

func TestMonBadInput(t *testing.T) {
	nettest.RequireRoot(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mon", "--once", "--netns", "coopcc-no-such-netns"}, `unknown network namespace "coopcc-no-such-netns"`},
		{[]string{"mon", "--once", "--state", "bogus"}, `--state "bogus": unknown TCP state`},
		{[]string{"mon", "--once", "--dst", "10.1.2"}, `--dst "10.1.2": not an address or prefix`},
		{[]string{"mon", "--json"}, "--json needs --once"},
		{[]string{"mon", "--interval", "0s"}, "--interval 0s: must be positive"},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got error %v, want one line containing %q", tc.args, err, tc.want)
		}
	}
}

func TestMonTraceRecord(t *testing.T) {
	cli, _ := monUpload(t, 6*time.Second)
	path := filepath.Join(t.TempDir(), "acks.csv")
	time.Sleep(300 * time.Millisecond)
	if out, err := runCLI(t, "mon", "--trace", "--netns", cli.Name, "--port", "5201", "--record", path, "--duration", "1s"); err != nil {
		t.Fatalf("coopcc mon --trace: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "t_s,netns,src,dst,cookie,cwnd,ssthresh,srtt_us,snd_una,snd_nxt,") {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines) < 200 {
		t.Fatalf("%d ACK events in 1 s of a 20 Mbit/s upload, want >= 200", len(lines)-1)
	}
}
