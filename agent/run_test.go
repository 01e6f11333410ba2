package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func memParts(dp *memDatapath, pols map[string]*nPolicy) Parts {
	return Parts{
		OpenFlows: func(Config) (FlowSource, io.Closer, error) {
			return &memFlows{flows: []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}}, io.NopCloser(nil), nil
		},
		OpenDatapath: func(Config, DatapathSetup) (Enforcer, error) { return dp, nil },
		StartPeers: func(ctx context.Context, _ Config, status func() PeerStatus, _ *slog.Logger) (PeerNode, func() error, error) {
			done := make(chan struct{})
			go func() { <-ctx.Done(); close(done) }()
			return &memPeers{}, func() error { <-done; return nil }, nil
		},
		NewPolicy: func(c Config) (Policy, error) {
			if p, ok := pols[c.Policy.Name]; ok {
				return p, nil
			}
			return nil, errors.New("unknown policy")
		},
	}
}

func TestMainLifecycle(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "agent.sock")
	cfg := Defaults()
	cfg.Iface, cfg.Group.KeyFile = "lo", "k"
	cfg.Monitor.Interval.Duration, cfg.Datapath.Lease.Duration = 20*time.Millisecond, time.Second
	cfg.Observe.StatusSocket, cfg.Observe.LockDir, cfg.Observe.Events = sock, dir, filepath.Join(dir, "ev.jsonl")
	cfg.Policy.Name = "a"
	cfg.Managed.Iface = "-"
	var mu sync.Mutex
	load := func() (Config, error) { mu.Lock(); defer mu.Unlock(); return cfg, cfg.Validate() }
	dp := &memDatapath{}
	reload := make(chan struct{})
	ready := make(chan StatusInfo, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	logs := &syncBuffer{}
	pols := map[string]*nPolicy{"a": {}, "b": {perDst: mustAddr("10.77.9.254")}}
	go func() {
		done <- Main(ctx, Options{Load: load, Reload: reload, Parts: memParts(dp, pols), LogOutput: logs, Ready: func(s StatusInfo) { ready <- s }})
	}()
	select {
	case s := <-ready:
		if s.StatusSocket != sock || s.Backend != "test" {
			t.Fatalf("ready %+v", s)
		}
	case err := <-done:
		t.Fatalf("Main: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	time.Sleep(100 * time.Millisecond)
	r, err := QueryStatus(ctx, sock)
	if err != nil || r.Counts.Ticks == 0 || len(r.Bounds) == 0 {
		t.Fatalf("status %+v, %v", r, err)
	}

	// A second instance in the same network namespace refuses to start.
	err = Main(ctx, Options{Load: load, Parts: memParts(&memDatapath{}, pols)})
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second instance: %v", err)
	}

	// Reload: a bad config is refused and the old one kept; a good one applies.
	mu.Lock()
	cfg.Monitor.Interval.Duration = time.Nanosecond
	mu.Unlock()
	reload <- struct{}{}
	for deadline := time.Now().Add(3 * time.Second); !strings.Contains(logs.String(), "reload failed"); {
		if time.Now().After(deadline) {
			t.Fatalf("bad reload not refused; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	cfg.Monitor.Interval.Duration = 30 * time.Millisecond
	cfg.Policy.Name = "b"
	mu.Unlock()
	reload <- struct{}{}
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, err = QueryStatus(ctx, sock)
		if err == nil && r.Counts.Reloads == 1 && len(r.Flows) == 1 && r.Flows[0].Lo == 2 && r.Flows[0].Hi == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reload not applied: %+v %v", r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Main did not stop")
	}
	if !dp.closed {
		t.Fatal("datapath not closed")
	}
	for d, b := range dp.bounds {
		if b != (DPBounds{}) {
			t.Fatalf("bound %v %+v left after shutdown", d, b)
		}
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatal("status socket left behind")
	}
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	l.Release()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestCleanupRunsWhatIsPushedAfterTheDefer: Main defers the cleanup before
// it opens anything; every undo pushed later runs, last first (a value
// receiver ran the empty stack the defer saw, and the agent's lock went
// with the garbage collector).
func TestCleanupRunsWhatIsPushedAfterTheDefer(t *testing.T) {
	var got []int
	func() {
		var undo cleanup
		defer undo.run()
		undo.push(func() { got = append(got, 1) })
		undo.push(func() { got = append(got, 2) })
	}()
	if len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Fatalf("undone %v, want [2 1]", got)
	}
}
