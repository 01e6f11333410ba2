// Package results loads a lab results directory (the layout the lab runner
// writes, see BRIEF.md / docs/analysis.md) into the in-memory types of
// lab/analysis. Optional parts that are missing are tolerated and noted in
// Results.Warnings; malformed files are errors naming the file and what was
// wrong.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/schema"
)

// Results is one loaded results directory.
type Results struct {
	Dir      string
	Meta     map[string]any // meta.json as decoded (nil when absent), for display
	Info     *schema.Meta   // meta.json as the runner wrote it (nil when absent)
	Scenario string         // scenario.toml as run ("" when absent)
	Runs     []analysis.Run // sorted by run id
	Warnings []string       // missing optional parts, one line each
}

// retriedWarning says how many runs the runner ran again because the
// emulator had marked them invalid on a busy host (meta.json retried,
// `lab run --retry-busy-host`), "" when none: a reader should know how many
// runs of a group are a second or third try.
func retriedWarning(m schema.Meta) string {
	attempts := 0
	for _, a := range m.Retried {
		attempts += len(a)
	}
	if attempts == 0 {
		return ""
	}
	return fmt.Sprintf("%d run(s) were run again after %d attempt(s) the emulator marked invalid on a busy host (--retry-busy-host; the attempts in retried/, their reasons in meta.json retried)", len(m.Retried), attempts)
}

// Load reads the results directory dir.
func Load(dir string) (*Results, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("results directory %s is not a directory", dir)
	}
	res := &Results{Dir: dir}
	if b, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
		if err := json.Unmarshal(b, &res.Meta); err != nil {
			return nil, fmt.Errorf("%s: malformed JSON: %w", filepath.Join(dir, "meta.json"), err)
		}
		info, err := schema.DecodeMeta(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "meta.json"), err)
		}
		res.Info = &info
		if w := retriedWarning(info); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		res.Warnings = append(res.Warnings, "meta.json missing: no metadata")
	} else {
		return nil, fmt.Errorf("read meta.json: %w", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "scenario.toml")); err == nil {
		res.Scenario = string(b)
	}

	runsDir := filepath.Join(dir, "runs")
	ents, err := os.ReadDir(runsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s has no runs/ directory: is it a results directory written by `coopcc lab run`?", dir)
		}
		return nil, fmt.Errorf("list runs: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		// The runner writes run.json last: a run without it is still
		// running or was interrupted, and its half-written files are skipped.
		if _, err := os.Stat(filepath.Join(runsDir, e.Name(), "run.json")); errors.Is(err, fs.ErrNotExist) {
			res.Warnings = append(res.Warnings, e.Name()+": skipped, in progress or interrupted (no run.json)")
			continue
		}
		run, warns, err := LoadRun(filepath.Join(runsDir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, w := range warns {
			res.Warnings = append(res.Warnings, e.Name()+": "+w)
		}
		res.Runs = append(res.Runs, run)
	}
	if len(res.Runs) == 0 {
		return nil, fmt.Errorf("%s has no runs in runs/: nothing to report", dir)
	}
	sort.SliceStable(res.Runs, func(a, b int) bool { return res.Runs[a].Info.ID < res.Runs[b].Info.ID })
	return res, nil
}

// trafficZero returns the Unix time (s) of the run's traffic schedule zero:
// run.json's traffic_start when recorded; otherwise the first monitor sample
// t0 less the earliest iperf3 launch offset (the monitor shows a connection,
// SYN-SENT included, within one 50 ms sample of its launch); otherwise the
// run's start; 0 when none is known.
func trafficZero(info analysis.RunInfo, t0 float64) float64 {
	if !info.TrafficStart.IsZero() {
		return float64(info.TrafficStart.UnixMicro()) / 1e6
	}
	first, known := math.Inf(1), false
	for _, st := range info.Stations {
		if st.LaunchedS > 0 {
			first, known = math.Min(first, st.LaunchedS), true
		}
	}
	if known && t0 != 0 {
		return t0 - first
	}
	if !info.Start.IsZero() {
		return float64(info.Start.UnixMicro()) / 1e6
	}
	return 0
}

// LoadRun reads one run directory runs/<run-id>/. The run id is the
// directory's name. It returns warnings for missing optional parts.
func LoadRun(dir string) (analysis.Run, []string, error) {
	run := analysis.Run{Iperf: map[string]analysis.Iperf{}, Bounds: map[string][]analysis.BoundEvent{}}
	var warns []string
	warn := func(w string) { warns = append(warns, w) }
	receivers := func(r *analysis.Run, d string, _ func(string)) error { return loadReceivers(r, d) }
	for _, step := range []func(*analysis.Run, string, func(string)) error{
		loadInfo, loadIperf, loadFlows, receivers, loadBounds, loadEmu,
	} {
		if err := step(&run, dir, warn); err != nil {
			return run, nil, err
		}
	}
	return run, warns, nil
}

// loadInfo reads run.json; without it the run's mode, n, delay and rep
// come from the directory name and the run is marked invalid.
func loadInfo(run *analysis.Run, dir string, warn func(string)) error {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	switch {
	case err == nil:
		info, err := schema.DecodeRun(b)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
		}
		run.Info = info
	case errors.Is(err, fs.ErrNotExist):
		run.Info = InfoFromID(filepath.Base(dir))
		warn("run.json missing: mode, n, delay and rep taken from the directory name; validity unknown, marked invalid")
		run.Info.InvalidReason = "run.json missing"
	default:
		return fmt.Errorf("read run.json: %w", err)
	}
	run.Info.ID = filepath.Base(dir)
	return nil
}

// loadIperf reads iperf3/<station>.json. A client killed mid-run leaves an
// empty or cut report: the run is kept, marked invalid, and the rest of the
// directory loads.
func loadIperf(run *analysis.Run, dir string, warn func(string)) error {
	ips, err := filepath.Glob(filepath.Join(dir, "iperf3", "*.json"))
	if err != nil {
		return err
	}
	if len(ips) == 0 {
		warn("no iperf3 reports: goodput from flows.csv bytes_acked")
	}
	for _, p := range ips {
		station := strings.TrimSuffix(filepath.Base(p), ".json")
		ip, err := parseFile(p, ParseIperf)
		if err != nil {
			warn(err.Error() + ": run marked invalid")
			run.Info.Valid = false
			run.Info.InvalidReason = strings.TrimPrefix(strings.Join([]string{run.Info.InvalidReason, "unreadable iperf3 report of " + station}, "; "), "; ")
			continue
		}
		ip.Station = station
		run.Iperf[station] = ip
	}
	return nil
}

// loadFlows reads flows.csv and puts its Unix sample times on the traffic
// schedule's clock, the one start_s/stop_s (and so the goodput window) are
// on: run.json's traffic_start, else an estimate from the first sample,
// else the run's start (before the testbed was built: agents settling would
// then shift the window by seconds in policy modes only).
func loadFlows(run *analysis.Run, dir string, warn func(string)) error {
	p := filepath.Join(dir, "flows.csv")
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		warn("flows.csv missing: no RTT, cwnd or loss statistics")
		return nil
	} else if err != nil {
		return fmt.Errorf("open flows.csv: %w", err)
	}
	flows, t0, err := ParseFlowsCSV(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	run.Flows, run.T0 = flows, t0
	if start := trafficZero(run.Info, t0); t0 != 0 && start != 0 {
		if d := t0 - start; d > -86400 && d < 86400 {
			shiftSamples(run.Flows, d)
			run.T0 = start
		}
	}
	return nil
}

// loadBounds reads bounds/<station>.jsonl.
func loadBounds(run *analysis.Run, dir string, _ func(string)) error {
	bs, err := filepath.Glob(filepath.Join(dir, "bounds", "*.jsonl"))
	if err != nil {
		return err
	}
	for _, p := range bs {
		evs, err := parseFile(p, ParseBounds)
		if err != nil {
			return err
		}
		run.Bounds[strings.TrimSuffix(filepath.Base(p), ".jsonl")] = evs
	}
	return nil
}

// loadEmu reads the emulator's statistics (emu/).
func loadEmu(run *analysis.Run, dir string, warn func(string)) error {
	emuDir := filepath.Join(dir, "emu")
	if _, err := os.Stat(emuDir); err != nil {
		warn("emu/ missing: no airtime, AP queue or emulator validity")
		return nil
	}
	emu := &analysis.Emu{}
	if err := optional(filepath.Join(emuDir, "stations.csv"), ParseStationsCSV, &emu.Stations); err != nil {
		return err
	}
	if err := optional(filepath.Join(emuDir, "rates.csv"), ParseRatesCSV, &emu.Rates); err != nil {
		return err
	}
	if err := optional(filepath.Join(emuDir, "medium.csv"), ParseMediumCSV, &emu.Medium); err != nil {
		return err
	}
	if err := optional(filepath.Join(emuDir, "apqueue.csv"), ParseAPQueueCSV, &emu.Queue); err != nil {
		return err
	}
	if err := optional(filepath.Join(emuDir, "emu.json"), ParseEmuJSON, &emu.Status); err != nil {
		return err
	}
	if emu.Status == nil {
		warn("emu/emu.json missing: emulator validity unknown")
	}
	run.Emu = emu
	return nil
}

// parseFile opens path and parses it, prefixing errors with the path.
func parseFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// optional parses path into *dst if the file exists.
func optional[T any](path string, parse func(io.Reader) (T, error), dst *T) error {
	v, err := parseFile(path, parse)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// InfoFromID parses a run id of the form "mode=coop,n=10,delay=256ms,rep=1"
// (unknown keys go to Params, as strings). Missing fields stay zero.
func InfoFromID(id string) analysis.RunInfo {
	info := analysis.RunInfo{ID: id, Params: map[string]string{}}
	for _, part := range strings.Split(id, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		switch k {
		case "mode":
			info.Mode = v
		case "n":
			info.N, _ = strconv.Atoi(v)
		case "rep":
			info.Rep, _ = strconv.Atoi(v)
		case "delay":
			info.DelayMS, _ = strconv.ParseFloat(strings.TrimSuffix(v, "ms"), 64)
		default:
			info.Params[k] = v
		}
	}
	return info
}

// loadReceivers reads receivers.csv (the receiving sockets, labelled by
// station) onto the run's clock (run.T0, set from flows.csv); absent in runs
// recorded before the lab sampled receivers, and unusable without flows.csv's
// clock.
func loadReceivers(run *analysis.Run, dir string) error {
	p := filepath.Join(dir, "receivers.csv")
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open receivers.csv: %w", err)
	}
	defer f.Close()
	rx, t0, err := ParseFlowsCSV(f)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if t0 == 0 || run.T0 == 0 {
		return nil // no common clock with flows.csv
	}
	shiftSamples(rx, t0-run.T0)
	run.Receivers = rx
	return nil
}

// shiftSamples adds d seconds to the time of every sample of every series.
func shiftSamples(series []analysis.Series, d float64) {
	for fi := range series {
		for si := range series[fi].Samples {
			series[fi].Samples[si].T += d
		}
	}
}
