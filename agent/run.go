package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
)

// Parts opens the agent's real parts from a configuration. RealParts (in
// parts.go) builds them from monitor, datapath, peer and policy; tests pass
// in-memory ones.
type Parts struct {
	// OpenFlows opens the flow source (closed by the returned closer).
	OpenFlows func(cfg Config) (FlowSource, io.Closer, error)
	// OpenDatapath loads the datapath; Close restores everything.
	OpenDatapath func(cfg Config) (Enforcer, error)
	// StartPeers starts the peer protocol, which broadcasts status() every
	// group interval until ctx ends; wait blocks until it has stopped.
	StartPeers func(ctx context.Context, cfg Config, status func() PeerStatus, log *slog.Logger) (node PeerNode, wait func() error, err error)
	// NewPolicy builds a policy from its name and params.
	NewPolicy func(cfg Config) (Policy, error)
}

// Options for Main.
type Options struct {
	// Load reads the configuration (file + flags) and validates it; called at
	// start and on every reload.
	Load func() (Config, error)
	// Reload receives a value on SIGHUP.
	Reload <-chan struct{}
	// Ready, if set, is called once everything is up (e.g. sd_notify).
	Ready func(status StatusInfo)
	// LogOutput is where logs go (default os.Stderr is the caller's choice).
	LogOutput io.Writer
	Parts     Parts
}

// StatusInfo tells the caller where the agent listens.
type StatusInfo struct {
	StatusSocket string
	MetricsAddr  string
	Backend      string
}

// NewLogger builds the slog logger of a LogConfig; the returned LevelVar
// changes the level on reload.
func NewLogger(c LogConfig, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	lv.Set(parseLevel(c.Level))
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(h), lv
}

func parseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// startupMemoryLimit is the Go soft memory limit while the datapath loads.
const startupMemoryLimit = 12 << 20

// Main runs the agent until ctx ends: it takes the single-instance lock,
// opens the datapath, the monitor, the peer protocol, the event log, the
// status socket and the metrics server, runs the control loop, reloads the
// configuration on every Reload signal, and on the way out undoes all of it
// in reverse order (bounds removed, datapath closed so the default congestion
// control is restored, socket removed, lock released) — also when start-up
// fails half-way.
func Main(ctx context.Context, o Options) (err error) {
	cfg, err := o.Load()
	if err != nil {
		return err
	}
	if o.LogOutput == nil {
		o.LogOutput = io.Discard
	}
	log, level := NewLogger(cfg.Log, o.LogOutput)

	var undo []func()
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}()

	if err := checkPrivileges(); err != nil {
		return err
	}
	lock, err := AcquireLock(cfg.Observe.LockDir)
	if err != nil {
		return err
	}
	undo = append(undo, func() { _ = lock.Release() })

	sock := cfg.Observe.StatusSocket
	if sock == "" {
		if sock, err = DefaultStatusSocket(); err != nil {
			return err
		}
	}

	var events *EventLog
	if cfg.Observe.Events != "" {
		if events, err = OpenEventLog(cfg.Observe.Events); err != nil {
			return err
		}
		undo = append(undo, func() { _ = events.Close() })
	}

	// Loading the BPF objects parses the kernel's BTF: a burst of short-lived
	// heap. A soft memory limit while it runs makes the GC collect it as it
	// goes instead of letting the heap double first, which keeps the peak RSS
	// down (measured: docs/performance.md); the default is restored after.
	prevLimit := debug.SetMemoryLimit(startupMemoryLimit)
	dp, err := o.Parts.OpenDatapath(cfg)
	debug.SetMemoryLimit(prevLimit)
	if err != nil {
		return fmt.Errorf("datapath: %w", err)
	}
	undo = append(undo, func() {
		if cerr := dp.Close(); cerr != nil {
			log.Error("datapath close", "err", cerr)
		}
	})

	flows, closeFlows, err := o.Parts.OpenFlows(cfg)
	if err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	undo = append(undo, func() { _ = closeFlows.Close() })

	// The agent exists before the peer node (which needs its status) and
	// the node before the agent runs: a small forwarding shim ties them.
	shim := &peerShim{}
	a, err := New(cfg, Deps{
		Flows: flows, Datapath: dp, Peers: shim, Events: events, Logger: log,
		NewPolicy: func(name string, params map[string]any) (Policy, error) {
			c := cfg
			c.Policy.Name, c.Policy.Params = name, params
			return o.Parts.NewPolicy(c)
		},
	})
	if err != nil {
		return err
	}

	peerCtx, stopPeers := context.WithCancel(context.Background())
	node, waitPeers, err := o.Parts.StartPeers(peerCtx, cfg, a.OwnStatus, log)
	if err != nil {
		stopPeers()
		return fmt.Errorf("peer protocol: %w", err)
	}
	shim.node = node
	undo = append(undo, func() {
		stopPeers()
		if werr := waitPeers(); werr != nil {
			log.Error("peer protocol", "err", werr)
		}
	})

	stopStatus, err := a.serveStatus(ctx, sock)
	if err != nil {
		return err
	}
	undo = append(undo, stopStatus)
	metricsAddr := ""
	if cfg.Observe.MetricsAddr != "" {
		stopMetrics, bound, err := a.serveMetrics(ctx, cfg.Observe.MetricsAddr)
		if err != nil {
			return err
		}
		metricsAddr = bound
		undo = append(undo, stopMetrics)
	}

	// Loading the BPF objects parses the kernel's BTF (tens of MB, garbage
	// once loaded): hand that memory back to the OS now rather than keep it
	// in the heap for the agent's lifetime.
	debug.FreeOSMemory()
	log.Info("agent started", "iface", cfg.Iface, "group", cfg.Group.ID, "policy", cfg.Policy.Name,
		"backend", dp.Backend(), "status_socket", sock, "metrics", metricsAddr,
		"monitor_interval", cfg.Monitor.Interval.Duration, "lease", cfg.Datapath.Lease.Duration)
	if o.Ready != nil {
		o.Ready(StatusInfo{StatusSocket: sock, MetricsAddr: metricsAddr, Backend: dp.Backend()})
	}

	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	done := make(chan error, 1)
	go func() { done <- a.Run(loopCtx) }()
	for {
		select {
		case err := <-done:
			log.Info("agent stopping: bounds removed, restoring the datapath")
			return err
		case <-o.Reload:
			nc, lerr := o.Load()
			if lerr == nil {
				var restart []string
				restart, lerr = a.Reload(nc)
				if lerr == nil {
					level.Set(parseLevel(nc.Log.Level))
					log.Info("configuration reloaded", "policy", nc.Policy.Name, "monitor_interval", nc.Monitor.Interval.Duration)
					if len(restart) > 0 {
						log.Warn("changed settings take effect only after a restart", "settings", strings.Join(restart, ", "))
					}
				}
			}
			if lerr != nil {
				log.Error("reload failed; keeping the running configuration", "err", lerr)
			}
		}
	}
}

// peerShim forwards to the peer node once it exists (an empty table before).
type peerShim struct{ node PeerNode }

func (s *peerShim) Live(now time.Time) []PeerStatus {
	if s.node == nil {
		return nil
	}
	return s.node.Live(now)
}

func (s *peerShim) N(now time.Time) int {
	if s.node == nil {
		return 1
	}
	return s.node.N(now)
}

func (s *peerShim) Counters() map[string]uint64 {
	if s.node == nil {
		return nil
	}
	return s.node.Counters()
}
