package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/coopcc/coopcc/monitor"
	"github.com/spf13/cobra"
)

// onceRateGap is the time between the two polls of `mon --once` (table),
// over which the throughput column is computed.
const onceRateGap = 250 * time.Millisecond

type monFlags struct {
	netns    string
	once     bool
	json     bool
	record   string
	interval time.Duration
	duration time.Duration
	iface    string
	src, dst string
	port     uint16
	states   []string
	all      bool
	trace    bool
}

func newMonCmd() *cobra.Command {
	var fl monFlags
	cmd := &cobra.Command{
		Use:   "mon",
		Short: "Show, record or trace the kernel's per-flow TCP state (cwnd, RTT, rates)",
		Long: `mon reads every TCP flow of a network namespace with one netlink inet_diag dump per
poll (struct tcp_info, the congestion-control name, socket memory).

  coopcc mon                          live table sorted by throughput (bytes_acked growth)
  coopcc mon --once --json            one machine-readable snapshot
  coopcc mon --record x.csv --interval 100ms   time series (CSV, or JSON lines for *.jsonl)
  coopcc mon --trace --port 5201 --record acks.csv   every ACK via the tcp:tcp_probe tracepoint

Loopback flows are hidden unless --all is given. Units: see docs/monitor.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMon(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.netns, "netns", "", "network namespace name (ip netns list) or path; default: the current one")
	f.BoolVar(&fl.once, "once", false, "take one snapshot, print it and exit")
	f.BoolVar(&fl.json, "json", false, "print JSON instead of a table (with --once)")
	f.StringVar(&fl.record, "record", "", "write samples to FILE, replacing it (CSV; JSON lines if FILE ends in .jsonl); - = stdout")
	f.DurationVar(&fl.interval, "interval", time.Second, "poll interval")
	f.DurationVar(&fl.duration, "duration", 0, "stop after this long (0 = until interrupted)")
	f.StringVar(&fl.iface, "iface", "", "only flows on this interface")
	f.StringVar(&fl.src, "src", "", "only flows whose local address is in this prefix or address")
	f.StringVar(&fl.dst, "dst", "", "only flows whose remote address is in this prefix or address")
	f.Uint16Var(&fl.port, "port", 0, "only flows with this local or remote port")
	f.StringSliceVar(&fl.states, "state", nil, "only flows in these TCP states (e.g. established,syn-sent); default: all connected states")
	f.BoolVar(&fl.all, "all", false, "include loopback flows")
	f.BoolVar(&fl.trace, "trace", false, "record every ACK of the selected flows (tcp:tcp_probe) instead of polling")
	return cmd
}

// parsePrefixFlag parses the value of flag --name as a filter prefix
// (monitor.ParsePrefix); empty selects everything.
func parsePrefixFlag(name, v string) (netip.Prefix, error) {
	if v == "" {
		return netip.Prefix{}, nil
	}
	p, err := monitor.ParsePrefix(v)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("--%s %w", name, err)
	}
	return p, nil
}

// options turns the flags into the monitor's options.
func (fl monFlags) options() (monitor.Options, error) {
	opts := monitor.Options{Netns: fl.netns}
	var err error
	if opts.Filter.Src, err = parsePrefixFlag("src", fl.src); err != nil {
		return opts, err
	}
	if opts.Filter.Dst, err = parsePrefixFlag("dst", fl.dst); err != nil {
		return opts, err
	}
	opts.Filter.Iface = fl.iface
	opts.Filter.Port = fl.port
	opts.Filter.IncludeLoopback = fl.all
	for _, s := range fl.states {
		st, ok := monitor.ParseState(strings.TrimSpace(s))
		if !ok {
			return opts, fmt.Errorf("--state %q: unknown TCP state (use established, syn-sent, fin-wait-1, close-wait, listen, ...)", s)
		}
		opts.Filter.States = append(opts.Filter.States, st)
	}
	return opts, nil
}

type snapshotWriter interface {
	Write(t time.Time, flows []monitor.Flow) error
}

// openRecord opens FILE ("-" = out) and returns the writer for its format.
func openRecord(path, netns string, out io.Writer) (snapshotWriter, func() error, error) {
	var w io.Writer = out
	closeFn := func() error { return nil }
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return nil, nil, fmt.Errorf("create record file: %w", err)
		}
		bw := bufio.NewWriterSize(f, 256<<10)
		w = bw
		closeFn = func() error {
			if err := bw.Flush(); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", path, err)
			}
			return f.Close()
		}
	}
	if strings.HasSuffix(path, ".jsonl") {
		return monitor.NewJSONLWriter(w, netns), closeFn, nil
	}
	return monitor.NewCSVWriter(w, netns), closeFn, nil
}

// runMon runs `coopcc mon`: it traces ACKs (--trace), prints one snapshot
// (--once without --record) or polls until ctx ends or --duration passes.
func runMon(ctx context.Context, out, errOut io.Writer, fl monFlags) error {
	opts, err := fl.checkedOptions()
	if err != nil {
		return err
	}
	if fl.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fl.duration)
		defer cancel()
	}
	if fl.trace {
		return runTrace(ctx, out, opts, fl.record, errOut)
	}
	m, err := monitor.New(opts)
	if err != nil {
		return err
	}
	defer m.Close()
	if fl.once && fl.record == "" {
		return printOnce(out, m, fl.netns, fl.json)
	}
	return pollMon(ctx, out, m, fl)
}

// checkedOptions checks the flags and how they combine, and returns the
// monitor options they select.
func (fl monFlags) checkedOptions() (monitor.Options, error) {
	if fl.interval <= 0 {
		return monitor.Options{}, fmt.Errorf("--interval %v: must be positive", fl.interval)
	}
	if fl.json && !fl.once {
		return monitor.Options{}, errors.New("--json needs --once (use --record FILE.jsonl for a JSON time series)")
	}
	opts, err := fl.options()
	if err != nil {
		return opts, err
	}
	if fl.trace && (fl.once || fl.json) {
		return opts, errors.New("--trace records until interrupted or --duration: it does not combine with --once/--json")
	}
	return opts, nil
}

// printOnce prints one snapshot of m as JSON or as a table. The table's
// throughput needs two polls: it takes a second one onceRateGap later.
func printOnce(out io.Writer, m *monitor.Monitor, netns string, asJSON bool) error {
	flows, err := m.Snapshot()
	if err != nil {
		return err
	}
	if asJSON {
		_, err = out.Write(monitor.MarshalSnapshot(time.Now(), netns, flows))
		return err
	}
	rates := monitor.NewRateTracker()
	rates.Update(time.Now(), flows)
	time.Sleep(onceRateGap)
	now := time.Now()
	if flows, err = m.Snapshot(); err != nil {
		return err
	}
	return monitor.WriteTable(out, flows, rates.Update(now, flows))
}

// pollMon polls m every --interval until ctx ends, or once with --once,
// and writes each snapshot to the --record file or as a live table.
func pollMon(ctx context.Context, out io.Writer, m *monitor.Monitor, fl monFlags) error {
	var rec snapshotWriter
	closeRec := func() error { return nil }
	if fl.record != "" {
		var err error
		if rec, closeRec, err = openRecord(fl.record, fl.netns, out); err != nil {
			return err
		}
	}
	rates := monitor.NewRateTracker()
	tick := time.NewTicker(fl.interval)
	defer tick.Stop()
	for {
		if err := pollOnce(out, m, rec, rates, fl); err != nil {
			closeRec()
			return err
		}
		if fl.once {
			return closeRec()
		}
		select {
		case <-ctx.Done():
			return closeRec()
		case <-tick.C:
		}
	}
}

// pollOnce takes one snapshot of m and writes it to rec or, when rec is
// nil, as a fresh screen of the live table.
func pollOnce(out io.Writer, m *monitor.Monitor, rec snapshotWriter, rates *monitor.RateTracker, fl monFlags) error {
	now := time.Now()
	flows, err := m.Snapshot()
	if err != nil {
		return err
	}
	if rec != nil {
		return rec.Write(now, flows)
	}
	r := rates.Update(now, flows)
	fmt.Fprintf(out, "\033[H\033[2J%s  netns=%q  flows=%d  every %v (Ctrl-C quits)\n\n",
		now.Format("15:04:05.000"), fl.netns, len(flows), fl.interval)
	return monitor.WriteTable(out, flows, r)
}

// runTrace records every ACK of the selected flows until ctx ends.
func runTrace(ctx context.Context, out io.Writer, opts monitor.Options, record string, errOut io.Writer) error {
	tr, err := monitor.NewTracer(opts)
	if err != nil {
		return err
	}
	if record == "" {
		record = "-"
	}
	var w io.Writer = out
	var bw *bufio.Writer
	var file *os.File
	if record != "-" {
		if file, err = os.Create(record); err != nil {
			tr.Close()
			return fmt.Errorf("create trace file: %w", err)
		}
		bw = bufio.NewWriterSize(file, 256<<10)
		w = bw
	}
	aw := monitor.NewACKWriter(w, opts.Netns, strings.HasSuffix(record, ".jsonl"))
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		tr.Close()
	}()
	var ev monitor.ACK
	var n uint64
	for {
		err = tr.Read(&ev)
		if err != nil {
			break
		}
		n++
		if err = aw.Write(&ev); err != nil {
			break
		}
	}
	dropped := tr.Dropped()
	close(done)
	if errors.Is(err, monitor.ErrTracerClosed) {
		err = nil
	}
	if bw != nil {
		if ferr := bw.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", record, ferr)
		}
		if cerr := file.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	fmt.Fprintf(errOut, "coopcc mon --trace: %d events recorded, %d dropped by the kernel (ring buffer full)\n", n, dropped)
	return err
}
