package emu

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a running `coopcc emu run` started by Launch.
type Process struct {
	Cmd    *exec.Cmd
	OutDir string

	mu     sync.Mutex
	stderr strings.Builder
	exited chan struct{}
	err    error
}

// Launch starts `bin emu run --config cfgPath --out outDir` (bin is the
// coopcc binary), waits until it prints "ready" (or fails, or readyTimeout
// passes) and returns it. The emulator is killed if the calling thread's
// process dies (Pdeathsig), so a SCHED_FIFO emulator never outlives its
// caller. Address the interfaces after Launch returns; Stop ends the run.
func Launch(bin, cfgPath, outDir string, readyTimeout time.Duration) (*Process, error) {
	p := &Process{OutDir: outDir, exited: make(chan struct{})}
	p.Cmd = exec.Command(bin, "emu", "run", "--config", cfgPath, "--out", outDir)
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := p.Cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("emulator stdout: %w", err)
	}
	p.Cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	if err := p.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("start emulator %s: %w", bin, err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if !ok && strings.TrimSpace(sc.Text()) == "ready" {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = p.Cmd.Wait()
		close(p.exited)
	}()
	select {
	case ok := <-ready:
		if ok {
			return p, nil
		}
		<-p.exited
		return nil, fmt.Errorf("emulator exited before ready: %v: %s", p.err, p.Stderr())
	case <-time.After(readyTimeout):
		_ = p.Cmd.Process.Kill()
		<-p.exited
		return nil, fmt.Errorf("emulator not ready after %v: %s", readyTimeout, p.Stderr())
	}
}

// Stderr is what the emulator wrote to stderr so far.
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.TrimSpace(p.stderr.String())
}

// Stop sends SIGTERM, waits up to timeout (then kills), and reads emu.json.
// Calling it again returns the same report.
func (p *Process) Stop(timeout time.Duration) (Report, error) {
	select {
	case <-p.exited:
	default:
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(timeout):
			_ = DemoteProcess(p.Cmd.Process.Pid) // a starved SCHED_FIFO process cannot act on SIGKILL
			_ = p.Cmd.Process.Kill()
			<-p.exited
			return Report{}, fmt.Errorf("emulator did not stop within %v after SIGTERM (killed): %s", timeout, p.Stderr())
		}
	}
	rep, err := ReadReport(p.OutDir)
	if p.err != nil {
		return rep, errors.Join(fmt.Errorf("emulator: %w: %s", p.err, p.Stderr()), err)
	}
	return rep, err
}

// ReadReport reads DIR/emu.json.
func ReadReport(dir string) (Report, error) {
	var r Report
	b, err := os.ReadFile(filepath.Join(dir, "emu.json"))
	if err != nil {
		return r, fmt.Errorf("read emulator report: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("parse %s: %w", filepath.Join(dir, "emu.json"), err)
	}
	return r, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
