package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coopcc/coopcc/emu"
	"github.com/coopcc/coopcc/internal/pidlock"
	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/schema"
)

// RunnerConfig says how to run a scenario.
type RunnerConfig struct {
	Out   string // results directory (created; must be empty or absent)
	Quick bool   // apply the scenario's [quick] reductions
	// Duration overrides the traffic duration (start/stop times scale).
	Duration scenario.Duration
	// Repetitions overrides the scenario's number of repetitions (0 = keep).
	Repetitions int
	// FirstRep numbers the repetitions from this one (0 = 1;
	// scenario.Options.FirstRep).
	FirstRep int
	Backend  string    // testbed.BackendEmu, testbed.BackendVeth, or "" = emu when available
	Coopcc   string    // coopcc binary for the emulator and agents ("" = this executable)
	Log      io.Writer // progress display (nil = discard)
	// SampleInterval is the monitor's sampling period (default 50 ms = 20 Hz).
	SampleInterval time.Duration
	// AgentSampleInterval is how often the agents' status is polled into
	// agents.jsonl in runs of scenarios with [[faults]] (default 500 ms).
	AgentSampleInterval time.Duration
	// Only runs the runs whose id contains this string (debugging aid).
	Only string
	// Lock is the machine-wide lock that keeps two emulator-backed lab runs
	// from running at once ("" = DefaultLock): two emulators spinning at
	// SCHED_FIFO on a small machine invalidate each other's timing and
	// starve each other's iperf3. Wait blocks for it instead of failing.
	Lock string
	Wait bool
	// Shard runs only shard K of N of the runs (after Only); the zero
	// Shard runs them all. See scenario.Shard.Select.
	Shard scenario.Shard
	// RetryBusyHost is how many times a run is run again when the
	// emulator marked it invalid while the machine's hypervisor took
	// emu.StealNoted or more of its CPU time (0 = never; see busyHost).
	RetryBusyHost int
	// WaitQuietHost is how long, at most, to wait before each run (and
	// each retry) for a host whose hypervisor takes less than
	// emu.StealNoted of the CPU time over a QuietSample (0 = no wait; a
	// host whose steal is unknown counts as quiet): a run made while the
	// host is busy is likely marked invalid (waitQuietHost).
	WaitQuietHost time.Duration
}

// QuietSample is how long each look at the host's steal lasts
// (RunnerConfig.WaitQuietHost).
const QuietSample = 5 * time.Second

// DefaultLock is the lab's machine-wide lock file.
const DefaultLock = "/run/coopcc/lab.lock"

// Summary is what RunScenario returns.
type Summary struct {
	Out    string
	Runs   int
	Failed int
	Took   time.Duration
}

// Fixed margins of a run.
const (
	emuReadyTimeout = 20 * time.Second
	agentSettle     = 1500 * time.Millisecond
	// An iperf3 client is killed clientGrace plus clientGraceRTTs of its
	// largest RTT after its schedule ends: behind seconds of queue (cubic,
	// 6 terminals joining, 7-9 s of RTT) the exchange that ends a test and
	// the send buffer it drains first take several of them.
	clientGrace      = 60 * time.Second
	clientGraceRTTs  = 16
	defaultSampleInt = 50 * time.Millisecond
	// defaultAgentSampleInt is the agents' default control interval.
	defaultAgentSampleInt = 500 * time.Millisecond
)

// RunScenario expands the scenario and runs every run in order, writing the
// results directory. A failed run is recorded (run.json with valid=false
// and the error) and the next one starts; a cancelled context stops after
// tearing the current run down.
func RunScenario(ctx context.Context, s *scenario.Scenario, cfg RunnerConfig) (*Summary, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Backend == testbed.BackendEmu {
		release, err := lockEmulator(&cfg)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	runs, all, err := selectRuns(s, cfg)
	if err != nil {
		return nil, err
	}
	if err := prepareOut(cfg.Out); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "scenario.toml"), s.Source(), 0o644); err != nil {
		return nil, fmt.Errorf("write scenario.toml: %w", err)
	}
	meta := newMeta(s, cfg, all)
	if err := writeJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return nil, err
	}
	sum := runAll(ctx, runs, cfg, meta)
	meta.End = time.Now().UTC()
	meta.Interrupted = ctx.Err() != nil
	if err := writeJSON(filepath.Join(cfg.Out, "meta.json"), meta); err != nil {
		return sum, err
	}
	sum.Took = meta.End.Sub(meta.Start)
	if meta.Interrupted {
		return sum, fmt.Errorf("interrupted after %d of %d runs; partial results in %s", sum.Runs, len(runs), cfg.Out)
	}
	return sum, nil
}

// withDefaults fills in what the configuration leaves out (log, sample
// intervals, the coopcc binary, the backend: the emulator where the binary
// has one) and checks what a lab run needs of this machine (root, iperf3).
func (cfg RunnerConfig) withDefaults() (RunnerConfig, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.RetryBusyHost < 0 || cfg.RetryBusyHost > 10 {
		return cfg, fmt.Errorf("--retry-busy-host %d: want 0..10 attempts more", cfg.RetryBusyHost)
	}
	if cfg.WaitQuietHost < 0 || cfg.WaitQuietHost > 24*time.Hour {
		return cfg, fmt.Errorf("--wait-quiet-host %v: want a duration from 0 to 24h", cfg.WaitQuietHost)
	}
	if cfg.SampleInterval == 0 {
		cfg.SampleInterval = defaultSampleInt
	}
	if cfg.AgentSampleInterval == 0 {
		cfg.AgentSampleInterval = defaultAgentSampleInt
	}
	if cfg.Coopcc == "" {
		exe, err := os.Executable()
		if err != nil {
			return cfg, fmt.Errorf("find the coopcc binary: %w", err)
		}
		cfg.Coopcc = exe
	}
	if os.Geteuid() != 0 {
		return cfg, errors.New("lab run needs root (network namespaces, TAP devices, BPF); run it with sudo")
	}
	if _, err := exec.LookPath("iperf3"); err != nil {
		return cfg, errors.New("lab run needs iperf3 on PATH (`make deps` installs it)")
	}
	switch cfg.Backend {
	case "":
		cfg.Backend = testbed.BackendVeth
		if emuAvailable(cfg.Coopcc) {
			cfg.Backend = testbed.BackendEmu
		} else {
			fmt.Fprintf(cfg.Log, "warning: %s has no working `emu run`: using the veth backend (no WLAN emulation, no wired delay)\n", cfg.Coopcc)
		}
	case testbed.BackendEmu, testbed.BackendVeth:
	default:
		return cfg, fmt.Errorf("backend %q: want %q or %q", cfg.Backend, testbed.BackendEmu, testbed.BackendVeth)
	}
	return cfg, nil
}

// lockEmulator takes the emulator's lock (cfg.Lock, DefaultLock if unset;
// waiting for it with cfg.Wait) and returns its release.
func lockEmulator(cfg *RunnerConfig) (release func(), err error) {
	if cfg.Lock == "" {
		cfg.Lock = DefaultLock
	}
	if cfg.Wait {
		fmt.Fprintf(cfg.Log, "waiting for %s (another lab run may hold it)\n", cfg.Lock)
	}
	lock, err := pidlock.Acquire(cfg.Lock, cfg.Wait)
	if errors.Is(err, pidlock.ErrHeld) {
		return nil, fmt.Errorf("another lab run is in progress %v: two at once overload the emulator of a small machine and invalidate each other's runs; wait for it to finish or pass --wait (on a machine with cores for several emulators, give each run its own --lock)", strings.TrimPrefix(err.Error(), pidlock.ErrHeld.Error()+" "))
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = lock.Release() }, nil
}

// selectRuns expands the scenario and returns the runs this invocation
// makes (after --only and --shard) and all that --only selects (the
// shard's whole, for the metadata).
func selectRuns(s *scenario.Scenario, cfg RunnerConfig) (runs, all []scenario.Run, err error) {
	runs, err = s.Expand(scenario.Options{Quick: cfg.Quick, Duration: cfg.Duration, Repetitions: cfg.Repetitions, FirstRep: cfg.FirstRep})
	if err != nil {
		return nil, nil, err
	}
	if runs, err = scenario.SelectRuns(runs, cfg.Only); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	all = runs
	if runs, err = cfg.Shard.Select(runs); err != nil {
		return nil, nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return runs, all, nil
}

// newMeta is the results directory's metadata at the start: the scenario,
// the options, the shard and what collectMeta records of this machine.
func newMeta(s *scenario.Scenario, cfg RunnerConfig, all []scenario.Run) *schema.Meta {
	meta := &schema.Meta{Scenario: s.Name, Description: s.Description, ScenarioSHA256: sha256Hex(s.Source()),
		Quick: cfg.Quick, Only: cfg.Only, Backend: cfg.Backend, Start: time.Now().UTC(), Failed: map[string]string{}}
	meta.RepetitionsOverride = cfg.Repetitions
	meta.FirstRep = cfg.FirstRep
	if cfg.Duration != 0 {
		meta.DurationOverride = cfg.Duration.String()
	}
	if !cfg.Shard.IsZero() {
		meta.Shard = cfg.Shard.String()
		for _, r := range all {
			meta.ShardOf = append(meta.ShardOf, r.ID)
		}
	}
	collectMeta(meta, cfg.Coopcc)
	return meta
}

// runAll makes the runs one after the other until ctx ends, logging each
// one's progress and result and recording it in meta (written after each).
func runAll(ctx context.Context, runs []scenario.Run, cfg RunnerConfig, meta *schema.Meta) *Summary {
	sum := &Summary{Out: cfg.Out}
	var overhead time.Duration // measured wall time beyond the traffic length, summed
	for i, r := range runs {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(cfg.Log, "[%d/%d] %s  (%v traffic, elapsed %v, ETA %v)\n", i+1, len(runs), r.ID,
			r.Length.D().Round(time.Second), time.Since(meta.Start).Round(time.Second), eta(runs[i:], overhead, i).Round(time.Second))
		t0 := time.Now()
		res, err := executeWithRetries(ctx, r, cfg, meta)
		took := time.Since(t0)
		overhead += took - r.Length.D()
		meta.Runs = append(meta.Runs, r.ID)
		sum.Runs++
		if err != nil {
			sum.Failed++
			meta.Failed[r.ID] = err.Error()
			fmt.Fprintf(cfg.Log, "        failed after %v: %v\n", took.Round(time.Second), err)
		} else {
			fmt.Fprintf(cfg.Log, "        done in %v: %s\n", took.Round(time.Second), progressLine(filepath.Join(cfg.Out, "runs", runDirName(r.ID)), res))
		}
		_ = writeJSON(filepath.Join(cfg.Out, "meta.json"), meta)
	}
	return sum
}

// executeWithRetries executes the run, and again, up to cfg.RetryBusyHost
// times, while the emulator marks it invalid on a busy host (busyHost): such
// a verdict is mostly the host's, not the run's (steal accrues only while
// the guest wants a CPU, so not wholly: meta.json names every retry). Each
// attempt set aside is kept under retried/ (keepAttempt).
func executeWithRetries(ctx context.Context, r scenario.Run, cfg RunnerConfig, meta *schema.Meta) (*schema.Run, error) {
	for attempt := 1; ; attempt++ {
		waitQuietHost(ctx, cfg.WaitQuietHost, cfg.Log, emu.HostSteal)
		res, err := executeRun(ctx, r, cfg)
		steal, busy := busyHost(res)
		if err != nil || !busy || attempt > cfg.RetryBusyHost || ctx.Err() != nil {
			return res, err
		}
		kept, err := keepAttempt(cfg.Out, r.ID, attempt)
		if err != nil {
			return res, err
		}
		if meta.Retried == nil {
			meta.Retried = map[string][]string{}
		}
		meta.Retried[r.ID] = append(meta.Retried[r.ID], kept+": "+res.InvalidReason)
		fmt.Fprintf(cfg.Log, "        invalid on a busy host (its hypervisor took %.0f %% of the CPU time): again (%d of %d more), this attempt kept in %s\n",
			100*steal, attempt, cfg.RetryBusyHost, kept)
	}
}

// waitQuietHost waits, up to limit, until a QuietSample of the host's steal
// (sample: emu.HostSteal) is under emu.StealNoted, saying so in log; past
// the limit it lets the run go, and says that too. Unknown steal (-1) is
// quiet: a machine without a hypervisor has none.
func waitQuietHost(ctx context.Context, limit time.Duration, log io.Writer, sample func(context.Context, time.Duration) float64) {
	if limit <= 0 {
		return
	}
	start := time.Now()
	for {
		steal := sample(ctx, QuietSample)
		if steal < emu.StealNoted || ctx.Err() != nil {
			return
		}
		if waited := time.Since(start); waited >= limit {
			fmt.Fprintf(log, "        the host is still busy after %v (its hypervisor took %.0f %% of the CPU time over %v): running anyway (--wait-quiet-host)\n",
				waited.Round(time.Second), 100*steal, QuietSample)
			return
		}
		fmt.Fprintf(log, "        waiting for a quiet host: its hypervisor took %.0f %% of the CPU time over %v (--wait-quiet-host)\n", 100*steal, QuietSample)
	}
}

// busyHost reports whether the emulator marked the run invalid while the
// machine's hypervisor took emu.StealNoted or more of its CPU time
// (emu.json cpu_steal), and that share.
func busyHost(res *schema.Run) (steal float64, busy bool) {
	if res == nil || res.Valid || len(res.Emu) == 0 {
		return 0, false
	}
	var v analysis.EmuStatus
	if json.Unmarshal(res.Emu, &v) != nil || v.Valid || v.CPUSteal == nil {
		return 0, false
	}
	return *v.CPUSteal, *v.CPUSteal >= emu.StealNoted
}

// keepAttempt moves the directory of attempt k of run id out of runs/, to
// retried/<dir>.attempt<k> (relative to out, which it returns): kept for
// inspection, left out of reports.
func keepAttempt(out, id string, k int) (string, error) {
	rel := filepath.Join("retried", fmt.Sprintf("%s.attempt%d", runDirName(id), k))
	if err := os.MkdirAll(filepath.Join(out, "retried"), 0o755); err != nil {
		return "", fmt.Errorf("keep the invalid attempt: %w", err)
	}
	if err := os.Rename(filepath.Join(out, "runs", runDirName(id)), filepath.Join(out, rel)); err != nil {
		return "", fmt.Errorf("keep the invalid attempt: %w", err)
	}
	return rel, nil
}

// eta is the time the runs left will take: their traffic and, per run, the
// mean overhead of the done runs so far (8 s before the first is done).
func eta(left []scenario.Run, overhead time.Duration, done int) time.Duration {
	per := 8 * time.Second
	if done > 0 {
		per = overhead / time.Duration(done)
	}
	var d time.Duration
	for _, r := range left {
		d += r.Length.D() + per
	}
	return d
}

// progressLine says how the run went in the numbers the report will show:
// it loads the run directory the way `coopcc lab report` does and
// summarises it (goodput over the union of the traffic windows and where it
// was measured, Jain, p95 RTT, validity including the capacity check). When the run cannot be
// loaded it falls back to run.json's verdict.
func progressLine(dir string, r *schema.Run) string {
	run, _, err := results.LoadRun(dir)
	if err != nil {
		v := "valid"
		if !r.Valid {
			v = "INVALID (" + r.InvalidReason + ")"
		}
		return fmt.Sprintf("%s (no summary: %v)", v, err)
	}
	s := analysis.Summarize(run, analysis.DefaultLossRule())
	v := "valid"
	if !s.Valid {
		v = "INVALID (" + s.InvalidReason + ")"
	}
	return fmt.Sprintf("aggregate %.2f Mbit/s (goodput from %s), Jain %.3f, p95 RTT %.0f ms, %s",
		s.AggregateMbps, s.GoodputSources(), s.Jain, s.RTT.P95, v)
}

// prepareOut creates the results directory; an existing non-empty one is
// refused so results are never mixed.
func prepareOut(out string) error {
	if out == "" {
		return errors.New("no results directory given")
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("results directory %s is not empty; choose another --out or remove it", out)
	}
	if err := os.MkdirAll(filepath.Join(out, "runs"), 0o755); err != nil {
		return fmt.Errorf("create results directory: %w", err)
	}
	return nil
}

// emuAvailable reports whether the coopcc binary has the emulator.
func emuAvailable(coopcc string) bool {
	return exec.Command(coopcc, "emu", "run", "--help").Run() == nil
}

// runDirName is the directory of a run under OUT/runs.
func runDirName(id string) string { return strings.ReplaceAll(id, "/", "_") }

// executeRun builds the testbed of one run, drives it and tears it down.
// It always writes run.json when the run directory could be created.
func executeRun(ctx context.Context, r scenario.Run, cfg RunnerConfig) (res *schema.Run, err error) {
	dir := filepath.Join(cfg.Out, "runs", runDirName(r.ID))
	if err := makeRunDir(dir); err != nil {
		return nil, err
	}
	rec := newRunRecorder(r, cfg, dir)
	res = rec.res
	// Registered first, so it runs last, on every way out (panics too):
	// after every teardown below has noted its error.
	defer func() { err = rec.finish(err) }()

	tmp, err := os.MkdirTemp("", "coopcc-lab-")
	if err != nil {
		return res, fmt.Errorf("create temp directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	tb, err := testbed.New(len(r.Stations))
	if err != nil {
		return res, err
	}
	defer func() { rec.note(tb.Close()) }()
	recordAddrs(res, tb)

	agents, err := prepareTestbed(ctx, r, tb, cfg, tmp, dir, res)
	if err != nil {
		return res, err
	}
	// Before the testbed's Close deletes the namespaces: what a killed agent
	// left (release).
	defer func() { rec.note(agents.release(cfg.Coopcc, tmp)) }()

	// Monitor sampling into flows.csv.
	smp, err := startSampler(r, tb, dir, cfg.SampleInterval)
	if err != nil {
		return res, err
	}
	defer rec.stopSampler(smp)

	// Agent status samples (scenarios with faults).
	if r.SampleAgents && agents != nil {
		as, err := startAgentSampler(agents, filepath.Join(dir, "agents.jsonl"), cfg.AgentSampleInterval)
		if err != nil {
			return res, err
		}
		defer func() { rec.note(as.stop()) }()
	}

	// Clients at their start times; the faults on their schedule.
	t0 := time.Now()
	res.TrafficStart = t0.UTC()
	faults := startFaults(r, tb, agents, t0, filepath.Join(tmp, "group.key"), cfg.Coopcc, dir)
	defer func() { res.Faults = faults.stop() }()
	if err := rec.runTraffic(ctx, r, tb, cfg.Log, t0, dir, smp, faults); err != nil {
		return res, err
	}
	rec.stopSampler(smp)
	rec.stopTestbed(tb, cfg.Backend, dir)
	res.GoodputBps = iperf3Goodputs(r, dir, rec.note)
	return res, nil
}

// makeRunDir creates a run's directory and the subdirectories its files go
// to.
func makeRunDir(dir string) error {
	for _, sub := range []string{"iperf3", "bounds", "emu", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("create run directory: %w", err)
		}
	}
	return nil
}

// runRecorder is the record of one run (run.json) while the run goes on:
// the errors that do not end the run are noted as they come, and finish
// writes the record however the run ends.
type runRecorder struct {
	res  *schema.Run
	dir  string   // the run's directory
	errs []string // noted errors, in order
}

// newRunRecorder starts the record of run r (runRecord) in dir, its start
// time now.
func newRunRecorder(r scenario.Run, cfg RunnerConfig, dir string) *runRecorder {
	rc := &runRecorder{res: runRecord(r, cfg), dir: dir}
	rc.res.Start = time.Now().UTC()
	return rc
}

// note records err, when not nil, among the run's errors.
func (rc *runRecorder) note(err error) {
	if err != nil {
		rc.errs = append(rc.errs, err.Error())
	}
}

// finish completes the record when the run ends, whichever way it ends:
// its end time, its errors (err, the run's own, last) and its validity (a
// run with errors is not valid; the first says why), written to run.json.
// It returns err, or when err is nil the error of writing run.json.
func (rc *runRecorder) finish(err error) error {
	res := rc.res
	res.End = time.Now().UTC()
	if err != nil {
		rc.note(err)
	}
	res.Errors = rc.errs
	if res.Valid && len(rc.errs) > 0 {
		res.Valid, res.InvalidReason = false, rc.errs[0]
	}
	if werr := writeJSON(filepath.Join(rc.dir, "run.json"), res); werr != nil && err == nil {
		return werr
	}
	return err
}

// stopSampler stops the monitor's sampling and records its rate; it may be
// called again (the sampler stops once).
func (rc *runRecorder) stopSampler(smp *sampler) {
	hz, err := smp.stop()
	rc.note(err)
	rc.res.SampleHz = hz
}

// runTraffic runs every station's client at its start time after t0,
// showing the progress on log meanwhile, and records how long the traffic
// lasted and the faults applied. A run interrupted (ctx done) is marked
// invalid and ends with ctx's error.
func (rc *runRecorder) runTraffic(ctx context.Context, r scenario.Run, tb *testbed.Testbed, log io.Writer, t0 time.Time, dir string, smp *sampler, faults *faultRunner) error {
	res := rc.res
	clientsDone := runClients(ctx, r, tb, t0, dir, smp.largestRTT, res, rc.note)
	stopTicker := progressTicker(log, r.Length.D(), t0)
	clientsDone()
	stopTicker()
	res.DurationS = time.Since(t0).Seconds()
	res.Faults = faults.stop()
	if ctx.Err() != nil {
		res.Valid, res.InvalidReason = false, "interrupted"
		return ctx.Err()
	}
	return nil
}

// stopTestbed stops the agents and servers, then the emulator (backend
// emu) so that it writes its statistics, whose validity goes into the
// record.
func (rc *runRecorder) stopTestbed(tb *testbed.Testbed, backend, dir string) {
	tb.StopProcs()
	if backend == testbed.BackendEmu {
		rc.note(tb.StopEmu())
		readEmuValidity(rc.res, filepath.Join(dir, "emu", "emu.json"))
	}
}

// recordAddrs records the testbed's addresses of the stations and the
// server in res.
func recordAddrs(res *schema.Run, tb *testbed.Testbed) {
	for i := range res.Stations {
		res.Stations[i].Addr = tb.Stations[i].Addr.String()
	}
	res.Server = tb.Server.Addr.String()
}

// prepareTestbed readies tb for the traffic of run r: it sets the
// namespaces' sysctls, connects the links, starts the agents (policy modes
// only; agents is nil otherwise) and the iperf3 servers, and records the
// sysctls in res.
func prepareTestbed(ctx context.Context, r scenario.Run, tb *testbed.Testbed, cfg RunnerConfig, tmp, dir string, res *schema.Run) (agents *agentSet, err error) {
	extraSysctls, err := setRunSysctls(tb, r)
	if err != nil {
		return nil, err
	}
	if err := connectLinks(ctx, r, tb, cfg, tmp, dir); err != nil {
		return nil, err
	}
	// Agents on managed stations in policy modes.
	if r.Mode.Kind == scenario.KindPolicy {
		if agents, err = startAgents(ctx, r, tb, cfg.Coopcc, tmp, dir); err != nil {
			return nil, err
		}
	}
	if err := startServers(ctx, r, tb, dir); err != nil {
		return nil, err
	}
	recordSysctls(res, r, tb, extraSysctls)
	return agents, nil
}

// recordSysctls records in res the namespaces' sysctls (recordedSysctls
// and the scenario's extra keys), with a warning for each agent's station
// whose default CC is not a coopcc_ one after its agent started.
func recordSysctls(res *schema.Run, r scenario.Run, tb *testbed.Testbed, extra []string) {
	res.Sysctls = tb.ReadSysctls(append(slices.Clone(recordedSysctls), extra...)...)
	for _, st := range r.Stations {
		if cc := res.Sysctls[st.Name]["net.ipv4.tcp_congestion_control"]; st.Agent && !strings.HasPrefix(cc, "coopcc") {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: namespace default CC is %q after its agent started (the agent's datapath did not install a coopcc_ CC; its flows may not be bounded CUBIC)", st.Name, cc))
		}
	}
}

// setRunSysctls sets each namespace's sysctls before any traffic or agent
// starts and returns the scenario's own keys that the run records beside
// recordedSysctls. The default CC of a namespace can only be set to an
// algorithm in the host's tcp_allowed_congestion_control; iperf3 is given -C
// anyway, so an EPERM there is not fatal. A key of the scenario's
// ([terminals] sysctl) that cannot be set fails the run.
func setRunSysctls(tb *testbed.Testbed, r scenario.Run) (extra []string, err error) {
	for i, nd := range tb.Nodes() {
		cc := serverCC(r)
		if i < len(r.Stations) {
			cc = r.Stations[i].CC
		}
		if err := tb.SetSysctls(nd, [][2]string{{"net.ipv4.tcp_no_metrics_save", "1"}}); err != nil {
			return nil, err
		}
		_ = tb.SetSysctls(nd, [][2]string{{"net.ipv4.tcp_congestion_control", cc}})
	}
	for i, st := range r.Stations {
		for _, k := range slices.Sorted(maps.Keys(st.Sysctl)) {
			if err := tb.SetSysctls(tb.Stations[i], [][2]string{{k, st.Sysctl[k]}}); err != nil {
				return nil, fmt.Errorf("%s: sysctl %s = %s: %w", st.Name, k, st.Sysctl[k], err)
			}
			if !slices.Contains(extra, k) && !slices.Contains(recordedSysctls, k) {
				extra = append(extra, k)
			}
		}
	}
	return extra, nil
}

// connectLinks joins the stations and the server: a plain bridge (veth
// backend) or the WLAN emulator, started and ready.
func connectLinks(ctx context.Context, r scenario.Run, tb *testbed.Testbed, cfg RunnerConfig, tmp, dir string) error {
	switch cfg.Backend {
	case testbed.BackendVeth:
		return tb.ConnectVeth()
	case testbed.BackendEmu:
		argv, err := emuCommand(r, tb, cfg.Coopcc, tmp, filepath.Join(dir, "emu"))
		if err != nil {
			return err
		}
		return tb.StartEmu(ctx, argv, filepath.Join(dir, "logs", "emu.log"), emuReadyTimeout)
	}
	return nil
}

// startServers starts one iperf3 server per station on the server, each on
// its own port, and waits until each listens.
func startServers(ctx context.Context, r scenario.Run, tb *testbed.Testbed, dir string) error {
	for i := range r.Stations {
		port := r.Traffic.Port + i
		logf, err := os.Create(filepath.Join(dir, "logs", fmt.Sprintf("iperf3-server-%d.log", port)))
		if err != nil {
			return fmt.Errorf("create iperf3 server log: %w", err)
		}
		p, err := tb.Exec(tb.Server, "iperf3 server", []string{"iperf3", "-s", "-p", strconv.Itoa(port)}, logf, logf, syscall.SIGKILL)
		logf.Close()
		if err != nil {
			return err
		}
		if err := p.WaitListen(ctx, port, 10*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// runClients starts every station's iperf3 client at its start time after
// t0 and returns a function that waits for all of them; each station's
// launch and exit times go into res, its error to note.
func runClients(ctx context.Context, r scenario.Run, tb *testbed.Testbed, t0 time.Time, dir string, largestRTT func(int) time.Duration, res *schema.Run, note func(error)) (wait func()) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range r.Stations {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			launched, exited, err := runClient(ctx, r, tb, i, t0, dir, largestRTT)
			mu.Lock()
			defer mu.Unlock()
			res.Stations[i].LaunchedS, res.Stations[i].ExitedS = launched.Seconds(), exited.Seconds()
			note(err)
		}(i)
	}
	return wg.Wait
}

// iperf3Goodputs reads each station's goodput from its iperf3 report; a
// report that cannot be read goes to note.
func iperf3Goodputs(r scenario.Run, dir string, note func(error)) map[string]float64 {
	out := map[string]float64{}
	for _, st := range r.Stations {
		g, err := iperf3Goodput(filepath.Join(dir, "iperf3", st.Name+".json"))
		if err != nil {
			note(err)
			continue
		}
		out[st.Name] = g
	}
	return out
}

// progressTicker prints the traffic phase's progress every 15 s for runs
// longer than 30 s; the returned function stops it.
func progressTicker(w io.Writer, length time.Duration, t0 time.Time) func() {
	if length <= 30*time.Second {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintf(w, "        t = %v / %v\n", time.Since(t0).Round(time.Second), length)
			}
		}
	}()
	return func() { close(quit) }
}

// serverCC is the kernel CC of the server namespace: the mode's for kernel
// modes (it is the sender of downloads), else cubic.
func serverCC(r scenario.Run) string {
	if r.Mode.Kind == scenario.KindKernel {
		return r.Mode.CC
	}
	return "cubic"
}

// runClient waits for the station's start time, runs its iperf3 client
// for its duration and stores the JSON report.
func runClient(ctx context.Context, r scenario.Run, tb *testbed.Testbed, i int, t0 time.Time, dir string, largestRTT func(int) time.Duration) (launched, exited time.Duration, err error) {
	st := r.Stations[i]
	select {
	case <-time.After(time.Until(t0.Add(st.Start.D()))):
	case <-ctx.Done():
		return 0, 0, nil
	}
	secs := strconv.FormatFloat((st.Stop.D() - st.Start.D()).Seconds(), 'f', 1, 64)
	argv := []string{"iperf3", "-c", tb.Server.Addr.String(), "-p", strconv.Itoa(r.Traffic.Port + i), "-t", secs,
		"-J", "--connect-timeout", "10000"}
	if st.Direction == "down" {
		argv = append(argv, "-R")
	}
	switch {
	case st.Direction == "down" && r.ServerAgent && st.Managed:
		// The server sends through its agent: its data socket must keep
		// the namespace default, the agent's bounded CUBIC.
	case st.Direction == "down":
		// The server sends: its sockets get the mode's CC (plain CUBIC
		// for policy modes, whose agents bound the terminals' advertised
		// windows instead).
		argv = append(argv, "-C", serverCC(r))
	case !st.Agent:
		// Explicit per socket: namespaces inherit the host's default (bbr
		// here), and a namespace default outside tcp_allowed_congestion_control
		// cannot be set. Managed stations keep the default their agent's
		// datapath installs.
		argv = append(argv, "-C", st.CC)
	}
	out, err := os.Create(filepath.Join(dir, "iperf3", st.Name+".json"))
	if err != nil {
		return 0, 0, fmt.Errorf("create iperf3 output: %w", err)
	}
	defer out.Close()
	errPath := filepath.Join(dir, "logs", "iperf3-"+st.Name+".err")
	errf, err := os.Create(errPath)
	if err != nil {
		return 0, 0, fmt.Errorf("create iperf3 log: %w", err)
	}
	defer errf.Close()
	nd := tb.Stations[i]
	launched = time.Since(t0)
	p, err := tb.Exec(nd, "iperf3 client "+st.Name, argv, out, errf, syscall.SIGKILL)
	if err != nil {
		return launched, launched, err
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go killLate(wctx, cancel, st.Stop.D()-st.Start.D(), clientGrace, func() time.Duration { return largestRTT(i) })
	if err := p.Wait(wctx); err != nil {
		_ = p.Stop(syscall.SIGKILL, time.Second)
		if ctx.Err() != nil {
			return launched, time.Since(t0), nil
		}
		if c := context.Cause(wctx); c != nil {
			err = c
		}
		return launched, time.Since(t0), fmt.Errorf("iperf3 client of %s: %v %s", st.Name, err, testbed.TailFile(errPath, 3))
	}
	return launched, time.Since(t0), nil
}

// killLate cancels ctx when a client that ran for d is still running
// grace + clientGraceRTTs × its largest RTT (sampled when d is over) later.
func killLate(ctx context.Context, cancel context.CancelCauseFunc, d, grace time.Duration, largestRTT func() time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return
	}
	rtt := largestRTT()
	wait := grace + clientGraceRTTs*rtt
	select {
	case <-time.After(wait):
		cancel(fmt.Errorf("still running %v after its schedule ended (%v + %d × its largest RTT, %v)", wait, grace, clientGraceRTTs, rtt))
	case <-ctx.Done():
	}
}

// agentSet is the agents of a run: those of its managed stations, indexed
// by station, and with agent.on = "server" the server's, at index
// len(r.Stations) (no fault names it). It keeps their command lines (to
// start one again after a kill fault) and their processes.
type agentSet struct {
	tb     *testbed.Testbed
	dir    string           // the run directory
	argv   map[int][]string // by station index
	procs  map[int]*testbed.Proc
	starts map[int]int          // how often each was started
	socks  map[int]string       // status sockets
	names  map[int]string       // station names ("srv" for the server)
	nodes  map[int]testbed.Node // the namespace each runs in
	skewAt map[int]time.Time    // when an agent with a skewed clock started
	mu     sync.Mutex
}

// startAgents starts `coopcc agent` in every managed station's namespace
// (with --clock-skew where a clock_skew fault asks for it), or with
// agent.on = "server" one agent in the server's namespace that bounds what
// it sends to the managed stations.
func startAgents(ctx context.Context, r scenario.Run, tb *testbed.Testbed, coopcc, tmp, dir string) (*agentSet, error) {
	keyPath := filepath.Join(tmp, "group.key")
	if err := writeGroupKey(keyPath); err != nil {
		return nil, err
	}
	as := &agentSet{tb: tb, dir: dir, argv: map[int][]string{}, procs: map[int]*testbed.Proc{}, starts: map[int]int{},
		socks: map[int]string{}, names: map[int]string{}, nodes: map[int]testbed.Node{}, skewAt: map[int]time.Time{}}
	skew := map[string]scenario.Offset{}
	for _, f := range r.Faults {
		if f.Kind == scenario.FaultClockSkew {
			for _, name := range f.Stations {
				skew[name] = f.Skew
			}
		}
	}
	type agent struct {
		i      int
		node   testbed.Node
		name   string
		params map[string]any
		dst    []string
	}
	var todo []agent
	for i, st := range r.Stations {
		if st.Agent {
			todo = append(todo, agent{i, tb.Stations[i], st.Name, st.PolicyParams, []string{tb.Server.Addr.String() + "/32"}})
		}
	}
	if r.ServerAgent {
		a := agent{i: len(r.Stations), node: tb.Server, name: tb.Server.Name, params: r.PolicyParams}
		for i, st := range r.Stations {
			if st.Managed {
				a.dst = append(a.dst, tb.Stations[i].Addr.String()+"/32")
			}
		}
		todo = append(todo, a)
	}
	var started []*testbed.Proc
	for _, a := range todo {
		sock := filepath.Join(tmp, a.name+".sock")
		argv := []string{coopcc, "agent", "--iface", a.node.Iface, "--policy", r.Mode.Policy, "--key-file", keyPath,
			"--group", labGroup, "--events", filepath.Join(dir, "bounds", a.name+".jsonl"),
			"--status-socket", sock, "--lock-dir", tmp, "--metrics-addr", "", "--log-format", "json"}
		for _, d := range a.dst {
			argv = append(argv, "--dst", d)
		}
		if a.i < len(r.Stations) { // a station's agent: its airtime as its driver would report it
			argv = append(argv, "--airtime-file", emu.AirtimeFile(airtimeDir(tmp), a.name))
		}
		for _, kv := range paramFlags("", a.params) {
			argv = append(argv, "--param", kv)
		}
		argv = append(argv, agentFlags(r)...)
		if d, ok := skew[a.name]; ok {
			argv = append(argv, "--clock-skew", d.String())
			as.skewAt[a.i] = time.Now()
		}
		as.argv[a.i], as.socks[a.i], as.names[a.i], as.nodes[a.i] = argv, sock, a.name, a.node
		p, err := as.start(a.i)
		if err != nil {
			return as, err
		}
		started = append(started, p)
	}
	// Give the agents time to load their datapath; one that exits is an error.
	select {
	case <-time.After(agentSettle):
	case <-ctx.Done():
		return as, ctx.Err()
	}
	for _, p := range started {
		if p.Exited() {
			name := strings.TrimPrefix(p.Name(), "agent ")
			return as, fmt.Errorf("agent of %s exited at start: %v: %s", name, p.Err(), testbed.TailFile(filepath.Join(dir, "logs", "agent-"+name+".log"), 3))
		}
	}
	return as, nil
}

// labGroup is the group id of the lab's agents (and of an insider).
const labGroup = "lab"

// start starts station i's agent: logs/agent-staK.log the first time,
// agent-staK.2.log after a restart. The events file is appended to.
func (as *agentSet) start(i int) (*testbed.Proc, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.starts[i]++
	name := as.names[i]
	logName := "agent-" + name + ".log"
	if k := as.starts[i]; k > 1 {
		logName = fmt.Sprintf("agent-%s.%d.log", name, k)
	}
	logf, err := os.Create(filepath.Join(as.dir, "logs", logName))
	if err != nil {
		return nil, fmt.Errorf("create agent log: %w", err)
	}
	defer logf.Close()
	p, err := as.tb.Exec(as.nodes[i], "agent "+name, as.argv[i], logf, logf, syscall.SIGTERM)
	if err != nil {
		return nil, err
	}
	as.procs[i] = p
	return p, nil
}

// kill sends SIGKILL to station i's agent and waits until it is gone.
func (as *agentSet) kill(i int) (pid int, err error) {
	as.mu.Lock()
	p := as.procs[i]
	as.mu.Unlock()
	if p == nil {
		return 0, fmt.Errorf("%s runs no agent", as.names[i])
	}
	if p.Exited() {
		return p.Pid(), fmt.Errorf("agent of %s had already exited: %v", as.names[i], p.Err())
	}
	_ = p.Stop(syscall.SIGKILL, 5*time.Second)
	return p.Pid(), nil
}

// pid is the pid of station i's current agent process (0 = none).
func (as *agentSet) pid(i int) int {
	as.mu.Lock()
	defer as.mu.Unlock()
	if p := as.procs[i]; p != nil {
		return p.Pid()
	}
	return 0
}

// agentFlags are the scenario's [agent] settings as flags.
func agentFlags(r scenario.Run) []string { return r.AgentArgs }

// writeGroupKey writes a fresh random group key for the run's agents.
func writeGroupKey(path string) error {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("generate group key: %w", err)
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		return fmt.Errorf("write group key: %w", err)
	}
	return nil
}

// paramFlags flattens [policy.NAME] values into the agent's --param
// key=value form, nested tables as dotted keys, in key order.
func paramFlags(prefix string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		switch v := m[k].(type) {
		case map[string]any:
			out = append(out, paramFlags(prefix+k+".", v)...)
		default:
			out = append(out, fmt.Sprintf("%s%s=%v", prefix, k, v))
		}
	}
	return out
}

// readEmuValidity copies the emulator's verdict into the run result.
func readEmuValidity(res *schema.Run, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		res.Valid, res.InvalidReason = false, "emulator wrote no emu.json"
		return
	}
	res.Emu = json.RawMessage(b)
	var v analysis.EmuStatus
	if err := json.Unmarshal(b, &v); err != nil {
		res.Valid, res.InvalidReason = false, "emu.json: "+err.Error()
		return
	}
	if !v.Valid {
		res.Valid = false
		res.InvalidReason = "emulator: " + v.Reason
		if v.Reason == "" {
			res.InvalidReason = "emulator marked the run invalid"
		}
	}
}
