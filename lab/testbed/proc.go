package testbed

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/emu"
)

// Proc is a child process the testbed started: in its own process group (a
// Ctrl-C on the terminal reaches only coopcc, which then stops the children
// in order), killed if coopcc dies (Pdeathsig).
type Proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
	// realtime marks a SCHED_FIFO process (the emulator): demoted to
	// ordinary scheduling before SIGKILL.
	realtime bool
	// dumpOnHang marks a Go program of ours (the emulator): one that does
	// not stop within the grace gets SIGQUIT first, whose default handler
	// writes every goroutine's stack to its log and exits, so that a hang
	// leaves its cause behind (quitGrace).
	dumpOnHang bool
	// forced: Stop's signal went unanswered within the grace (kill).
	forced bool
	// starved: a realtime process that did not answer within the grace
	// exited once demoted to ordinary scheduling (kill): it had been
	// starved at its real-time priority, not hung.
	starved bool
	// diag is the process's log, where kill writes what its threads were
	// doing (dumpOnHang; nil = nowhere).
	diag io.Writer
}

// quitGrace is how long a process that did not stop is given to write its
// stacks after SIGQUIT (dumpOnHang) before SIGKILL.
const quitGrace = 3 * time.Second

// schedWindow is how long kill watches a hung process's threads (their CPU
// time over it tells running from starved from blocked); demoteGrace how
// long a demoted realtime process is given to act on the signal it was
// sent before it is taken for hung.
const (
	schedWindow = time.Second
	demoteGrace = time.Second
)

// startProc starts argv with stdout and stderr going to the given writers
// (nil = discard) and env added to this process's environment.
func startProc(name string, argv, env []string, stdout, stderr io.Writer, deathSig syscall.Signal) (*Proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, strings.Join(argv, " "), err)
	}
	p := &Proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// startLogged starts argv with stdout and stderr written to a new file at
// logPath, stdout through a watcher for the line want. The file stays open
// until the process has ended: stdout reaches it through a pipe that exec
// copies for the whole life of the process, so a file closed when the
// caller returned made every later line an error, and cmd.Wait reported
// "write …/emu.log: file already closed" as the emulator's exit status (a
// valid 60 s run marked invalid, 2026-11-25).
func startLogged(name string, argv, env []string, logPath, want string, deathSig syscall.Signal) (*Proc, *lineWatcher, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, fmt.Errorf("create %s log: %w", name, err)
	}
	ready := newLineWatcher(logf, want)
	p, err := startProc(name, argv, env, ready, logf, deathSig)
	if err != nil {
		logf.Close()
		return nil, nil, err
	}
	p.diag = logf
	go func() {
		<-p.done // cmd.Wait has returned: exec's copy into logf is over
		logf.Close()
	}()
	return p, ready, nil
}

// Stop sends sig to the process group, waits up to grace, then kills it.
// It returns the process's exit error, if any, ignoring the stop itself.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) error {
	p.once.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
		select {
		case <-p.done:
		case <-time.After(grace):
			p.kill()
		}
	})
	<-p.done
	return p.err
}

// kill ends a process that did not stop within its grace: demoted first if
// it runs SCHED_FIFO (starved by a higher-priority real-time process it
// cannot act on a signal), asked for its stacks if it is a Go program of
// ours (dumpOnHang), then SIGKILL. The emulator hung this way about once in
// ten 802.11ac runs at 100 Mbit/s wired on the 2-core VM (its frames
// stopped mid-run, SIGTERM went unanswered, and the run was lost with no
// trace of why: docs/results.md, thirtieth session; the threads' report
// below then showed two of its threads spinning at a priority above the
// rest, which emu.RealTime no longer sets: docs/emulator.md).
//
// Before anything else, a dumpOnHang process's threads are watched for
// schedWindow and reported in its log (writeSchedReport): the stacks say
// where the goroutines are, not whether their threads get a CPU. In the
// hang of the thirty-first session every goroutine was runnable and none
// ran, which a starved SCHED_FIFO process and a deadlocked runtime both
// look like. A realtime process is then given demoteGrace to act on the
// signal at ordinary priority: if it does, it was starved (p.starved).
func (p *Proc) kill() {
	p.forced = true
	pid := p.cmd.Process.Pid
	pgid := -pid
	if p.dumpOnHang && p.diag != nil {
		writeSchedReport(p.diag, pid, schedWindow)
	}
	if p.realtime {
		if p.diag != nil {
			fmt.Fprintf(p.diag, "lab: demoted to ordinary scheduling; %v to act on the signal before SIGQUIT/SIGKILL\n", demoteGrace)
		}
		_ = emu.DemoteProcess(pid)
		select {
		case <-p.done:
			p.starved = true
			return
		case <-time.After(demoteGrace):
		}
	}
	if p.dumpOnHang {
		// The stacks, not a core: a Go program run with GOTRACEBACK=crash
		// (every thread's stack, not only the goroutines') aborts after
		// writing them.
		_ = unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil)
		_ = syscall.Kill(pgid, syscall.SIGQUIT)
		select {
		case <-p.done:
			return
		case <-time.After(quitGrace):
		}
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-p.done
}

// Pid is the process's id (`ip netns exec` execs the command, so it is
// the command's own).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Name is the name the process was started with ("iperf3 server").
func (p *Proc) Name() string { return p.name }

// Err is the process's exit error once it has ended (nil before).
func (p *Proc) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process or ctx.
func (p *Proc) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitListen waits until the process listens on TCP port (read from its
// own /proc/PID/net/tcp{,6}, which shows its namespace's sockets).
func (p *Proc) WaitListen(ctx context.Context, port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hexPort := fmt.Sprintf(":%04X", port)
	for {
		for _, f := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", p.cmd.Process.Pid, f))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n")[1:] {
				fs := strings.Fields(line)
				if len(fs) > 3 && strings.HasSuffix(fs[1], hexPort) && fs[3] == "0A" {
					return nil
				}
			}
		}
		if p.Exited() {
			return fmt.Errorf("%s exited before listening on %d: %v", p.name, port, p.err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening on %d after %v", p.name, port, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lineWatcher is an io.Writer that copies to w and signals when a line equal
// to want appears.
type lineWatcher struct {
	w     io.Writer
	want  string
	found chan struct{}
	mu    sync.Mutex
	buf   []byte
	once  sync.Once
}

func newLineWatcher(w io.Writer, want string) *lineWatcher {
	return &lineWatcher{w: w, want: want, found: make(chan struct{})}
}

func (l *lineWatcher) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		if strings.TrimSpace(string(l.buf[:i])) == l.want {
			l.once.Do(func() { close(l.found) })
		}
		l.buf = l.buf[i+1:]
	}
	l.mu.Unlock()
	if l.w != nil {
		return l.w.Write(p)
	}
	return len(p), nil
}

// TailFile returns the last lines of a file (a process's log), joined with
// " | ", for error messages; "" when it cannot be read.
func TailFile(path string, lines int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		all = append(all, sc.Text())
		if len(all) > lines {
			all = all[1:]
		}
	}
	return strings.Join(all, " | ")
}
