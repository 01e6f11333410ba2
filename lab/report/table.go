package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/coopcc/coopcc/lab/analysis"
)

// fmtNum formats x with prec decimals, "–" when NaN.
func fmtNum(x float64, prec int) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// fmtStat is "mean" for one value, "mean ±ci95 (min–max)" for several
// (the half-width of the Student-t 95 % confidence interval of the mean, and
// the range), "–" for none. When fewer repetitions than the group's reps
// have the metric (an RTT without flows.csv), "[n=k]" says how many.
func fmtStat(s analysis.Stat, prec, reps int) string {
	if s.N == 0 {
		return "–"
	}
	out := fmtNum(s.Mean, prec)
	if s.N > 1 {
		out = fmt.Sprintf("%s ±%s (%s–%s)", out, fmtNum(s.CI95, prec), fmtNum(s.Min, prec), fmtNum(s.Max, prec))
	}
	if s.N != reps {
		out += fmt.Sprintf(" [n=%d]", s.N)
	}
	return out
}

func validity(g analysis.GroupSummary) string {
	v := fmt.Sprintf("%d/%d valid", g.ValidRuns, len(g.Runs))
	if g.ValidRuns < len(g.Runs) {
		v += " !"
	}
	return v
}

// WriteSummaryTable prints one line per run group: mode, N, wired delay,
// aggregate goodput, Jain fairness, p95 RTT, retransmissions, timeouts, loss
// events (each as fmtStat: mean ±95 % CI (min–max)), REPS, the valid
// repetitions the statistics are over, and RUNS, valid of all. When some
// group manages only part of its stations, two more columns: MANAGED/UNM,
// the managed stations' mean goodput over the unmanaged ones', and
// SAME_NO_COOPCC, that ratio for the same stations in the baseline runs
// where no station is managed (analysis.BaselineRatios). When some group's
// policy names its modes, COMPETING: the share of the stations' traffic
// windows spent in competitive mode (analysis.CompetingTimes).
func WriteSummaryTable(w io.Writer, groups []analysis.GroupSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	hasVariant, mixed, modes := false, false, false
	for _, g := range groups {
		hasVariant = hasVariant || variant(g.Key) != ""
		mixed = mixed || g.ManagedRatio.N > 0
		modes = modes || g.CompetingShare.N > 0
	}
	head := "MODE\tN\tDELAY_MS\tAGGREGATE_MBPS\tJAIN\tP95_RTT_MS\tRETRANS\tTIMEOUTS\tLOSS_PEN/MOD\tREPS\tRUNS"
	if mixed {
		head += "\tMANAGED/UNM\tSAME_NO_COOPCC"
	}
	if modes {
		head += "\tCOMPETING"
	}
	if hasVariant {
		head += "\tPARAMS"
	}
	fmt.Fprintln(tw, head)
	for _, g := range groups {
		line := strings.Join([]string{g.Mode, strconv.Itoa(g.N), strconv.FormatFloat(g.DelayMS, 'g', -1, 64),
			fmtStat(g.AggregateMbps, 2, g.ValidRuns), fmtStat(g.Jain, 3, g.ValidRuns), fmtStat(g.P95RTTms, 1, g.ValidRuns),
			fmtStat(g.Retrans, 0, g.ValidRuns), fmtStat(g.Timeouts, 0, g.ValidRuns),
			fmtNum(g.Penalizing.Mean, 1) + "/" + fmtNum(g.Moderate.Mean, 1), strconv.Itoa(g.ValidRuns), validity(g)}, "\t")
		if mixed {
			line += "\t" + fmtStat(g.ManagedRatio, 2, g.ValidRuns) + "\t" + fmtStat(g.BaselineRatio, 2, g.BaselineRatio.N)
		}
		if modes {
			line += "\t" + fmtStat(g.CompetingShare, 2, g.ValidRuns)
		}
		if hasVariant {
			line += "\t" + variant(g.Key)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// kindHeader is the header of kinds.csv, one row per KindRatio.
var kindHeader = []string{"group", "mode", "kind", "mbps_mean", "mbps_n", "cubic_mbps_mean", "cubic_mbps_n", "ratio"}

// WriteKindTable writes what each kind of terminal got against the same
// kind at the same point without coopcc (analysis.KindRatios) as an
// aligned text table, under a heading; nothing when there are none.
func WriteKindTable(w io.Writer, ratios []analysis.KindRatio) error {
	if len(ratios) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nPer kind of terminal against doing nothing (mode cubic at the same point; mean goodput per terminal, Mbit/s):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tKIND\tMBPS\tCUBIC_MBPS\tRATIO\tPARAMS")
	for _, k := range ratios {
		fmt.Fprintln(tw, strings.Join([]string{k.Mode, k.Kind, fmtStat(k.Mbps, 2, k.Mbps.N), fmtStat(k.Nothing, 2, k.Nothing.N),
			fmtNum(k.Ratio, 2), orDash(variant(k.Key))}, "\t"))
	}
	return tw.Flush()
}

// kindRows are the rows of kinds.csv.
func kindRows(ratios []analysis.KindRatio) [][]string {
	rows := make([][]string, len(ratios))
	for i, k := range ratios {
		rows[i] = []string{k.Key, k.Mode, k.Kind, num(k.Mbps.Mean), strconv.Itoa(k.Mbps.N), num(k.Nothing.Mean), strconv.Itoa(k.Nothing.N), num(k.Ratio)}
	}
	return rows
}

// summaryMetrics are the group statistics of summary.csv, each written as
// <name>_mean, _ci95, _min, _max and _n (repetitions with the metric).
var summaryMetrics = []struct {
	name string
	stat func(analysis.GroupSummary) analysis.Stat
}{
	{"aggregate_mbps", func(g analysis.GroupSummary) analysis.Stat { return g.AggregateMbps }},
	{"jain", func(g analysis.GroupSummary) analysis.Stat { return g.Jain }},
	{"weighted_fairness", func(g analysis.GroupSummary) analysis.Stat { return g.WeightedFairness }},
	{"managed_mbps", func(g analysis.GroupSummary) analysis.Stat { return g.ManagedMbps }},
	{"unmanaged_mbps", func(g analysis.GroupSummary) analysis.Stat { return g.UnmanagedMbps }},
	{"managed_ratio", func(g analysis.GroupSummary) analysis.Stat { return g.ManagedRatio }},
	{"baseline_ratio", func(g analysis.GroupSummary) analysis.Stat { return g.BaselineRatio }},
	{"competing_share", func(g analysis.GroupSummary) analysis.Stat { return g.CompetingShare }},
	{"p50_rtt_ms", func(g analysis.GroupSummary) analysis.Stat { return g.P50RTTms }},
	{"p95_rtt_ms", func(g analysis.GroupSummary) analysis.Stat { return g.P95RTTms }},
	{"p99_rtt_ms", func(g analysis.GroupSummary) analysis.Stat { return g.P99RTTms }},
	{"retrans", func(g analysis.GroupSummary) analysis.Stat { return g.Retrans }},
	{"timeouts", func(g analysis.GroupSummary) analysis.Stat { return g.Timeouts }},
	{"penalizing_loss", func(g analysis.GroupSummary) analysis.Stat { return g.Penalizing }},
	{"moderate_loss", func(g analysis.GroupSummary) analysis.Stat { return g.Moderate }},
}

// statCols are the CSV columns of one statistic: mean, ci95, min, max, n.
func statCols(s analysis.Stat) []string {
	return []string{num(s.Mean), num(s.CI95), num(s.Min), num(s.Max), strconv.Itoa(s.N)}
}

// statHeader names statCols for a metric.
func statHeader(name string) []string {
	return []string{name + "_mean", name + "_ci95", name + "_min", name + "_max", name + "_n"}
}

var summaryHeader = func() []string {
	h := []string{"group", "mode", "n", "delay_ms", "reps", "runs", "valid_runs"}
	for _, m := range summaryMetrics {
		h = append(h, statHeader(m.name)...)
	}
	return h
}()

func summaryRows(groups []analysis.GroupSummary) [][]string {
	var rows [][]string
	for _, g := range groups {
		row := []string{g.Key, g.Mode, strconv.Itoa(g.N), num(g.DelayMS), strconv.Itoa(g.ValidRuns), strconv.Itoa(len(g.Runs)), strconv.Itoa(g.ValidRuns)}
		for _, m := range summaryMetrics {
			row = append(row, statCols(m.stat(g))...)
		}
		rows = append(rows, row)
	}
	return rows
}

var runsHeader = []string{"run", "group", "mode", "n", "delay_ms", "rep", "valid", "invalid_reason", "station", "managed",
	"goodput_mbps", "goodput_source", "max_mbps", "p50_rtt_ms", "p95_rtt_ms", "p99_rtt_ms", "retrans", "timeouts",
	"penalizing_loss", "moderate_loss", "bound_changes", "airtime_share",
	"cwnd_p50", "cwnd_max", "ca_open_share", "ca_recovery_share", "tx_frames", "queue_drops", "retry_drops",
	"ap_tx_frames", "ap_queue_drops", "ap_drop_share", "data_frames_per_ap_frame", "medium_busy", "srtt_goodput_corr",
	"competing_share", "first_competing_s"}

// mediumCells are the emulator columns of a run's "*" row of runs.csv, from
// tx_frames on (blank without emu/stations.csv).
func mediumCells(s analysis.RunSummary) []string {
	m := s.Medium
	if !s.HasMedium {
		return []string{"", "", "", "", "", "", "", "", num(s.SRTTGoodputCorr), "", ""}
	}
	return []string{u64(m.StaTxFrames), u64(m.StaQueueDrops), u64(m.StaRetryDrops), u64(m.APTxFrames), u64(m.APQueueDrops),
		num(m.APDropShare()), num(m.DataPerAPFrame()), num(m.BusyFraction), num(s.SRTTGoodputCorr), "", ""}
}

// stationFlowCells are the cwnd, CA-state and emulator columns of a
// station's row of runs.csv (the run-level columns blank).
func stationFlowCells(st analysis.StationSummary) []string {
	return []string{num(st.Cwnd.P50), num(st.Cwnd.Max), num(st.Cwnd.OpenShare), num(st.Cwnd.RecoveryShare),
		u64(st.TxFrames), u64(st.QueueDrops), u64(st.RetryDrops), "", "", "", "", "", "",
		num(st.CompetingShare), num(st.FirstCompetingS)}
}

// u64 formats a count.
func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// runsRows: one row per run with station "*" (run totals), then one per station.
func runsRows(sums []analysis.RunSummary) [][]string {
	var rows [][]string
	for _, s := range sums {
		base := []string{s.ID, s.Group, s.Mode, strconv.Itoa(s.N), num(s.DelayMS), strconv.Itoa(s.Rep), strconv.FormatBool(s.Valid), s.InvalidReason}
		total := []string{"*", "", num(s.AggregateMbps), "sum", "",
			num(s.RTT.P50), num(s.RTT.P95), num(s.RTT.P99), strconv.Itoa(s.Retrans), strconv.Itoa(s.Timeouts),
			strconv.Itoa(s.Penalizing), strconv.Itoa(s.Moderate), "", "", "", "", "", ""}
		rows = append(rows, concat(base, total, mediumCells(s)))
		for _, st := range s.Stations {
			pen, mod := 0, 0
			for _, e := range st.LossEvents {
				switch e.Class {
				case analysis.Penalizing:
					pen++
				case analysis.Moderate:
					mod++
				}
			}
			station := []string{st.Station, strconv.FormatBool(st.Managed),
				num(st.GoodputMbps), st.GoodputSource, num(st.MaxMbps), num(st.RTT.P50), num(st.RTT.P95), num(st.RTT.P99),
				strconv.Itoa(st.Retrans), strconv.Itoa(st.Timeouts), strconv.Itoa(pen), strconv.Itoa(mod),
				strconv.Itoa(st.BoundChanges), num(st.Airtime)}
			rows = append(rows, concat(base, station, stationFlowCells(st)))
		}
	}
	return rows
}

// concat joins rows' parts into a new slice.
func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
