package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coopcc/coopcc/agent"
	"github.com/spf13/cobra"
)

// agentFlags are the flags of `coopcc agent`; a flag that is given
// overrides the configuration file.
type agentFlags struct {
	config                        string
	iface, policy, keyFile, group string
	params                        []string
	port                          uint16
	transport                     string
	statusInterval                time.Duration
	events, metricsAddr           string
	statusSocket, lockDir         string
	lease, monitorInterval        time.Duration
	airtimeFile                   string
	backend                       string
	receive                       string
	dst                           []string
	dports                        []uint
	guard                         bool
	guardMaxCost                  float64
	logFormat, logLevel           string
	clockSkew                     time.Duration
}

func newAgentCmd() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the coopcc daemon: monitor, peers, policy and datapath in one control loop",
		Long: `Run the coopcc agent on this terminal (one per network namespace). It bounds the
cwnd of the kernel's CUBIC for the flows leaving through --iface, from the status
the terminals of one AP broadcast to each other.

Configuration: a TOML file (--config, see deploy/coopcc.toml.example and
docs/agent.md) with flags on top. SIGHUP reloads the file (policy, params,
intervals, managed flows, guard, log level); SIGTERM/SIGINT stop the agent and
restore everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			load := func() (agent.Config, error) { return loadAgentConfig(cmd, f) }
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			reload := make(chan struct{})
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			go func() {
				for {
					select {
					case <-hup:
						select {
						case reload <- struct{}{}:
						case <-ctx.Done():
							return
						}
					case <-ctx.Done():
						return
					}
				}
			}()
			return agent.Main(ctx, agent.Options{
				Load: load, Reload: reload, LogOutput: cmd.ErrOrStderr(), Parts: agent.RealParts(),
				Ready: func(agent.StatusInfo) { agent.SDNotify("READY=1") },
				Step:  crashHook(os.Getenv(crashAtEnv)),
			})
		},
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.config, "config", "", "TOML configuration file (flags override it)")
	fl.StringVar(&f.iface, "iface", "", "managed (WLAN) interface: status exchange and managed flows")
	fl.StringVar(&f.policy, "policy", "", "policy: static, hirai2013, hayakawa2015, hayakawa2016, coop (default coop)")
	fl.StringArrayVar(&f.params, "param", nil, "policy parameter key=value (repeatable), e.g. static_hi=7")
	fl.StringVar(&f.keyFile, "key-file", "", "group key file (64 hex digits); or group.passphrase / COOPCC_PASSPHRASE")
	fl.StringVar(&f.group, "group", "", "group (BSS) name, the same on every terminal of the AP (default coopcc)")
	fl.Uint16Var(&f.port, "port", 0, "UDP port of the status exchange (default 51300)")
	fl.StringVar(&f.transport, "transport", "", "status transport: ipv4 (broadcast) or ipv6 (link-local multicast) (default ipv4)")
	fl.DurationVar(&f.statusInterval, "status-interval", 0, "status broadcast period (default 300ms)")
	fl.StringVar(&f.events, "events", "", "append a JSON line per bound change to this file")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics on host:port (empty = off)")
	fl.StringVar(&f.statusSocket, "status-socket", "", "unix socket for `coopcc agent status` (default /run/coopcc/agent-<netns inode>.sock)")
	fl.StringVar(&f.lockDir, "lock-dir", "", "directory of the single-instance lock (default /run/coopcc)")
	fl.DurationVar(&f.lease, "lease", 0, "bounds lapse this long after the last heartbeat (default 3s)")
	fl.DurationVar(&f.monitorInterval, "monitor-interval", 0, "control-loop period: monitor, policy, datapath (default 500ms)")
	fl.StringVar(&f.airtimeFile, "airtime-file", "", "read the WLAN interface's airtime counters from this file (the lab's emulator writes them) instead of nl80211")
	fl.StringVar(&f.backend, "backend", "", "datapath backend: auto, struct_ops, sockops (default auto)")
	fl.StringVar(&f.receive, "receive", "", "bound downloads through the advertised window: auto, on, off (default auto)")
	fl.StringArrayVar(&f.dst, "dst", nil, "only bound flows to this address or prefix (repeatable)")
	fl.UintSliceVar(&f.dports, "dport", nil, "only bound flows to these destination ports (comma-separated or repeated)")
	fl.BoolVar(&f.guard, "guard", false, "enable the guard that switches control off when it costs throughput")
	fl.Float64Var(&f.guardMaxCost, "guard-max-cost", 0, "throughput loss the guard accepts, fraction (default 0.05)")
	fl.StringVar(&f.logFormat, "log-format", "", "log format: text or json (default text)")
	fl.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn, error (default info)")
	// A test hook, hidden from --help: the lab's clock_skew fault
	// (docs/scenarios.md, Faults). CLOCK_REALTIME is not per namespace.
	fl.DurationVar(&f.clockSkew, "clock-skew", 0, "test only: the peer protocol's clock runs this far from the host's")
	_ = fl.MarkHidden("clock-skew")
	cmd.AddCommand(newAgentStatusCmd(&f), newAgentConfigCmd(&f), newAgentCleanupCmd(&f))
	return cmd
}

// loadAgentConfig reads the file (if any) over the defaults, applies the
// flags that were given and the COOPCC_PASSPHRASE environment variable, and
// validates the result.
func loadAgentConfig(cmd *cobra.Command, f agentFlags) (agent.Config, error) {
	cfg := agent.Defaults()
	if f.config != "" {
		var err error
		if cfg, err = agent.LoadFile(f.config); err != nil {
			return cfg, err
		}
	}
	ch := cmd.Flags().Changed
	set := func(name string, apply func()) {
		if ch(name) {
			apply()
		}
	}
	set("iface", func() { cfg.Iface = f.iface })
	set("policy", func() { cfg.Policy.Name = f.policy })
	set("key-file", func() { cfg.Group.KeyFile, cfg.Group.Passphrase = f.keyFile, "" })
	set("group", func() { cfg.Group.ID = f.group })
	set("port", func() { cfg.Group.Port = f.port })
	set("transport", func() { cfg.Group.Transport = f.transport })
	set("status-interval", func() { cfg.Group.Interval.Duration = f.statusInterval })
	set("events", func() { cfg.Observe.Events = f.events })
	set("metrics-addr", func() { cfg.Observe.MetricsAddr = f.metricsAddr })
	set("status-socket", func() { cfg.Observe.StatusSocket = f.statusSocket })
	set("lock-dir", func() { cfg.Observe.LockDir = f.lockDir })
	set("lease", func() { cfg.Datapath.Lease.Duration = f.lease })
	set("monitor-interval", func() { cfg.Monitor.Interval.Duration = f.monitorInterval })
	set("airtime-file", func() { cfg.Monitor.AirtimeFile = f.airtimeFile })
	set("backend", func() { cfg.Datapath.Backend = f.backend })
	set("receive", func() { cfg.Datapath.Receive = f.receive })
	set("dst", func() { cfg.Managed.Dst = f.dst })
	if ch("dport") {
		cfg.Managed.Ports = nil
		for _, p := range f.dports {
			if p == 0 || p > 65535 {
				return cfg, fmt.Errorf("--dport %d: use a port in 1..65535", p)
			}
			cfg.Managed.Ports = append(cfg.Managed.Ports, uint16(p))
		}
	}
	set("guard", func() { cfg.Guard.Enabled = f.guard })
	set("guard-max-cost", func() { cfg.Guard.MaxCost = f.guardMaxCost })
	set("log-format", func() { cfg.Log.Format = f.logFormat })
	set("log-level", func() { cfg.Log.Level = f.logLevel })
	set("clock-skew", func() { cfg.Group.ClockSkew = f.clockSkew })
	for _, kv := range f.params {
		if err := cfg.SetParam(kv); err != nil {
			return cfg, err
		}
	}
	if p := os.Getenv("COOPCC_PASSPHRASE"); p != "" && cfg.Group.KeyFile == "" {
		cfg.Group.Passphrase = p
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("invalid agent configuration:\n%w", err)
	}
	return cfg, nil
}

func newAgentStatusCmd(f *agentFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the running agent's peers, bounds, policy state and datapath backend",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sock := f.statusSocket
			if sock == "" && f.config != "" {
				if c, err := agent.LoadFile(f.config); err == nil {
					sock = c.Observe.StatusSocket
				}
			}
			if sock == "" {
				var err error
				if sock, err = agent.DefaultStatusSocket(); err != nil {
					return err
				}
			}
			r, err := agent.QueryStatus(cmd.Context(), sock)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			agent.PrintStatus(cmd.OutOrStdout(), r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func newAgentConfigCmd(f *agentFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (defaults, file and flags of the parent command) as TOML",
		Long: `Print the effective configuration as TOML, after the defaults, --config and the
agent flags given: coopcc agent config --config f.toml --iface wlan0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadAgentConfig(cmd, *f)
			if err != nil {
				return err
			}
			if cfg.Group.Passphrase != "" {
				cfg.Group.Passphrase = "(redacted)"
			}
			b, err := cfg.Encode()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
}

// crashAtEnv names a start-up or shut-down step (agent.Step…, or the
// datapath's dp-…) at which the agent SIGKILLs itself: the crash tests'
// fault injection. Unset in production.
const crashAtEnv = "COOPCC_TEST_CRASH_AT"

// crashHook returns the step hook that kills the process at step at (nil
// when at is empty).
func crashHook(at string) func(string) {
	if at == "" {
		return nil
	}
	return func(step string) {
		if step == at {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}

func newAgentCleanupCmd(f *agentFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cleanup",
		Short: "Restore this network namespace after an agent died (default congestion control, BPF objects, files) without starting one",
		Long: `Undo what a dead agent left in this network namespace, from its state file
<lock_dir>/state-<netns inode>.json: the namespace's default congestion control
goes back to the original, sockets on the dead agent's congestion control move
to plain cubic (which frees its BPF programs and maps), leftover sockops
programs are detached, its files and the state file are removed. Refused while
an agent runs in the namespace. A starting agent does the same by itself (and
re-bounds the surviving flows instead of releasing them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := f.lockDir
			if dir == "" && f.config != "" {
				if c, err := agent.LoadFile(f.config); err == nil {
					dir = c.Observe.LockDir
				}
			}
			if dir == "" {
				dir = agent.Defaults().Observe.LockDir
			}
			rep, err := agent.Cleanup(dir, agent.RealParts().Cleanup)
			fmt.Fprint(cmd.OutOrStdout(), rep.String())
			return err
		},
	}
}
