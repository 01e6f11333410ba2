package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Goodput sources, in order of preference.
//
// SourceWindow is the measure runs are compared by: bytes the receiver
// acknowledged inside the station's scheduled traffic window [start_s,
// stop_s], over the window's length. iperf3's own end.sum_received is an
// average over the flow's own lifetime, which can be much longer than the
// window: a flow starved while the others ran drains its multi-megabyte
// socket and station queue alone afterwards at the full rate, and summing
// such per-flow averages over-states the aggregate (seen: 49 Mbit/s "total"
// on a 24 Mbit/s medium). SourceReceiver is the same window measured at the
// receiving socket (bytes_received in receivers.csv), preferred when the run
// recorded it: the sender's bytes_acked counts data only once its ACK is
// back, and behind seconds of queued ACKs a window that closes while the
// queue still grows loses the last seconds of delivery (a 20 s window behind
// a queue growing to 3 s loses ~15 %). The other sources are fallbacks.
const (
	SourceReceiver = "receiver"  // receivers.csv bytes_received inside [start_s, stop_s]
	SourceWindow   = "window"    // flows.csv bytes_acked inside [start_s, stop_s]
	SourceIperf    = "iperf3"    // end.sum_received of the station's iperf3 report
	SourceAcked    = "flows.csv" // bytes_acked over the whole recording
)

// StationSummary is the per-station (per-terminal) result of one run.
type StationSummary struct {
	Station string
	Group   string // scenario group name ("" = none)
	Managed bool
	PHYMbps float64
	MaxMbps float64 // throughput alone (0 = unknown)
	// GoodputMbps is receiver-side goodput (NaN when the station has
	// neither an iperf3 report nor a data flow); GoodputSource says where it
	// came from.
	GoodputMbps   float64
	GoodputSource string
	IperfMbps     float64 // iperf3's end.sum_received over the flow's own lifetime (NaN = none), for cross-checks
	IperfError    string
	DataFlows     int
	RTT           Percentiles // SRTT of the station's data flows, ms
	Retrans       int
	Timeouts      int // CA-state-4 episodes
	LossEvents    []LossEvent
	BoundChanges  int
	// CompetingShare is the share of the station's traffic window its
	// policy spent in competitive mode, FirstCompetingS when it first
	// entered it, seconds into the window (CompetingTimes; NaN: no mode
	// recorded, or never).
	CompetingShare, FirstCompetingS float64
	Airtime                         float64 // emulator airtime share (NaN when unknown)
	Cwnd                            CwndStats
	// TxFrames, QueueDrops and RetryDrops are the emulator's counts for the
	// station (emu/stations.csv; zero when absent).
	TxFrames, QueueDrops, RetryDrops uint64
}

// RunSummary is the result of one run.
type RunSummary struct {
	ID      string
	Group   string // the run group: ID without its repetition
	Mode    string
	N       int
	DelayMS float64
	Rep     int
	Params  map[string]string
	// Valid is run.json's flag, and-ed with emu.json's and with every iperf3
	// report being error-free; InvalidReason says why not.
	Valid         bool
	InvalidReason string
	Stations      []StationSummary

	// AggregateMbps is the bytes all stations delivered inside their traffic
	// windows over the length of the union of those windows: with staggered
	// windows (terminals joining and leaving) summing per-station rates
	// would add rates that never ran at the same time.
	AggregateMbps float64
	// CapacityMbps is the medium's physical ceiling (see Capacity; NaN when
	// the run does not say its PHY). A run whose aggregate exceeds it is
	// marked invalid: that is a measurement bug, not a result.
	CapacityMbps     float64
	Jain             float64
	WeightedFairness float64 // NaN unless every station's MaxMbps is known
	ManagedMbps      float64 // mean goodput of managed stations (NaN if none)
	UnmanagedMbps    float64 // mean goodput of unmanaged stations (NaN if none)
	// ManagedRatio is ManagedMbps / UnmanagedMbps (NaN unless the run has
	// both kinds of station).
	ManagedRatio float64
	// CompetingShare is the mean over the stations whose events name a
	// mode of the share of their traffic window in competitive mode
	// (StationSummary.CompetingShare; NaN when none does).
	CompetingShare float64
	// CPUSteal is the share of the machine's CPU time its hypervisor took
	// during the run (emu.json cpu_steal; NaN when unknown).
	CPUSteal float64
	// GroupMbps is the mean goodput per terminal of each station group
	// (StationGroup), GroupCount how many stations with goodput each has.
	GroupMbps  map[string]float64
	GroupCount map[string]int
	RTT        Percentiles // pooled SRTT samples of all data flows, ms
	Retrans    int
	Timeouts   int
	Penalizing int
	Moderate   int
	APDrops    float64 // last drops_total of apqueue.csv (NaN when absent)
	APQueueP95 float64 // p95 AP queue occupancy, frames (NaN when absent)
	// Medium sums the emulator's counters (HasMedium false without
	// emu/stations.csv).
	Medium    Medium
	HasMedium bool
	// SRTTGoodputCorr is SRTTGoodputCorr pooled over every station's data
	// flows, each over its traffic window (NaN when undefined).
	SRTTGoodputCorr float64
}

// GoodputSources names where the stations' goodput came from (Source*
// constants), each once in order of first appearance, joined by "+"; ""
// when no station has one.
func (s RunSummary) GoodputSources() string {
	var srcs []string
	for _, st := range s.Stations {
		if st.GoodputSource != "" && !slices.Contains(srcs, st.GoodputSource) {
			srcs = append(srcs, st.GoodputSource)
		}
	}
	return strings.Join(srcs, "+")
}

// Summarize computes the run's metrics.
func Summarize(run Run, rule LossRule) RunSummary {
	info := run.Info
	rs := RunSummary{
		ID: info.ID, Group: GroupKey(info), Mode: info.Mode, N: info.N, DelayMS: info.DelayMS,
		Rep: info.Rep, Params: info.Params, Valid: info.Valid, InvalidReason: info.InvalidReason,
	}
	var reasons []string
	rs.Valid, reasons = runValidity(run)
	rs.Medium, rs.HasMedium = MediumOf(run.Emu)
	rs.CPUSteal = math.NaN()
	if run.Emu != nil && run.Emu.Status != nil && run.Emu.Status.CPUSteal != nil && *run.Emu.Status.CPUSteal >= 0 {
		rs.CPUSteal = *run.Emu.Status.CPUSteal
	}
	rs.APDrops, rs.APQueueP95 = apQueueStats(run.Emu)
	emuSta := map[string]EmuStation{}
	if run.Emu != nil {
		for _, st := range run.Emu.Stations {
			emuSta[st.Station] = st
		}
	}
	var acc stationTotals
	for _, st := range stationsOf(run) {
		ss, smp, why := summarizeStation(run, st, rule, emuSta)
		if len(why) > 0 {
			reasons = append(reasons, why...)
			rs.Valid = false
		}
		if math.IsNaN(ss.GoodputMbps) && len(info.Stations) > 0 {
			// A terminal of the scenario without any measurement would make the
			// aggregate too low and Jain too high: the run is incomplete.
			if info.Valid { // a failed run says why itself; do not bury that
				reasons = append(reasons, fmt.Sprintf("%s: no goodput (no iperf3 report, no data flow in flows.csv)", st.Name))
			}
			rs.Valid = false
		}
		for _, e := range ss.LossEvents {
			switch e.Class {
			case Penalizing:
				rs.Penalizing++
			case Moderate:
				rs.Moderate++
			}
		}
		rs.Retrans += ss.Retrans
		rs.Timeouts += ss.Timeouts
		acc.add(st, ss, smp)
		rs.Stations = append(rs.Stations, ss)
	}
	reasons = append(reasons, acc.fill(&rs, info)...)
	rs.RTT = PercentilesOf(acc.rtt)
	rs.SRTTGoodputCorr = pearson(acc.corrX, acc.corrY)
	rs.InvalidReason = strings.Join(reasons, "; ")
	return rs
}

// runValidity is the run's validity before its stations are looked at
// (the lab's verdict in run.json and the emulator's), with the reasons
// when it is not valid.
func runValidity(run Run) (valid bool, reasons []string) {
	valid = run.Info.Valid
	if !valid {
		r := run.Info.InvalidReason
		if r == "" {
			r = "run.json: valid=false"
		}
		reasons = append(reasons, r)
	}
	if e := run.Emu; e != nil && e.Status != nil && !e.Status.Valid {
		valid = false
		r := "emulator overloaded"
		if e.Status.Reason != "" {
			r = "emulator: " + e.Status.Reason
		}
		if !strings.Contains(strings.Join(reasons, "; "), r) {
			reasons = append(reasons, r)
		}
	}
	return valid, reasons
}

// apQueueStats returns the AP's drops over the run and the 95th percentile
// of its queue (frames); NaN without the emulator's queue log.
func apQueueStats(e *Emu) (drops, p95 float64) {
	if e == nil || len(e.Queue) == 0 {
		return math.NaN(), math.NaN()
	}
	q := e.Queue
	fr := make([]float64, len(q))
	for i, s := range q {
		fr[i] = float64(s.Frames)
	}
	return float64(q[len(q)-1].DropsTotal), Percentile(fr, 95)
}

// summarizeStation summarizes one station of run: its flows, RTTs, losses
// and goodput (from the receiver over its schedule when the recording covers
// it, else iperf3's report, else what its flows had acknowledged), and the
// samples the run's statistics pool. why says what makes the run invalid
// because of this station (an iperf3 error).
func summarizeStation(run Run, st Station, rule LossRule, emuSta map[string]EmuStation) (ss StationSummary, smp stationSamples, why []string) {
	ss = StationSummary{Station: st.Name, Group: st.Group, Managed: st.Managed, PHYMbps: st.PHYMbps, MaxMbps: st.MaxMbps,
		GoodputMbps: math.NaN(), IperfMbps: math.NaN(), Airtime: math.NaN(), BoundChanges: len(run.Bounds[st.Name])}
	ss.CompetingShare, ss.FirstCompetingS = CompetingTimes(run, StationBounds(run, st.Name), st.StartS, stopOf(st, run.Info.LengthS))
	if e, ok := emuSta[st.Name]; ok {
		ss.Airtime = e.AirtimeShare
		ss.TxFrames, ss.QueueDrops, ss.RetryDrops = e.TxFrames, e.QueueDrops, e.RetryDrops
	}
	flows := DataFlows(run.Flows, st.Name)
	ss.DataFlows = len(flows)
	ss.Cwnd = CwndOf(flows)
	var rtts []float64
	var acked float64
	var first, last float64 = math.Inf(1), math.Inf(-1)
	for _, f := range flows {
		rtts = append(rtts, SRTTsMs(f)...)
		ss.Retrans += Retransmissions(f)
		ss.Timeouts += LossEpisodes(f)
		ss.LossEvents = append(ss.LossEvents, LossEvents(f, rule)...)
		acked += float64(AckedBytes(f))
		first = math.Min(first, f.Samples[0].T)
		last = math.Max(last, f.Samples[len(f.Samples)-1].T)
	}
	ss.RTT = PercentilesOf(rtts)
	smp.rtts = rtts
	from, to := st.StartS, st.StopS
	if to <= from && len(flows) > 0 { // no schedule: the whole recording
		from, to = first, last
	}
	smp.corrX, smp.corrY = srttGoodputPairs(flows, from, to)
	windowBytes, covered := 0.0, len(flows) > 0 && st.StopS > st.StartS && recordedUntil(run) >= st.StopS-windowSlack
	source := SourceWindow
	if rx := ReceiverFlows(run.Receivers, st.Name); covered && len(rx) > 0 {
		source = SourceReceiver
		for _, f := range rx {
			windowBytes += ReceivedInWindow(f, st.StartS, st.StopS)
		}
	} else {
		for _, f := range flows {
			windowBytes += AckedInWindow(f, st.StartS, st.StopS)
		}
	}
	ip, haveIperf := run.Iperf[st.Name]
	if haveIperf && ip.ReceivedSeconds > 0 {
		ss.IperfMbps = ip.GoodputMbps()
	}
	switch {
	case covered:
		ss.GoodputMbps, ss.GoodputSource = windowBytes*8/(st.StopS-st.StartS)/1e6, source
	case !math.IsNaN(ss.IperfMbps):
		ss.GoodputMbps, ss.GoodputSource = ss.IperfMbps, SourceIperf
	case len(flows) > 0 && last > first:
		ss.GoodputMbps, ss.GoodputSource = acked*8/(last-first)/1e6, SourceAcked
	}
	if haveIperf && ip.Error != "" {
		ss.IperfError = ip.Error
		why = append(why, fmt.Sprintf("iperf3 on %s: %s", st.Name, ip.Error))
	}
	return ss, smp, why
}

// stationSamples are one station's samples that the run's statistics pool:
// its SRTTs (ms) and its per-second (SRTT, goodput) pairs.
type stationSamples struct {
	rtts, corrX, corrY []float64
}

// stationTotals collects the stations' summaries for the run's aggregates.
type stationTotals struct {
	goodputs, managed, unmanaged, maxs []float64
	competing                          []float64 // the stations' CompetingShare (NaN: no mode recorded)
	windows                            []stationWindow
	byGroup                            map[string][]float64
	missingMax                         bool
	rtt, corrX, corrY                  []float64
}

// add takes one station's summary and samples.
func (t *stationTotals) add(st Station, ss StationSummary, smp stationSamples) {
	t.rtt = append(t.rtt, smp.rtts...)
	t.corrX, t.corrY = append(t.corrX, smp.corrX...), append(t.corrY, smp.corrY...)
	t.competing = append(t.competing, ss.CompetingShare)
	if math.IsNaN(ss.GoodputMbps) {
		return
	}
	t.goodputs = append(t.goodputs, ss.GoodputMbps)
	t.windows = append(t.windows, stationWindow{st.StartS, st.StopS, ss.GoodputMbps})
	if st.Managed {
		t.managed = append(t.managed, ss.GoodputMbps)
	} else {
		t.unmanaged = append(t.unmanaged, ss.GoodputMbps)
	}
	if t.byGroup == nil {
		t.byGroup = map[string][]float64{}
	}
	t.byGroup[StationGroup(st)] = append(t.byGroup[StationGroup(st)], ss.GoodputMbps)
	t.maxs = append(t.maxs, st.MaxMbps)
	t.missingMax = t.missingMax || !(st.MaxMbps > 0)
}

// fill sets the run's aggregates from the stations: the aggregate goodput
// (checked against what the medium can carry), Jain's index, the managed and
// unmanaged means, the per-group means and the weighted fairness. It
// returns what makes the run invalid (an aggregate physics forbids).
func (t *stationTotals) fill(rs *RunSummary, info RunInfo) (why []string) {
	rs.AggregateMbps, rs.Jain = math.NaN(), math.NaN()
	if len(t.goodputs) > 0 {
		rs.AggregateMbps = unionAggregate(t.windows)
		rs.Jain = Jain(t.goodputs)
	}
	rs.CapacityMbps = math.NaN()
	if c, ok, err := Capacity(info); err != nil {
		why = append(why, err.Error())
	} else if ok {
		rs.CapacityMbps = c
		if rs.AggregateMbps > c*(1+CapacityTolerance) {
			rs.Valid = false
			why = append(why, fmt.Sprintf("aggregate %.1f Mbit/s is above what the medium can carry (%.1f Mbit/s): a measurement error, not a result", rs.AggregateMbps, c))
		}
	}
	rs.ManagedMbps, rs.UnmanagedMbps = StatOf(t.managed).Mean, StatOf(t.unmanaged).Mean
	rs.ManagedRatio = rs.ManagedMbps / rs.UnmanagedMbps // NaN when either is
	rs.CompetingShare = StatOf(t.competing).Mean
	rs.GroupMbps, rs.GroupCount = map[string]float64{}, map[string]int{}
	for g, v := range t.byGroup {
		rs.GroupMbps[g], rs.GroupCount[g] = StatOf(v).Mean, len(v)
	}
	rs.WeightedFairness = math.NaN()
	if !t.missingMax && len(t.goodputs) > 0 {
		rs.WeightedFairness, _ = WeightedFairness(t.goodputs, t.maxs)
	}
	return why
}

// stationWindow is one station's traffic window and its goodput over it.
type stationWindow struct{ start, stop, mbps float64 }

// unionAggregate returns Σ mbpsᵢ·lenᵢ / |∪ windows|: the delivered bits over
// the time any station was scheduled to send. When a station has no window
// (older results) it falls back to the plain sum of rates.
func unionAggregate(ws []stationWindow) float64 {
	var bits float64
	for _, w := range ws {
		if w.stop <= w.start {
			total := 0.0
			for _, v := range ws {
				total += v.mbps
			}
			return total
		}
		bits += w.mbps * (w.stop - w.start)
	}
	sorted := append([]stationWindow(nil), ws...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	union, curStart, curStop := 0.0, math.Inf(-1), math.Inf(-1)
	for _, w := range sorted {
		if w.start > curStop {
			if curStop > curStart {
				union += curStop - curStart
			}
			curStart, curStop = w.start, w.stop
			continue
		}
		curStop = math.Max(curStop, w.stop)
	}
	union += curStop - curStart
	if union <= 0 {
		return math.NaN()
	}
	return bits / union
}

// StationGroup is the station's group for per-group means: its scenario
// group name, else "managed" or "unmanaged".
func StationGroup(st Station) string {
	switch {
	case st.Group != "":
		return st.Group
	case st.Managed:
		return "managed"
	default:
		return "unmanaged"
	}
}

// stationsOf returns the run's stations: run.json's list, or — when it is
// empty — one unmanaged station per iperf3 report and per monitored netns.
func stationsOf(run Run) []Station {
	if len(run.Info.Stations) > 0 {
		return run.Info.Stations
	}
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for n := range run.Iperf {
		add(n)
	}
	for _, f := range run.Flows {
		if len(DataFlows([]Series{f}, f.Key.Station)) > 0 {
			add(f.Key.Station)
		}
	}
	sort.Strings(names)
	out := make([]Station, len(names))
	for i, n := range names {
		out[i] = Station{Name: n}
	}
	return out
}

// GroupKey is the run's identity without its repetition number: the run id
// with its "rep=…" element removed, or "mode=…,n=…,delay=…ms" when the run has
// no id.
func GroupKey(info RunInfo) string {
	if info.ID != "" {
		parts := strings.Split(info.ID, ",")
		kept := parts[:0]
		for _, p := range parts {
			if !strings.HasPrefix(strings.TrimSpace(p), "rep=") {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			return strings.Join(kept, ",")
		}
	}
	return fmt.Sprintf("mode=%s,n=%d,delay=%gms", info.Mode, info.N, info.DelayMS)
}

// GroupSummary aggregates the repetitions of one run group. The statistics
// are over the valid runs only; ValidRuns of len(Runs) were valid.
type GroupSummary struct {
	Key       string
	Mode      string
	N         int
	DelayMS   float64
	Params    map[string]string
	Runs      []RunSummary
	ValidRuns int

	AggregateMbps    Stat
	Jain             Stat
	WeightedFairness Stat
	ManagedMbps      Stat
	UnmanagedMbps    Stat
	// ManagedRatio is the runs' ManagedRatio; BaselineRatio the same
	// ratio for the same stations in the group's baseline runs, where no
	// station is managed (see BaselineRatios): what those terminals got
	// beside the others when nobody ran coopcc.
	ManagedRatio  Stat
	BaselineRatio Stat
	// CompetingShare is the runs' CompetingShare: how much of the time
	// the policy competed (coop beside hosts without coopcc).
	CompetingShare Stat
	GroupMbps      map[string]Stat // per station group, over valid runs
	P50RTTms       Stat
	P95RTTms       Stat
	P99RTTms       Stat
	Retrans        Stat
	Timeouts       Stat
	Penalizing     Stat
	Moderate       Stat
}

// knownModes is the order modes are listed in: no middleware first, then
// the papers' rules in date order, ours, and the kernel's alternative.
var knownModes = []string{"cubic", "static", "hirai2013", "hayakawa2015", "hayakawa2016", "coop", "bbr"}

// ModeLess orders modes: knownModes first in their order, then others alphabetically.
func ModeLess(a, b string) bool {
	ra, rb := len(knownModes), len(knownModes)
	for i, m := range knownModes {
		if m == a {
			ra = i
		}
		if m == b {
			rb = i
		}
	}
	if ra != rb {
		return ra < rb
	}
	return a < b
}

// Group gathers runs by GroupKey and aggregates each group over its valid
// repetitions. Groups come sorted by delay, mode (ModeLess), N and key.
func Group(runs []RunSummary) []GroupSummary {
	byKey := map[string]*GroupSummary{}
	var keys []string
	for _, r := range runs {
		g, ok := byKey[r.Group]
		if !ok {
			g = &GroupSummary{Key: r.Group, Mode: r.Mode, N: r.N, DelayMS: r.DelayMS, Params: r.Params}
			byKey[r.Group] = g
			keys = append(keys, r.Group)
		}
		g.Runs = append(g.Runs, r)
	}
	out := make([]GroupSummary, 0, len(keys))
	for _, k := range keys {
		g := byKey[k]
		sort.SliceStable(g.Runs, func(a, b int) bool { return g.Runs[a].Rep < g.Runs[b].Rep })
		col := func(f func(RunSummary) float64) Stat {
			var xs []float64
			for _, r := range g.Runs {
				if r.Valid {
					xs = append(xs, f(r))
				}
			}
			return StatOf(xs)
		}
		for _, r := range g.Runs {
			if r.Valid {
				g.ValidRuns++
			}
		}
		g.AggregateMbps = col(func(r RunSummary) float64 { return r.AggregateMbps })
		g.Jain = col(func(r RunSummary) float64 { return r.Jain })
		g.WeightedFairness = col(func(r RunSummary) float64 { return r.WeightedFairness })
		g.ManagedMbps = col(func(r RunSummary) float64 { return r.ManagedMbps })
		g.UnmanagedMbps = col(func(r RunSummary) float64 { return r.UnmanagedMbps })
		g.ManagedRatio = col(func(r RunSummary) float64 { return r.ManagedRatio })
		g.CompetingShare = col(func(r RunSummary) float64 { return r.CompetingShare })
		g.GroupMbps = map[string]Stat{}
		for _, r := range g.Runs {
			for name := range r.GroupMbps {
				if _, done := g.GroupMbps[name]; !done {
					g.GroupMbps[name] = col(func(r RunSummary) float64 {
						if v, ok := r.GroupMbps[name]; ok {
							return v
						}
						return math.NaN()
					})
				}
			}
		}
		g.P50RTTms = col(func(r RunSummary) float64 { return r.RTT.P50 })
		g.P95RTTms = col(func(r RunSummary) float64 { return r.RTT.P95 })
		g.P99RTTms = col(func(r RunSummary) float64 { return r.RTT.P99 })
		g.Retrans = col(func(r RunSummary) float64 { return float64(r.Retrans) })
		g.Timeouts = col(func(r RunSummary) float64 { return float64(r.Timeouts) })
		g.Penalizing = col(func(r RunSummary) float64 { return float64(r.Penalizing) })
		g.Moderate = col(func(r RunSummary) float64 { return float64(r.Moderate) })
		out = append(out, *g)
	}
	BaselineRatios(out)
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.DelayMS != y.DelayMS {
			return x.DelayMS < y.DelayMS
		}
		if x.Mode != y.Mode {
			return ModeLess(x.Mode, y.Mode)
		}
		if x.N != y.N {
			return x.N < y.N
		}
		return x.Key < y.Key
	})
	return out
}

// FillMaxFromReference sets MaxMbps (throughput alone, papers/003) of every
// station that lacks it from reference runs, then recomputes the runs'
// weighted fairness. **[interpretation]** A reference run for a station is a
// valid run with one station with goodput, of the same kind (same group name
// and PHY rate, or the same station name when it has no group), the same
// wired delay and the same other sweep parameters (Variant: the run group
// without mode, N and alone); Maxᵢ is the mean goodput over those runs, whatever their mode
// (alone on the network the modes hardly differ). Runs are changed in place.
func FillMaxFromReference(runs []RunSummary) {
	type key struct {
		kind    string
		delay   float64
		variant string
	}
	kindOf := func(st StationSummary) string {
		if st.Group != "" {
			return fmt.Sprintf("group=%s,phy=%g", st.Group, st.PHYMbps)
		}
		return "station=" + st.Station
	}
	acc := map[key][]float64{}
	for _, r := range runs {
		if !r.Valid {
			continue
		}
		var only *StationSummary
		n := 0
		for i := range r.Stations {
			if !math.IsNaN(r.Stations[i].GoodputMbps) {
				n++
				only = &r.Stations[i]
			}
		}
		if n == 1 {
			k := key{kindOf(*only), r.DelayMS, Variant(r.Group)}
			acc[k] = append(acc[k], only.GoodputMbps)
		}
	}
	for ri := range runs {
		r := &runs[ri]
		var xs, maxs []float64
		ok := true
		for si := range r.Stations {
			st := &r.Stations[si]
			if !(st.MaxMbps > 0) {
				if v := acc[key{kindOf(*st), r.DelayMS, Variant(r.Group)}]; len(v) > 0 {
					st.MaxMbps = StatOf(v).Mean
				}
			}
			if math.IsNaN(st.GoodputMbps) {
				continue
			}
			xs = append(xs, st.GoodputMbps)
			maxs = append(maxs, st.MaxMbps)
			ok = ok && st.MaxMbps > 0
		}
		if ok && len(xs) > 0 {
			r.WeightedFairness, _ = WeightedFairness(xs, maxs)
		}
	}
}

// Variant is a run group key without its mode, n, delay, rep and alone
// elements: the other parameters the sweep varied ("" when none). A run of
// one terminal alone (sweep.alone) therefore shares its variant with the
// runs of all terminals at the same point.
func Variant(group string) string {
	return withoutParams(group, "mode", "n", "delay", "rep", "alone")
}

// withoutParams drops the key=value elements of the given keys from a
// comma-separated run-group string.
func withoutParams(group string, keys ...string) string {
	var kept []string
	for _, p := range strings.Split(group, ",") {
		if k, _, _ := strings.Cut(p, "="); p != "" && !slices.Contains(keys, k) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ",")
}

// BaselineRatios sets the BaselineRatio of every group with managed
// stations: its baseline groups are those whose key differs only in the
// "managed" parameter and whose runs manage no station (the coexistence
// preset's managed = 0 rows); in each valid baseline run, the ratio is the
// mean goodput of the stations (by name) that the group's runs manage over
// that of the others. **[interpretation]** This is the "doing nothing"
// reference of papers/000's coexistence figures: which terminals get more
// varies from run to run, and a ratio must be compared with what the same
// terminals got without coopcc, not with 1.
func BaselineRatios(groups []GroupSummary) {
	for i := range groups {
		g := &groups[i]
		g.BaselineRatio = StatOf(nil)
		names := map[string]bool{}
		for _, r := range g.Runs {
			for _, st := range r.Stations {
				if st.Managed {
					names[st.Station] = true
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		key := withoutParams(g.Key, "managed")
		var xs []float64
		for _, b := range groups {
			if b.Key == g.Key || withoutParams(b.Key, "managed") != key {
				continue
			}
			for _, r := range b.Runs {
				if x := ratioOf(r, names); r.Valid && !math.IsNaN(x) {
					xs = append(xs, x)
				}
			}
		}
		g.BaselineRatio = StatOf(xs)
	}
}

// ratioOf is the mean goodput of r's stations named in names over that of
// its other stations; NaN when r manages any station or either side has no
// goodput.
func ratioOf(r RunSummary, names map[string]bool) float64 {
	var in, out []float64
	for _, st := range r.Stations {
		if st.Managed {
			return math.NaN()
		}
		if math.IsNaN(st.GoodputMbps) {
			continue
		}
		if names[st.Station] {
			in = append(in, st.GoodputMbps)
		} else {
			out = append(out, st.GoodputMbps)
		}
	}
	return StatOf(in).Mean / StatOf(out).Mean
}
