package lab

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

	"github.com/coopcc/coopcc/emu"
)

// proc is a child process the testbed started: in its own process group (a
// Ctrl-C on the terminal reaches only coopcc, which then stops the children
// in order), killed if coopcc dies (Pdeathsig).
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
	// realtime marks a SCHED_FIFO process (the emulator): demoted to
	// ordinary scheduling before SIGKILL.
	realtime bool
}

// startProc starts argv with stdout and stderr going to the given writers
// (nil = discard).
func startProc(name string, argv []string, stdout, stderr io.Writer, deathSig syscall.Signal) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, strings.Join(argv, " "), err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop sends sig to the process group, waits up to grace, then kills it.
// It returns the process's exit error, if any, ignoring the stop itself.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) error {
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
			if p.realtime {
				// A SCHED_FIFO emulator starved by a higher-priority
				// real-time process cannot act on SIGKILL: demote it first.
				_ = emu.DemoteProcess(p.cmd.Process.Pid)
			}
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	<-p.done
	return p.err
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process or ctx.
func (p *proc) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
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

// tailFile returns the last lines of a file, for error messages.
func tailFile(path string, lines int) string {
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
