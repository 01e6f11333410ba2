package report

// Loss figures: loss events classified penalizing or moderate, and the
// per-station trace around them (papers/002).

import (
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/coopcc/coopcc/lab/analysis"
)

// lossScatter: every classified loss event, its SRTT at the time of loss
// against the time to rebuild cwnd and the relative throughput deficit.
func (m *model) lossScatter() (*figure, error) {
	type evx struct {
		run, station string
		e            analysis.LossEvent
	}
	var evs []evx
	for _, s := range m.sums {
		for _, st := range s.Stations {
			for _, e := range st.LossEvents {
				evs = append(evs, evx{s.ID, st.Station, e})
			}
		}
	}
	if len(evs) == 0 {
		return nil, nil
	}
	f := &figure{Name: "loss_events", Title: "Loss events: SRTT at the time of loss vs recovery (papers/002)",
		Width: 5 * vg.Inch, Height: 4 * vg.Inch,
		Caption: "Every loss-driven cwnd collapse. papers/002: moderate loss rebuilt in 1.57 s at SRTT ≈ 2 ms, penalizing loss in 2.11 s at ≈ 25 ms. Class here = relative throughput deficit ≥ 30 % (see docs/analysis.md).",
		Header: []string{"run", "station", "t_s", "cwnd_before", "cwnd_after", "ca_state", "srtt_ms", "min_rtt_ms", "rebuilt", "rebuild_s",
			"pre_mbps", "during_mbps", "deficit_mbps", "deficit_mb", "class"}}
	classes := []string{analysis.Penalizing, analysis.Moderate, analysis.Unknown}
	rebuild, deficit := map[string]plotter.XYs{}, map[string]plotter.XYs{}
	for _, x := range evs {
		e := x.e
		srtt := float64(e.SRTT.Microseconds()) / 1000
		rebuild[e.Class] = append(rebuild[e.Class], plotter.XY{X: srtt, Y: e.RebuildS})
		deficit[e.Class] = append(deficit[e.Class], plotter.XY{X: srtt, Y: 100 * e.RelativeDeficit()})
		f.Rows = append(f.Rows, []string{x.run, x.station, num(e.T), strconv.Itoa(int(e.CwndBefore)), strconv.Itoa(int(e.CwndAfter)),
			strconv.Itoa(int(e.CAState)), num(srtt), num(float64(e.MinRTT.Microseconds()) / 1000), strconv.FormatBool(e.Rebuilt),
			num(e.RebuildS), num(e.PreMbps), num(e.DuringMbps), num(e.DeficitMbps), num(e.DeficitMB), e.Class})
	}
	p1 := newPanel("time to rebuild cwnd", "SRTT at the time of loss (ms)", "time to rebuild cwnd (s)")
	p2 := newPanel("throughput deficit while rebuilding", "SRTT at the time of loss (ms)", "throughput deficit (% of before)")
	for i, c := range classes {
		if err := addPoints(p1, []int{0, 1, 4}[i], c, rebuild[c]); err != nil {
			return nil, err
		}
		if err := addPoints(p2, []int{0, 1, 4}[i], c, deficit[c]); err != nil {
			return nil, err
		}
	}
	p1.X.Min, p1.Y.Min, p2.X.Min, p2.Y.Min, p2.Y.Max = 0, 0, 0, 0, 105
	f.Panels = [][]*plot.Plot{{p1, p2}}
	return f, nil
}

type lossPick struct {
	run     int
	station string
}

// lossRuns picks the flows drawn as vehicle / loss-event traces: every run
// with a mobile station or a mobility parameter (the vehicle preset), else the two
// runs with the most loss events; in each, the station with the most loss
// events (the first data station when none has any). At most four.
func (m *model) lossRuns() []lossPick {
	var picks []lossPick
	pickStation := func(i int) (string, int) {
		best, n := "", -1
		for _, st := range m.sums[i].Stations {
			if st.DataFlows > 0 && len(st.LossEvents) > n {
				best, n = st.Station, len(st.LossEvents)
			}
		}
		return best, n
	}
	for i, s := range m.sums {
		mobile := ""
		for _, st := range m.runs[i].Info.Stations {
			if st.Mobility != "" && mobile == "" {
				mobile = st.Name
			}
		}
		if _, ok := s.Params["mobility"]; ok && mobile == "" {
			mobile, _ = pickStation(i)
		}
		if mobile != "" {
			picks = append(picks, lossPick{i, mobile})
		}
	}
	if len(picks) == 0 {
		type cand struct {
			lossPick
			n int
		}
		var cs []cand
		for i := range m.sums {
			if st, n := pickStation(i); n > 0 {
				cs = append(cs, cand{lossPick{i, st}, n})
			}
		}
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].n > cs[b].n })
		for k := 0; k < len(cs) && k < 2; k++ {
			picks = append(picks, cs[k].lossPick)
		}
	}
	if len(picks) > 4 {
		picks = picks[:4]
	}
	return picks
}

// lossTrace: throughput, cwnd with loss events marked, and SRTT of one
// station's data flows (the vehicle figures of papers/002).
func (m *model) lossTrace(i int, station string) (*figure, error) {
	run, sum := m.runs[i], m.sums[i]
	f := &figure{Name: fileStem("vehicle", sum.ID+"_"+station), Title: "Throughput, cwnd and SRTT with loss events: " + sum.ID + ", " + station,
		Width: 7 * vg.Inch, Height: 2.6 * vg.Inch,
		Caption: "Marks on the cwnd panel: loss-driven cwnd collapses, by class (papers/002: penalizing = throughput deficit ≥ 30 % while cwnd is rebuilt). Throughput: iperf3 intervals (line) and bytes_acked per sample (thin). Bottom (when any): segments the receiver SACKed — the duplicate-ACK evidence the sampled monitor can see — and segments retransmitted between samples.",
		Header:  []string{"t_s", "series", "value"}}
	if !sum.Valid {
		f.Title += " (INVALID)"
	}
	pt := newPanel("", "time (s)", "throughput (Mbit/s)")
	pc := newPanel("", "time (s)", "cwnd (segments)")
	pr := newPanel("", "time (s)", "smoothed RTT (ms)")
	pd := newPanel("", "time (s)", "segments")
	haveDup := false
	var ss analysis.StationSummary
	var start float64
	for _, s := range sum.Stations {
		if s.Station == station {
			ss = s
		}
	}
	for _, st := range run.Info.Stations {
		if st.Name == station {
			start = st.StartS
		}
	}
	if ip, ok := run.Iperf[station]; ok {
		var xys plotter.XYs
		for _, p := range analysis.GoodputSeries(ip, start) {
			xys = append(xys, plotter.XY{X: p.T, Y: p.V})
			f.Rows = append(f.Rows, []string{num(p.T), "iperf3_mbps", num(p.V)})
		}
		if err := addLine(pt, 2, "iperf3 interval", xys, false); err != nil {
			return nil, err
		}
	}
	for _, fl := range analysis.DataFlows(run.Flows, station) {
		dup, err := addFlowTrace(f, pt, pc, pr, pd, fl)
		if err != nil {
			return nil, err
		}
		haveDup = haveDup || dup
	}
	if err := addBoundTraces(f, pc, run, station); err != nil {
		return nil, err
	}
	if err := addLossMarks(f, pc, ss.LossEvents); err != nil {
		return nil, err
	}
	if len(analysis.DataFlows(run.Flows, station)) == 0 && len(run.Iperf[station].Intervals) == 0 {
		return nil, nil
	}
	pt.Y.Min, pc.Y.Min, pr.Y.Min, pd.Y.Min = 0, 0, 0, 0
	f.Panels = [][]*plot.Plot{{pt}, {pc}, {pr}}
	if haveDup { // the paper's DupAck panel: SACKed segments and retransmissions
		f.Panels = append(f.Panels, []*plot.Plot{pd})
		alignX(pt, pc, pr, pd)
	} else {
		alignX(pt, pc, pr)
	}
	return f, nil
}

// addFlowTrace adds one data flow's samples to lossTrace's panels
// (throughput pt, cwnd pc, SRTT pr, SACKed and retransmitted segments pd)
// and to f's rows; haveDup reports whether the flow had any SACKed or
// retransmitted segment.
func addFlowTrace(f *figure, pt, pc, pr, pd *plot.Plot, fl analysis.Series) (haveDup bool, err error) {
	var tp, cw, rt, sacked, retr plotter.XYs
	for k, s := range fl.Samples {
		sacked = append(sacked, plotter.XY{X: s.T, Y: float64(s.Sacked)})
		d := 0.0
		if k > 0 && s.TotalRetrans > fl.Samples[k-1].TotalRetrans {
			d = float64(s.TotalRetrans - fl.Samples[k-1].TotalRetrans)
		}
		retr = append(retr, plotter.XY{X: s.T, Y: d})
		haveDup = haveDup || s.Sacked > 0 || d > 0
		f.Rows = append(f.Rows, []string{num(s.T), "sacked", strconv.Itoa(int(s.Sacked))}, []string{num(s.T), "retransmitted", num(d)})
	}
	if err := addLine(pd, 4, "SACKed (dup-ACK evidence)", sacked, false); err != nil {
		return false, err
	}
	if err := addLine(pd, 0, "retransmitted since last sample", retr, false); err != nil {
		return false, err
	}
	for _, p := range analysis.AckedThroughput(fl) {
		tp = append(tp, plotter.XY{X: p.T, Y: p.V})
		f.Rows = append(f.Rows, []string{num(p.T), "acked_mbps", num(p.V)})
	}
	for _, s := range fl.Samples {
		cw = append(cw, plotter.XY{X: s.T, Y: float64(s.Cwnd)})
		f.Rows = append(f.Rows, []string{num(s.T), "cwnd", strconv.Itoa(int(s.Cwnd))})
		if s.SRTT > 0 {
			v := float64(s.SRTT.Microseconds()) / 1000
			rt = append(rt, plotter.XY{X: s.T, Y: v})
			f.Rows = append(f.Rows, []string{num(s.T), "srtt_ms", num(v)})
		}
	}
	l, err := plotter.NewLine(finite(tp))
	if err == nil && len(tp) > 0 {
		c, _ := style(3)
		l.LineStyle.Color, l.LineStyle.Width = c, vg.Points(0.7)
		pt.Add(l)
		pt.Legend.Add("bytes_acked per sample", l)
	}
	if err := addLine(pc, 2, "", cw, false); err != nil {
		return false, err
	}
	if err := addLine(pr, 2, "", rt, false); err != nil {
		return false, err
	}
	return haveDup, nil
}

// addBoundTraces adds the agent's bounds on station's flows to the cwnd
// panel pc and to f's rows.
func addBoundTraces(f *figure, pc *plot.Plot, run analysis.Run, station string) error {
	// The agent's bounds on this station's flows (its own agent's, or the
	// server's where it bounded what it sent): papers/002's lower bound.
	evs := analysis.StationBounds(run, station)
	for k, b := range []struct {
		series, legend string
		value          func(analysis.BoundEvent) uint32
	}{
		{"bound_lo", "agent's lower bound", func(e analysis.BoundEvent) uint32 { return e.Lo }},
		{"bound_hi", "agent's upper bound", func(e analysis.BoundEvent) uint32 { return e.Hi }},
	} {
		xys := boundSeries(run, evs, b.value, func(t float64, v uint32) {
			f.Rows = append(f.Rows, []string{num(t), b.series, strconv.Itoa(int(v))})
		})
		if err := addLine(pc, 5+k, b.legend, xys, false); err != nil {
			return err
		}
	}
	return nil
}

// addLossMarks marks the station's loss events, by class, on the cwnd panel
// pc and adds them to f's rows.
func addLossMarks(f *figure, pc *plot.Plot, events []analysis.LossEvent) error {
	marks := map[string]plotter.XYs{}
	for _, e := range events {
		marks[e.Class] = append(marks[e.Class], plotter.XY{X: e.T, Y: float64(e.CwndAfter)})
		f.Rows = append(f.Rows, []string{num(e.T), "loss_" + e.Class, strconv.Itoa(int(e.CwndBefore))})
	}
	for k, c := range []string{analysis.Penalizing, analysis.Moderate, analysis.Unknown} {
		if err := addPoints(pc, []int{0, 1, 4}[k], c+" loss", marks[c]); err != nil {
			return err
		}
	}
	return nil
}

// withGoodput counts the run's stations that have a goodput value.
func withGoodput(s analysis.RunSummary) int {
	n := 0
	for _, st := range s.Stations {
		if !math.IsNaN(st.GoodputMbps) {
			n++
		}
	}
	return n
}
