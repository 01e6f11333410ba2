package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	_, _, err := startLogged("test process", []string{"/nonexistent/coopcc-emu"}, nil, logPath, "ready", syscall.SIGTERM)
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
		// Its threads' scheduling state first: the shell's one thread,
		// sleeping between its polls, and the CPU time it used.
		if got := strings.Contains(string(b), "lab: the threads of") && threadLine.Match(b); got != dump {
			t.Errorf("dumpOnHang %v: log %q, threads reported = %v", dump, b, got)
		}
		if p.starved {
			t.Errorf("dumpOnHang %v: an ordinary process taken for starved", dump)
		}
	}
}

// threadLine is the shell's thread in writeSchedReport's list: sleeping
// (between its polls) or running, ordinary scheduling.
var threadLine = regexp.MustCompile(`(?m)^  \d+ sh +[SR] normal/0 used \S+ of 1s, cpu \d+$`)

// TestStopTellsAStarvedRealtimeProcessFromAHungOne: a SCHED_FIFO process
// that does not answer SIGTERM within the grace is demoted to ordinary
// scheduling and given demoteGrace to act on it; one that then exits was
// starved (Proc.starved), not hung, and is neither asked for its stacks nor
// killed. The script stands in for a starved emulator: it ignores SIGTERM
// while it runs SCHED_FIFO and ends once it does not.
func TestStopTellsAStarvedRealtimeProcessFromAHungOne(t *testing.T) {
	if _, err := exec.LookPath("chrt"); err != nil {
		t.Skip("no chrt (util-linux)")
	}
	logPath := filepath.Join(t.TempDir(), "proc.log")
	script := "trap '' TERM; trap 'echo stacks written; exit 2' QUIT; echo ready; while chrt -p $$ | grep -q FIFO; do sleep 0.05; done; echo demoted"
	p, ready, err := startLogged("test process", []string{"chrt", "-f", "1", "sh", "-c", script}, nil, logPath, "ready", syscall.SIGTERM)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready.found:
	case <-time.After(5 * time.Second):
		t.Skipf("no ready line within 5 s (SCHED_FIFO refused?): %s", TailFile(logPath, 3))
	}
	p.realtime, p.dumpOnHang = true, true
	if err := p.Stop(syscall.SIGTERM, 300*time.Millisecond); err != nil {
		t.Errorf("a starved process that exited once demoted: Stop = %v, want its own exit status (0)", err)
	}
	b, _ := os.ReadFile(logPath)
	if !p.starved || !p.forced || !strings.Contains(string(b), "demoted\n") || strings.Contains(string(b), "stacks written") {
		t.Errorf("starved %v, forced %v, log %q: want starved and forced, the script's own exit, no SIGQUIT", p.starved, p.forced, b)
	}
	if !strings.Contains(string(b), "fifo/1") {
		t.Errorf("log %q: want its thread reported at fifo/1 before the demotion", b)
	}
}

// TestParseThreadStat: a command name with spaces and parentheses does not
// shift the fields after it (proc(5): they follow the last ')').
func TestParseThreadStat(t *testing.T) {
	line := "4242 (coopcc (emu) x) R 1 4242 1 0 -1 4194560 100 0 0 0 250 37 0 0 -51 0 9 0 1000 2000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 50 1 0 0 0"
	got, err := parseThreadStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := threadSched{tid: 4242, comm: "coopcc (emu) x", state: "R", ticks: 287, cpu: 1, rtPrio: 50, policy: 1}
	if got != want {
		t.Errorf("parseThreadStat = %+v, want %+v", got, want)
	}
	if _, err := parseThreadStat("4242 coopcc R 1"); err == nil {
		t.Error("a line without (comm): no error")
	}
	if _, err := parseThreadStat("4242 (coopcc) R 1 2 3"); err == nil {
		t.Error("a short line: no error")
	}
}

// startReady starts the shell script logged to logPath and waits for its
// "ready" line.
func startReady(t *testing.T, script, logPath string) *Proc {
	t.Helper()
	p, ready, err := startLogged("test process", []string{"sh", "-c", script}, nil, logPath, "ready", syscall.SIGTERM)
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
