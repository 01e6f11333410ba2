package report

// Figures over a sweep: a metric against N per mode and delay, throughput by
// mode, and throughput against p95 RTT (the headline).

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coopcc/coopcc/lab/analysis"
)

// vsN: one panel per delay, one line per mode (and variant), mean over valid
// repetitions with the 95 % confidence interval and min–max (spread).
func (m *model) vsN(name, title, ylabel string, metric func(analysis.GroupSummary) analysis.Stat) (*figure, error) {
	f := &figure{Name: name, Title: title, Width: 5.5 * vg.Inch, Height: 4 * vg.Inch,
		Caption: spreadCaption(m.groups),
		Header:  []string{"delay_ms", "line", "mode", "n", "mean", "ci95", "min", "max", "reps", "runs"}}
	var row []*plot.Plot
	var allLabels []string
	seenLabel := map[string]bool{}
	for _, g := range m.groups {
		if l := lineLabel(g); !seenLabel[l] {
			seenLabel[l] = true
			allLabels = append(allLabels, l)
		}
	}
	for _, d := range m.delays() {
		p := newPanel(delayLabel(d), "terminals N", ylabel)
		lines := map[string]plotter.XYs{}
		stats := map[string][]analysis.Stat{}
		var order []string
		for _, g := range m.groups {
			if g.DelayMS != d {
				continue
			}
			st := metric(g)
			l := lineLabel(g)
			if _, ok := lines[l]; !ok {
				order = append(order, l)
			}
			lines[l] = append(lines[l], plotter.XY{X: float64(g.N), Y: st.Mean})
			stats[l] = append(stats[l], st)
			f.Rows = append(f.Rows, []string{num(d), l, g.Mode, strconv.Itoa(g.N), num(st.Mean), num(st.CI95), num(st.Min), num(st.Max),
				strconv.Itoa(st.N), strconv.Itoa(len(g.Runs))})
		}
		for _, l := range order {
			xys, sts := lines[l], stats[l]
			idx := make([]int, len(xys))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool { return xys[idx[a]].X < xys[idx[b]].X })
			sx := make(plotter.XYs, len(idx))
			sp := spread{X: make([]float64, len(idx)), YStats: make([]analysis.Stat, len(idx))}
			for k, i := range idx {
				sx[k], sp.X[k], sp.YStats[k] = xys[i], xys[i].X, sts[i]
			}
			si := m.styleOf(l)
			if err := addLine(p, si, "", sx, true); err != nil {
				return nil, err
			}
			sp.Color, _ = style(si)
			p.Add(sp)
		}
		p.X.Tick.Marker = intTicks{}
		p.X.Min, p.X.Max = p.X.Min-0.3, p.X.Max+0.3
		if strings.Contains(name, "jain") {
			// Fairness lives near 1: start the axis a little below the data
			// (at most 0.9, at least 0) so that 0.95 and 0.99 stay apart.
			p.Y.Min = math.Max(0, math.Min(0.9, math.Floor(p.Y.Min*10)/10-0.1))
			p.Y.Max = 1.02
		} else {
			p.Y.Min = 0
		}
		row = append(row, p)
	}
	lo, hi := math.Inf(1), math.Inf(-1) // one y range for all delays
	for _, p := range row {
		lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
	}
	for _, p := range row {
		p.Y.Min, p.Y.Max = lo, hi
	}
	sharedLegend(row[0], allLabels, m.styleOf, true)
	f.Panels = [][]*plot.Plot{row}
	return f, nil
}

// byMode: bars of total throughput and Jain per group when the results do
// not sweep N (e.g. the demo: N = 10 only).
func (m *model) byMode() (*figure, error) {
	if len(m.groups) == 0 {
		return nil, nil
	}
	f := &figure{Name: "throughput_by_mode", Title: "Total throughput and fairness per run group",
		Width: 4.5 * vg.Inch, Height: 4 * vg.Inch,
		Caption: spreadCaption(m.groups) + " Groups without a valid run show no bar.",
		Header: append(append(append([]string{"group", "mode", "n", "delay_ms"}, statHeader("aggregate_mbps")...),
			statHeader("jain")...), "reps", "runs")}
	var labels []string
	var agg, jain plotter.Values
	var aggSt, jainSt []analysis.Stat
	for _, g := range m.groups {
		label := fmt.Sprintf("%s\nN=%d, %gms", g.Mode, g.N, g.DelayMS)
		if v := variant(g.Key); v != "" {
			label += "\n" + v
		}
		label += fmt.Sprintf("\nreps %d", g.ValidRuns)
		labels = append(labels, label)
		agg = append(agg, zeroIfNaN(g.AggregateMbps.Mean))
		jain = append(jain, zeroIfNaN(g.Jain.Mean))
		aggSt, jainSt = append(aggSt, g.AggregateMbps), append(jainSt, g.Jain)
		row := append([]string{g.Key, g.Mode, strconv.Itoa(g.N), num(g.DelayMS)}, statCols(g.AggregateMbps)...)
		f.Rows = append(f.Rows, append(append(row, statCols(g.Jain)...), strconv.Itoa(g.ValidRuns), strconv.Itoa(len(g.Runs))))
	}
	mk := func(title, y string, vs plotter.Values, sts []analysis.Stat, max float64) (*plot.Plot, error) {
		p := newPanel(title, "", y)
		for i, v := range vs { // one bar per group, colored by mode
			b, err := plotter.NewBarChart(plotter.Values{v}, vg.Points(22))
			if err != nil {
				return nil, fmt.Errorf("bars: %w", err)
			}
			c, _ := style(m.styleOf(m.groups[i].Mode))
			b.Color, b.LineStyle.Width, b.XMin = c, 0, float64(i)
			p.Add(b)
		}
		sp := spread{YStats: sts, Color: color.Black}
		for i := range sts {
			sp.X = append(sp.X, float64(i))
		}
		p.Add(sp)
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.6, float64(len(vs))-0.4
		p.Y.Min = 0
		if max > 0 {
			p.Y.Max = max
		} else {
			p.Y.Max *= 1.1
		}
		return p, nil
	}
	p1, err := mk("total throughput", "total goodput (Mbit/s)", agg, aggSt, 0)
	if err != nil {
		return nil, err
	}
	p2, err := mk("Jain fairness", "Jain fairness index", jain, jainSt, 1.05)
	if err != nil {
		return nil, err
	}
	f.Width = vg.Length(1.2+0.8*float64(len(labels))) * vg.Inch
	f.Panels = [][]*plot.Plot{{p1, p2}}
	return f, nil
}

func zeroIfNaN(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// throughputVsRTT: each group's mean total throughput against its mean p95
// RTT, one series per mode, one panel per delay.
func (m *model) throughputVsRTT() (*figure, error) {
	any := false
	for _, g := range m.groups {
		if !math.IsNaN(g.P95RTTms.Mean) && !math.IsNaN(g.AggregateMbps.Mean) {
			any = true
		}
	}
	if !any {
		return nil, nil
	}
	f := &figure{Name: "throughput_vs_p95rtt", Title: "Total throughput vs 95th-percentile RTT",
		Width: 5.5 * vg.Inch, Height: 4 * vg.Inch,
		Caption: "One point per run group; up and left is better. RTT is the sender's smoothed RTT (flows.csv srtt_us). " + spreadCaption(m.groups),
		Header: append(append(append([]string{"delay_ms", "mode", "group", "n"}, statHeader("p95_rtt_ms")...),
			statHeader("aggregate_mbps")...), "reps")}
	var row []*plot.Plot
	var modes []string
	for _, g := range m.groups {
		if !contains(modes, g.Mode) {
			modes = append(modes, g.Mode)
		}
	}
	for _, d := range m.delays() {
		p := newPanel(delayLabel(d), "95th-percentile RTT (ms)", "total goodput (Mbit/s)")
		pts := map[string]plotter.XYs{}
		sps := map[string]*spread{}
		var order []string
		for _, g := range m.groups {
			if g.DelayMS != d {
				continue
			}
			if _, ok := pts[g.Mode]; !ok {
				order = append(order, g.Mode)
				sps[g.Mode] = &spread{}
			}
			pts[g.Mode] = append(pts[g.Mode], plotter.XY{X: g.P95RTTms.Mean, Y: g.AggregateMbps.Mean})
			sp := sps[g.Mode]
			sp.X, sp.Y = append(sp.X, g.P95RTTms.Mean), append(sp.Y, g.AggregateMbps.Mean)
			sp.XStats, sp.YStats = append(sp.XStats, g.P95RTTms), append(sp.YStats, g.AggregateMbps)
			row := append([]string{num(d), g.Mode, g.Key, strconv.Itoa(g.N)}, statCols(g.P95RTTms)...)
			f.Rows = append(f.Rows, append(append(row, statCols(g.AggregateMbps)...), strconv.Itoa(g.ValidRuns)))
		}
		for _, mode := range order {
			if err := addPoints(p, m.styleOf(mode), "", pts[mode]); err != nil {
				return nil, err
			}
			sps[mode].Color, _ = style(m.styleOf(mode))
			p.Add(*sps[mode])
		}
		p.Y.Min, p.X.Min = 0, 0
		row = append(row, p)
	}
	for _, mode := range modes {
		i := m.styleOf(mode)
		c, _ := style(i)
		row[0].Legend.Add(mode, &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: c, Shape: filledShape(i), Radius: vg.Points(4)}})
	}
	f.Panels = [][]*plot.Plot{row}
	return f, nil
}
