package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
)

func runClamp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newClampCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestClampBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--max N is required"},
		{[]string{"--max", "0"}, "at least 1"},
		{[]string{"--max", "5", "--min", "9"}, "must not exceed"},
		{[]string{"--max", "500000"}, "above 100000"},
		{[]string{"--max", "5", "--dst", "nowhere"}, "not an IP address"},
		{[]string{"--max", "5", "--lease", "0s"}, "--lease"},
	} {
		_, err := runClamp(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("clamp %v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("clamp %v: error is not one line: %q", tc.args, err)
		}
	}
}

func defaultCC(t *testing.T, ns *nettest.NS) string {
	t.Helper()
	return strings.TrimSpace(ns.Exec(t, "cat", "/proc/sys/net/ipv4/tcp_congestion_control"))
}

// A clean exit (--for expiry, SIGTERM) restores the namespace's default CC
// and leaves no coopcc congestion control or BPF object behind.
func TestClampCleanExitRestores(t *testing.T) {
	ns := nettest.NewNS(t, "clamp")
	before := defaultCC(t, ns)

	out, err := runClamp(t, "--max", "7", "--min", "2", "--netns", ns.Name, "--for", "700ms")
	if err != nil {
		t.Fatalf("clamp: %v\n%s", err, out)
	}
	for _, want := range []string{"backend struct_ops", "cc coopcc_", "hi 7", "restored"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := defaultCC(t, ns); got != before {
		t.Errorf("default CC after exit %q, want %q", got, before)
	}

	// SIGTERM to the real binary.
	bin := nettest.CoopccBinary(t)
	cmd := exec.Command(bin, "clamp", "--max", "5", "--netns", ns.Name)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasPrefix(defaultCC(t, ns), "coopcc_") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("clamp did not take over the namespace:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	name := defaultCC(t, ns)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("clamp exited with %v:\n%s", err, buf.String())
	}
	if got := defaultCC(t, ns); got != before {
		t.Errorf("default CC after SIGTERM %q, want %q", got, before)
	}
	if !strings.Contains(buf.String(), "restored") {
		t.Errorf("no 'restored' line:\n%s", buf.String())
	}
	// (Other tests may register their own coopcc_ names meanwhile.)
	if avail, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control"); strings.Contains(string(avail), name) {
		t.Errorf("%s still registered: %q", name, avail)
	}
	if _, err := exec.LookPath("bpftool"); err == nil {
		// struct_ops maps are freed after an RCU grace period: poll.
		for i := 0; ; i++ {
			b, _ := exec.Command("bpftool", "map", "show").CombinedOutput()
			if !strings.Contains(string(b), name) {
				break
			}
			if i > 50 {
				t.Errorf("bpftool map show still lists %s:\n%s", name, b)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
