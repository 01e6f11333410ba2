package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartLoggedKeepsTheLogOpen: a process that writes to stdout after its
// ready line, once the caller has moved on, still ends without error and
// its later lines are in the log (the emulator's log used to be closed when
// StartEmu returned, and its exit status became "file already closed").
func TestStartLoggedKeepsTheLogOpen(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "proc.log")
	p := startReady(t, "echo ready; sleep 0.3; echo after the ready line; echo on stderr >&2", logPath)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatalf("process ended with %v, want nil", err)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ready\n", "after the ready line\n", "on stderr\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("log %q lacks %q", b, want)
		}
	}
}

// TestStartLoggedBadCommand: a command that cannot start is an error that
// names it.
func TestStartLoggedBadCommand(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "proc.log")
	_, _, err := startLogged("test process", []string{"/nonexistent/coopcc-emu"}, logPath, "ready", syscall.SIGTERM)
	if err == nil || !strings.Contains(err.Error(), "test process") {
		t.Fatalf("err = %v, want an error naming the process", err)
	}
}

// TestStopAsksAHungProgramForItsStacks: a process that ignores SIGTERM
// gets SIGQUIT before SIGKILL when it is marked dumpOnHang (what a Go
// program writes then, its goroutines' stacks, lands in its log), and
// straight SIGKILL otherwise.
func TestStopAsksAHungProgramForItsStacks(t *testing.T) {
	script := "trap '' TERM; trap 'echo stacks written; exit 2' QUIT; echo ready; while :; do sleep 0.05; done"
	for _, dump := range []bool{true, false} {
		logPath := filepath.Join(t.TempDir(), "proc.log")
		p := startReady(t, script, logPath)
		p.dumpOnHang = dump
		start := time.Now()
		_ = p.Stop(syscall.SIGTERM, 300*time.Millisecond)
		if took := time.Since(start); took > quitGrace+2*time.Second {
			t.Errorf("dumpOnHang %v: Stop took %v", dump, took)
		}
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "stacks written"); got != dump {
			t.Errorf("dumpOnHang %v: log %q, SIGQUIT handled = %v", dump, b, got)
		}
	}
}

// startReady starts the shell script logged to logPath and waits for its
// "ready" line.
func startReady(t *testing.T, script, logPath string) *Proc {
	t.Helper()
	p, ready, err := startLogged("test process", []string{"sh", "-c", script}, logPath, "ready", syscall.SIGTERM)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready.found:
	case <-time.After(5 * time.Second):
		t.Fatal("no ready line within 5 s")
	}
	return p
}
