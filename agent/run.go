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
	// OpenDatapath loads the datapath, adopting what a dead predecessor
	// left (setup); Close restores everything.
	OpenDatapath func(cfg Config, setup DatapathSetup) (Enforcer, error)
	// Cleanup removes a dead agent's leftovers without loading anything
	// (datapath.Cleanup) and says what it did; nil = nothing to clean.
	Cleanup func(Leftovers) (string, error)
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
	// Step, if set, is called after each named start-up and shut-down step
	// (Step… constants, and the datapath's dp-… steps): the crash tests
	// kill the process there (COOPCC_TEST_CRASH_AT in cmd/coopcc).
	Step func(name string)
}

// StatusInfo tells the caller where the agent listens.
type StatusInfo struct {
	StatusSocket string
	MetricsAddr  string
	Backend      string
}

// NewLogger builds the slog logger of a LogConfig, rate-limited
// (DefaultLimits: peer joins and leaves and bound changes beyond a few per
// 10 s are summarised); the returned LevelVar changes the level on reload.
func NewLogger(c LogConfig, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	lv.Set(parseLevel(c.Level))
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(NewLimitHandler(h, DefaultLimits())), lv
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

	var undo cleanup
	defer undo.run()
	h, err := openHost(cfg, o, log, &undo)
	if err != nil {
		return err
	}
	a, metricsAddr, err := startAgent(ctx, cfg, o, h, log, &undo)
	if err != nil {
		return err
	}

	// Loading the BPF objects parses the kernel's BTF (tens of MB, garbage
	// once loaded): hand that memory back to the OS now rather than keep it
	// in the heap for the agent's lifetime.
	debug.FreeOSMemory()
	log.Info("agent started", "iface", cfg.Iface, "group", cfg.Group.ID, "policy", cfg.Policy.Name,
		"backend", h.dp.Backend(), "status_socket", h.sock, "metrics", metricsAddr,
		"monitor_interval", cfg.Monitor.Interval.Duration, "lease", cfg.Datapath.Lease.Duration)
	if o.Ready != nil {
		o.Ready(StatusInfo{StatusSocket: h.sock, MetricsAddr: metricsAddr, Backend: h.dp.Backend()})
	}
	step(o.Step, StepReady)
	return runLoop(ctx, a, o, log, level)
}

// cleanup is the stack of what Main undoes on every exit path, last
// opened first.
type cleanup []func()

func (c *cleanup) push(f func()) { *c = append(*c, f) }

// run undoes everything pushed so far, last first. Its receiver is a
// pointer so that `defer undo.run()` sees what is pushed after the defer.
func (c *cleanup) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// host is what the agent holds on this machine: the status socket's path,
// the event log (nil = none), the datapath and the flow source.
type host struct {
	sock   string
	events *EventLog
	dp     *openedDatapath
	flows  FlowSource
}

// openHost takes the agent's lock and opens the event log, the datapath and
// the flow source, pushing each one's undo on undo as it opens.
func openHost(cfg Config, o Options, log *slog.Logger, undo *cleanup) (h host, err error) {
	if err := checkPrivileges(); err != nil {
		return h, err
	}
	lock, err := AcquireLock(cfg.Observe.LockDir)
	if err != nil {
		return h, err
	}
	undo.push(func() { _ = lock.Release() })
	step(o.Step, StepLocked)

	h.sock = cfg.Observe.StatusSocket
	if h.sock == "" {
		if h.sock, err = DefaultStatusSocket(); err != nil {
			return h, err
		}
	}
	if cfg.Observe.Events != "" {
		events, err := OpenEventLog(cfg.Observe.Events)
		if err != nil {
			return h, err
		}
		h.events = events
		undo.push(func() { _ = events.Close() })
	}
	dp, err := openDatapath(cfg, o, h.sock, log)
	if err != nil {
		return h, err
	}
	h.dp = dp
	undo.push(func() { dp.close(log) })

	flows, closeFlows, err := o.Parts.OpenFlows(cfg)
	if err != nil {
		return h, fmt.Errorf("monitor: %w", err)
	}
	h.flows = flows
	undo.push(func() { _ = closeFlows.Close() })
	step(o.Step, StepMonitorOpen)
	return h, nil
}

// startAgent builds the agent on the host's parts and starts the peer
// protocol, the status socket and, if configured, the metrics endpoint
// (its bound address is returned), pushing each one's undo on undo.
func startAgent(ctx context.Context, cfg Config, o Options, h host, log *slog.Logger, undo *cleanup) (*Agent, string, error) {
	// The agent exists before the peer node (which needs its status) and
	// the node before the agent runs: a small forwarding shim ties them.
	shim := &peerShim{}
	a, err := New(cfg, Deps{
		Flows: h.flows, Datapath: h.dp.Enforcer, Peers: shim, Events: h.events, Logger: log,
		NewPolicy: func(name string, params map[string]any) (Policy, error) {
			c := cfg
			c.Policy.Name, c.Policy.Params = name, params
			return o.Parts.NewPolicy(c)
		},
	})
	if err != nil {
		return nil, "", err
	}

	peerCtx, stopPeers := context.WithCancel(context.Background())
	node, waitPeers, err := o.Parts.StartPeers(peerCtx, cfg, a.OwnStatus, log)
	if err != nil {
		stopPeers()
		return nil, "", fmt.Errorf("peer protocol: %w", err)
	}
	shim.node = node
	undo.push(func() {
		stopPeers()
		if werr := waitPeers(); werr != nil {
			log.Error("peer protocol", "err", werr)
		}
		step(o.Step, StepPeersStopped)
	})
	step(o.Step, StepPeersStarted)

	stopStatus, err := a.serveStatus(ctx, h.sock)
	if err != nil {
		return nil, "", err
	}
	undo.push(stopStatus)
	if cfg.Observe.MetricsAddr == "" {
		return a, "", nil
	}
	stopMetrics, bound, err := a.serveMetrics(ctx, cfg.Observe.MetricsAddr)
	if err != nil {
		return nil, "", err
	}
	undo.push(stopMetrics)
	return a, bound, nil
}

// runLoop runs the agent's loop until ctx ends (its bounds are removed
// then) and reloads the configuration on every value of o.Reload, keeping
// the running one when the new one does not load.
func runLoop(ctx context.Context, a *Agent, o Options, log *slog.Logger, level *slog.LevelVar) error {
	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	done := make(chan error, 1)
	go func() { done <- a.Run(loopCtx) }()
	for {
		select {
		case err := <-done:
			log.Info("agent stopping: bounds removed, restoring the datapath")
			step(o.Step, StepStopping)
			return err
		case <-o.Reload:
			if err := reload(a, o, log, level); err != nil {
				log.Error("reload failed; keeping the running configuration", "err", err)
			}
		}
	}
}

// reload loads the configuration again and applies it to the agent and the
// log level; settings that take effect only after a restart are logged.
func reload(a *Agent, o Options, log *slog.Logger, level *slog.LevelVar) error {
	nc, err := o.Load()
	if err != nil {
		return err
	}
	restart, err := a.Reload(nc)
	if err != nil {
		return err
	}
	level.Set(parseLevel(nc.Log.Level))
	log.Info("configuration reloaded", "policy", nc.Policy.Name, "monitor_interval", nc.Monitor.Interval.Duration)
	if len(restart) > 0 {
		log.Warn("changed settings take effect only after a restart", "settings", strings.Join(restart, ", "))
	}
	return nil
}

// step calls the hook, if any.
func step(hook func(string), name string) {
	if hook != nil {
		hook(name)
	}
}

// openedDatapath is the datapath with the state file that records it.
type openedDatapath struct {
	Enforcer
	rec *recovery
}

// openDatapath records in the state file what the datapath will change
// (and what a dead predecessor left), opens the datapath so that it adopts
// those leftovers, and records the result. If Open fails, the leftovers are
// cleaned up (Parts.Cleanup) and the state file removed when that worked.
func openDatapath(cfg Config, o Options, sock string, log *slog.Logger) (*openedDatapath, error) {
	rec, err := startRecovery(cfg.Observe.LockDir, cfg.Datapath.Backend, o.Step)
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	if rec.pred != nil {
		log.Warn("a previous agent died without restoring the namespace; adopting its leftovers",
			"pid", rec.pred.PID, "step", rec.pred.Step, "cc", strings.Join(rec.pred.CCNames, ","),
			"original_cc", rec.pred.OriginalCC, "state_file", rec.file.Path())
	}
	// Loading the BPF objects parses the kernel's BTF: a burst of short-lived
	// heap. A soft memory limit while it runs makes the GC collect it as it
	// goes instead of letting the heap double first, which keeps the peak RSS
	// down (measured: docs/performance.md); the default is restored after.
	prevLimit := debug.SetMemoryLimit(startupMemoryLimit)
	dp, err := o.Parts.OpenDatapath(cfg, rec.setup())
	debug.SetMemoryLimit(prevLimit)
	if err != nil {
		if o.Parts.Cleanup != nil {
			if _, cerr := o.Parts.Cleanup(rec.leftovers()); cerr != nil {
				log.Error("cleanup after a failed datapath start; run `coopcc agent cleanup`", "err", cerr, "state_file", rec.file.Path())
				return nil, fmt.Errorf("datapath: %w", err)
			}
		}
		if rerr := rec.file.Remove(); rerr != nil {
			log.Error("state file", "err", rerr)
		}
		return nil, fmt.Errorf("datapath: %w", err)
	}
	step(o.Step, StepDatapathOpen)
	if err := rec.opened(sock); err != nil {
		if cerr := dp.Close(); cerr == nil {
			_ = rec.file.Remove()
		}
		return nil, fmt.Errorf("state file: %w", err)
	}
	return &openedDatapath{Enforcer: dp, rec: rec}, nil
}

// close closes the datapath (restoring the namespace) and removes the state
// file once nothing is left; on error the file stays for the next start or
// `coopcc agent cleanup`.
func (d *openedDatapath) close(log *slog.Logger) {
	if err := d.Close(); err != nil {
		log.Error("datapath close; state file kept for `coopcc agent cleanup`", "err", err, "state_file", d.rec.file.Path())
		return
	}
	step(d.rec.step, StepDatapathClosed)
	if err := d.rec.finish(); err != nil {
		log.Error("state file", "err", err)
	}
}

// peerShim forwards to the peer node once it exists (an empty table before).
type peerShim struct{ node PeerNode }

func (s *peerShim) ID() uint64 {
	if s.node == nil {
		return 0
	}
	return s.node.ID()
}

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
