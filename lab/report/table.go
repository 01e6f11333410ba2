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

// fmtStat is "mean" for one value, "mean (min–max)" for several, "–" for none.
func fmtStat(s analysis.Stat, prec int) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 || s.Min == s.Max {
		return fmtNum(s.Mean, prec)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(s.Mean, prec), fmtNum(s.Min, prec), fmtNum(s.Max, prec))
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
// events, and how many repetitions were valid (statistics are over those).
func WriteSummaryTable(w io.Writer, groups []analysis.GroupSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	hasVariant := false
	for _, g := range groups {
		hasVariant = hasVariant || variant(g.Key) != ""
	}
	head := "MODE\tN\tDELAY_MS\tAGGREGATE_MBPS\tJAIN\tP95_RTT_MS\tRETRANS\tTIMEOUTS\tLOSS_PEN/MOD\tRUNS"
	if hasVariant {
		head += "\tPARAMS"
	}
	fmt.Fprintln(tw, head)
	for _, g := range groups {
		line := strings.Join([]string{g.Mode, strconv.Itoa(g.N), strconv.FormatFloat(g.DelayMS, 'g', -1, 64),
			fmtStat(g.AggregateMbps, 2), fmtStat(g.Jain, 3), fmtStat(g.P95RTTms, 1), fmtStat(g.Retrans, 0),
			fmtStat(g.Timeouts, 0), fmtNum(g.Penalizing.Mean, 1) + "/" + fmtNum(g.Moderate.Mean, 1), validity(g)}, "\t")
		if hasVariant {
			line += "\t" + variant(g.Key)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

var summaryHeader = []string{"group", "mode", "n", "delay_ms", "runs", "valid_runs",
	"aggregate_mbps_mean", "aggregate_mbps_min", "aggregate_mbps_max", "jain_mean", "jain_min", "jain_max",
	"weighted_fairness_mean", "managed_mbps_mean", "unmanaged_mbps_mean",
	"p50_rtt_ms_mean", "p95_rtt_ms_mean", "p99_rtt_ms_mean", "retrans_mean", "timeouts_mean",
	"penalizing_loss_mean", "moderate_loss_mean"}

func summaryRows(groups []analysis.GroupSummary) [][]string {
	var rows [][]string
	for _, g := range groups {
		rows = append(rows, []string{g.Key, g.Mode, strconv.Itoa(g.N), num(g.DelayMS), strconv.Itoa(len(g.Runs)), strconv.Itoa(g.ValidRuns),
			num(g.AggregateMbps.Mean), num(g.AggregateMbps.Min), num(g.AggregateMbps.Max), num(g.Jain.Mean), num(g.Jain.Min), num(g.Jain.Max),
			num(g.WeightedFairness.Mean), num(g.ManagedMbps.Mean), num(g.UnmanagedMbps.Mean),
			num(g.P50RTTms.Mean), num(g.P95RTTms.Mean), num(g.P99RTTms.Mean), num(g.Retrans.Mean), num(g.Timeouts.Mean),
			num(g.Penalizing.Mean), num(g.Moderate.Mean)})
	}
	return rows
}

var runsHeader = []string{"run", "group", "mode", "n", "delay_ms", "rep", "valid", "invalid_reason", "station", "managed",
	"goodput_mbps", "goodput_source", "max_mbps", "p50_rtt_ms", "p95_rtt_ms", "p99_rtt_ms", "retrans", "timeouts",
	"penalizing_loss", "moderate_loss", "bound_changes", "airtime_share"}

// runsRows: one row per run with station "*" (run totals), then one per station.
func runsRows(sums []analysis.RunSummary) [][]string {
	var rows [][]string
	for _, s := range sums {
		base := []string{s.ID, s.Group, s.Mode, strconv.Itoa(s.N), num(s.DelayMS), strconv.Itoa(s.Rep), strconv.FormatBool(s.Valid), s.InvalidReason}
		rows = append(rows, append(append([]string(nil), base...), "*", "", num(s.AggregateMbps), "sum", "",
			num(s.RTT.P50), num(s.RTT.P95), num(s.RTT.P99), strconv.Itoa(s.Retrans), strconv.Itoa(s.Timeouts),
			strconv.Itoa(s.Penalizing), strconv.Itoa(s.Moderate), "", ""))
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
			rows = append(rows, append(append([]string(nil), base...), st.Station, strconv.FormatBool(st.Managed),
				num(st.GoodputMbps), st.GoodputSource, num(st.MaxMbps), num(st.RTT.P50), num(st.RTT.P95), num(st.RTT.P99),
				strconv.Itoa(st.Retrans), strconv.Itoa(st.Timeouts), strconv.Itoa(pen), strconv.Itoa(mod),
				strconv.Itoa(st.BoundChanges), num(st.Airtime)))
		}
	}
	return rows
}
