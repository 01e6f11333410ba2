package report

import (
	"fmt"
	"image/color"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coopcc/coopcc/lab/analysis"
)

// model is what the figures are drawn from.
type model struct {
	runs    []analysis.Run
	sums    []analysis.RunSummary // sums[i] summarizes runs[i]
	groups  []analysis.GroupSummary
	series  map[string]int // line label → style index, stable across figures
	nextIdx int
}

func (m *model) styleOf(label string) int {
	if i, ok := m.series[label]; ok {
		return i
	}
	m.series[label] = m.nextIdx
	m.nextIdx++
	return m.series[label]
}

// variant is a group's key without mode, n and delay: what else the sweep varied.
func variant(key string) string { return analysis.Variant(key) }

// lineLabel names the line a group belongs to in "vs N" figures.
func lineLabel(g analysis.GroupSummary) string {
	if v := variant(g.Key); v != "" {
		return g.Mode + " " + v
	}
	return g.Mode
}

func delayLabel(d float64) string {
	return "wired delay " + strconv.FormatFloat(d, 'g', -1, 64) + " ms"
}

func (m *model) delays() []float64 {
	seen := map[float64]bool{}
	var ds []float64
	for _, g := range m.groups {
		if !seen[g.DelayMS] {
			seen[g.DelayMS] = true
			ds = append(ds, g.DelayMS)
		}
	}
	sort.Float64s(ds)
	return ds
}

// figures builds every figure the results support.
func (m *model) figures() ([]*figure, error) {
	var out []*figure
	add := func(f *figure, err error) error {
		if err != nil {
			return err
		}
		if f != nil {
			out = append(out, f)
		}
		return nil
	}
	ns := map[int]bool{}
	for _, g := range m.groups {
		if g.ValidRuns > 0 {
			ns[g.N] = true
		}
	}
	if len(ns) >= 2 {
		if err := add(m.vsN("throughput_vs_n", "Total throughput vs number of terminals", "total goodput (Mbit/s)",
			func(g analysis.GroupSummary) analysis.Stat { return g.AggregateMbps })); err != nil {
			return nil, err
		}
		if err := add(m.vsN("jain_vs_n", "Jain fairness vs number of terminals", "Jain fairness index",
			func(g analysis.GroupSummary) analysis.Stat { return g.Jain })); err != nil {
			return nil, err
		}
	} else if err := add(m.byMode()); err != nil {
		return nil, err
	}
	for _, build := range []func() (*figure, error){m.throughputVsRTT, m.coexistence, m.fairnessScatter, m.lossScatter} {
		if err := add(build()); err != nil {
			return nil, err
		}
	}
	for _, i := range m.traceRuns() {
		if err := add(m.traces(i)); err != nil {
			return nil, err
		}
	}
	if err := add(m.airtime(m.traceRuns())); err != nil {
		return nil, err
	}
	for _, c := range m.lossRuns() {
		if err := add(m.lossTrace(c.run, c.station)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

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

// coexistence: when some run mixes station groups (managed vs unmanaged,
// or the scenario's named groups), the mean goodput per terminal of each
// group, for every run group with the same N and delay as a mixed one
// (baselines with one group included); one panel per mode.
func (m *model) coexistence() (*figure, error) {
	type nd struct {
		n int
		d float64
	}
	mixedAt := map[nd]bool{}
	count := func(g analysis.GroupSummary) int {
		n := 0
		for _, st := range g.GroupMbps {
			if !math.IsNaN(st.Mean) {
				n++
			}
		}
		return n
	}
	for _, g := range m.groups {
		if count(g) >= 2 {
			mixedAt[nd{g.N, g.DelayMS}] = true
		}
	}
	if len(mixedAt) == 0 {
		return nil, nil
	}
	var modes, cats []string
	byMode := map[string][]analysis.GroupSummary{}
	for _, g := range m.groups {
		if !mixedAt[nd{g.N, g.DelayMS}] || count(g) == 0 {
			continue
		}
		if _, ok := byMode[g.Mode]; !ok {
			modes = append(modes, g.Mode)
		}
		byMode[g.Mode] = append(byMode[g.Mode], g)
		for name := range g.GroupMbps {
			if !contains(cats, name) {
				cats = append(cats, name)
			}
		}
	}
	sort.SliceStable(cats, func(a, b int) bool {
		if catRank(cats[a]) != catRank(cats[b]) {
			return catRank(cats[a]) < catRank(cats[b])
		}
		return cats[a] < cats[b]
	})
	maxCols := 0
	for _, mode := range modes {
		maxCols = max(maxCols, len(byMode[mode]))
	}
	f := &figure{Name: "coexistence", Title: "Mean goodput per terminal by terminal group",
		Height: 3.2 * vg.Inch, Width: vg.Length(1.5+(0.35+0.22*float64(len(cats)))*float64(maxCols)) * vg.Inch,
		Caption: "Managed terminals run the coopcc agent, unmanaged ones do not; named groups come from the scenario. Bars: mean goodput per terminal of each group, averaged over valid repetitions; one panel per mode. " + spreadCaption(m.groups),
		Header: append(append([]string{"group", "mode", "n", "delay_ms", "terminal_group", "terminals"}, statHeader("mbps")...),
			"aggregate_mbps", "reps")}
	w := vg.Points(11)
	for mi, mode := range modes {
		p := newPanel(mode, "", "goodput per terminal (Mbit/s)")
		var labels []string
		vals := make([]plotter.Values, len(cats))
		sps := make([]spread, len(cats))
		for _, g := range byMode[mode] {
			counts := map[string]int{}
			for _, st := range g.Runs[0].Stations {
				counts[stationGroupOf(st)]++
			}
			label := fmt.Sprintf("N=%d, %gms", g.N, g.DelayMS)
			if counts["managed"] > 0 || counts["unmanaged"] > 0 {
				label += fmt.Sprintf("\n%d managed", counts["managed"])
			}
			if v := variant(g.Key); v != "" && !strings.HasPrefix(v, "managed=") {
				label += "\n" + v
			}
			label += fmt.Sprintf("\nreps %d", g.ValidRuns)
			labels = append(labels, label)
			for ci, c := range cats {
				st, ok := g.GroupMbps[c]
				v := math.NaN()
				if ok {
					v = st.Mean
				}
				vals[ci] = append(vals[ci], zeroIfNaN(v))
				sps[ci].X, sps[ci].YStats = append(sps[ci].X, float64(len(labels)-1)), append(sps[ci].YStats, st)
				if ok {
					row := append([]string{g.Key, g.Mode, strconv.Itoa(g.N), num(g.DelayMS), c, strconv.Itoa(counts[c])}, statCols(st)...)
					f.Rows = append(f.Rows, append(row, num(g.AggregateMbps.Mean), strconv.Itoa(g.ValidRuns)))
				}
			}
		}
		for ci, vs := range vals {
			b, err := plotter.NewBarChart(vs, w)
			if err != nil {
				return nil, fmt.Errorf("bars: %w", err)
			}
			c, _ := style(ci)
			b.Color, b.LineStyle.Width = c, 0
			b.Offset = w * vg.Length(float64(ci)-float64(len(vals)-1)/2)
			p.Add(b)
			sps[ci].Offset, sps[ci].Color = b.Offset, color.Black
			p.Add(sps[ci])
			if mi == 0 {
				p.Legend.Add(cats[ci], b)
			}
		}
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.7, float64(maxCols)-0.3
		p.Y.Min = 0
		p.Y.Max *= 1.1
		f.Panels = append(f.Panels, []*plot.Plot{p})
	}
	top := 0.0 // one scale for all panels, so that modes compare at a glance
	for _, r := range f.Panels {
		top = math.Max(top, r[0].Y.Max)
	}
	for _, r := range f.Panels {
		r[0].Y.Max = top
	}
	return f, nil
}

// catRank lists managed before unmanaged before named groups.
func catRank(c string) int {
	switch c {
	case "managed":
		return 0
	case "unmanaged":
		return 1
	}
	return 2
}

// stationGroupOf is analysis.StationGroup for a station summary.
func stationGroupOf(st analysis.StationSummary) string {
	return analysis.StationGroup(analysis.Station{Name: st.Station, Group: st.Group, Managed: st.Managed})
}

// fairnessScatter: weighted fairness vs total throughput, one point per valid
// run, one series per mode (needs every station's throughput alone).
func (m *model) fairnessScatter() (*figure, error) {
	pts := map[string]plotter.XYs{}
	var order []string
	f := &figure{Name: "fairness_vs_throughput", Title: "Weighted fairness vs total throughput",
		Width: 5.5 * vg.Inch, Height: 4 * vg.Inch,
		Caption: "One point per valid run. Weighted fairness (papers/003) normalizes each terminal's goodput by its throughput alone; up and right is better. Runs with one terminal are left out (trivially 1).",
		Header:  []string{"run", "mode", "n", "delay_ms", "aggregate_mbps", "weighted_fairness", "jain"}}
	for _, s := range m.sums {
		if !s.Valid || math.IsNaN(s.WeightedFairness) || math.IsNaN(s.AggregateMbps) || withGoodput(s) < 2 {
			continue
		}
		if _, ok := pts[s.Mode]; !ok {
			order = append(order, s.Mode)
		}
		pts[s.Mode] = append(pts[s.Mode], plotter.XY{X: s.AggregateMbps, Y: s.WeightedFairness})
		f.Rows = append(f.Rows, []string{s.ID, s.Mode, strconv.Itoa(s.N), num(s.DelayMS), num(s.AggregateMbps), num(s.WeightedFairness), num(s.Jain)})
	}
	if len(order) == 0 {
		return nil, nil
	}
	p := newPanel("", "total goodput (Mbit/s)", "weighted fairness index")
	for _, mode := range order {
		if err := addPoints(p, m.styleOf(mode), mode, pts[mode]); err != nil {
			return nil, err
		}
	}
	p.Y.Min, p.Y.Max, p.X.Min = 0, 1.05, 0
	f.Panels = [][]*plot.Plot{{p}}
	return f, nil
}

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

// traceRuns picks the runs whose cwnd/RTT/CA traces are drawn: per mode,
// the valid run (any run if none is valid) with the most terminals, at the
// largest delay, lowest repetition.
func (m *model) traceRuns() []int {
	best := map[string]int{}
	var order []string
	better := func(a, b int) bool { // is run a a better pick than b?
		x, y := m.sums[a], m.sums[b]
		switch {
		case x.Valid != y.Valid:
			return x.Valid
		case x.N != y.N:
			return x.N > y.N
		case x.DelayMS != y.DelayMS:
			return x.DelayMS > y.DelayMS
		case (variant(x.Group) == "") != (variant(y.Group) == ""):
			return variant(x.Group) == "" // plain runs before parameter variants
		case x.Rep != y.Rep:
			return x.Rep < y.Rep
		}
		return x.ID < y.ID
	}
	for i, r := range m.runs {
		if len(r.Flows) == 0 {
			continue
		}
		mode := m.sums[i].Mode
		b, ok := best[mode]
		if !ok {
			order = append(order, mode)
			best[mode] = i
		} else if better(i, b) {
			best[mode] = i
		}
	}
	out := make([]int, 0, len(order))
	for _, mode := range order {
		out = append(out, best[mode])
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func fileStem(prefix, id string) string {
	return prefix + "_" + strings.Trim(unsafeName.ReplaceAllString(id, "_"), "_")
}

// addAggregate draws the aggregate goodput series (thick grey) and the
// medium's capacity (dashed, when known) on p, and records the series' rows.
func addAggregate(p *plot.Plot, agg []analysis.Point, capacityMbps float64, row func(t float64, station, series, v string)) error {
	var xys plotter.XYs
	for _, a := range agg {
		xys = append(xys, plotter.XY{X: a.T, Y: a.V})
		row(a.T, "all", "aggregate_goodput_mbps", num(a.V))
	}
	l, err := plotter.NewLine(finite(xys))
	if err != nil {
		return fmt.Errorf("aggregate goodput line: %w", err)
	}
	l.LineStyle.Color, l.LineStyle.Width = color.Gray{Y: 120}, vg.Points(2)
	p.Add(l)
	p.Legend.Add("aggregate", l)
	if !math.IsNaN(capacityMbps) && len(xys) > 0 {
		c := plotter.XYs{{X: xys[0].X, Y: capacityMbps}, {X: xys[len(xys)-1].X, Y: capacityMbps}}
		cl, err := plotter.NewLine(c)
		if err != nil {
			return fmt.Errorf("capacity line: %w", err)
		}
		cl.LineStyle.Color, cl.LineStyle.Dashes = color.Gray{Y: 60}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(cl)
		p.Legend.Add("medium capacity", cl)
	}
	return nil
}

// traces: per-terminal goodput (bytes acknowledged, binned), cwnd (with the
// agent's upper bound), SRTT and CA state of every data flow, and the AP queue, over
// time for one run. Panels without data are left out.
func (m *model) traces(i int) (*figure, error) {
	run, sum := m.runs[i], m.sums[i]
	f := &figure{Name: fileStem("traces", sum.ID), Title: "Goodput, cwnd, RTT, CA state and AP queue: " + sum.ID,
		Width: 7 * vg.Inch, Height: 2.4 * vg.Inch,
		Caption: "Goodput: bytes each terminal's data flows had acknowledged (monitor, flows.csv) in 1 s bins; acknowledgement bursts above the medium's capacity (dashed) are moved back into the bins before them (analysis.GoodputTraces); the thick grey line is the aggregate of all terminals. cwnd, SRTT and CA state: sender-side TCP state of every data flow sampled by the monitor (flows.csv); dotted: the agent's upper bound; CA-state lines are offset slightly per terminal so that they stay apart. AP queue: the emulator's downlink queue (its own clock).",
		Header:  []string{"t_s", "station", "series", "value"}}
	if !sum.Valid {
		f.Title += " (INVALID)"
	}
	pt := newPanel("", "time (s)", fmt.Sprintf("goodput (Mbit/s, %g s bins)", analysis.GoodputBinS))
	pc := newPanel("", "time (s)", "cwnd (segments)")
	pr := newPanel("", "time (s)", "smoothed RTT (ms)")
	pa := newPanel("", "time (s)", "CA state")
	pa.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "Open"}, {Value: 1, Label: "Disorder"},
		{Value: 2, Label: "CWR"}, {Value: 3, Label: "Recovery"}, {Value: 4, Label: "Loss"}})
	pa.Y.Min, pa.Y.Max = -0.2, 4.8
	row := func(t float64, station, series, v string) {
		f.Rows = append(f.Rows, []string{num(t), station, series, v})
	}
	haveGoodput, haveFlows, bounds := false, false, false
	legendPanel := pc
	perStation, agg := analysis.GoodputTraces(run, analysis.GoodputBinS)
	for si, st := range sum.Stations {
		var xys plotter.XYs
		for _, p := range perStation[st.Station] {
			xys = append(xys, plotter.XY{X: p.T, Y: p.V})
			row(p.T, st.Station, "goodput_mbps", num(p.V))
		}
		if len(xys) > 0 {
			haveGoodput = true
			if err := addLine(pt, si, st.Station, xys, false); err != nil {
				return nil, err
			}
		}
		for fi, fl := range analysis.DataFlows(run.Flows, st.Station) {
			haveFlows = true
			var cw, rt, ca plotter.XYs
			for _, s := range fl.Samples {
				cw = append(cw, plotter.XY{X: s.T, Y: float64(s.Cwnd)})
				row(s.T, st.Station, "cwnd", strconv.Itoa(int(s.Cwnd)))
				if s.SRTT > 0 {
					v := float64(s.SRTT.Microseconds()) / 1000
					rt = append(rt, plotter.XY{X: s.T, Y: v})
					row(s.T, st.Station, "srtt_ms", num(v))
				}
				ca = append(ca, plotter.XY{X: s.T, Y: float64(s.CAState) + 0.06*float64(si%10)})
				row(s.T, st.Station, "ca_state", strconv.Itoa(int(s.CAState)))
			}
			name := ""
			if legendPanel == pc && fi == 0 {
				name = st.Station
			}
			if err := addLine(pc, si, name, cw, false); err != nil {
				return nil, err
			}
			if err := addLine(pr, si, "", rt, false); err != nil {
				return nil, err
			}
			if err := addLine(pa, si, "", steps(ca), false); err != nil {
				return nil, err
			}
		}
		// The agent's upper bound, when it set one, as a dotted step line.
		if evs := run.Bounds[st.Station]; len(evs) > 0 && !math.IsNaN(run.RunTime(evs[0].T)) {
			var hi plotter.XYs
			last := lastSampleTime(run)
			for _, e := range evs {
				t := run.RunTime(e.T)
				if t < -1 || t > last+1 {
					continue // not on the recording's clock (skewed or foreign timestamps)
				}
				if e.Hi > 0 {
					hi = append(hi, plotter.XY{X: t, Y: float64(e.Hi)})
				}
				row(t, st.Station, "bound_hi", strconv.Itoa(int(e.Hi)))
			}
			if len(hi) > 0 {
				if last := lastSampleTime(run); last > hi[len(hi)-1].X {
					hi = append(hi, plotter.XY{X: last, Y: hi[len(hi)-1].Y})
				}
				l, err := plotter.NewLine(steps(finite(hi)))
				if err != nil {
					return nil, err
				}
				c, _ := style(si)
				l.LineStyle.Color, l.LineStyle.Dashes, l.LineStyle.Width = c, []vg.Length{vg.Points(1), vg.Points(3)}, vg.Points(1)
				pc.Add(l)
				bounds = true
			}
		}
	}
	if !haveGoodput && !haveFlows {
		return nil, nil
	}
	if haveGoodput {
		legendPanel = pt
		if err := addAggregate(pt, agg, sum.CapacityMbps, row); err != nil {
			return nil, err
		}
	}
	if bounds {
		dotted := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Gray{Y: 80}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(3)}}}
		legendPanel.Legend.Add("agent's upper bound", dotted)
	}
	var panels [][]*plot.Plot
	if haveGoodput {
		pt.Y.Min = 0
		panels = append(panels, []*plot.Plot{pt})
	}
	if haveFlows {
		pc.Y.Min, pr.Y.Min = 0, 0
		panels = append(panels, []*plot.Plot{pc}, []*plot.Plot{pr}, []*plot.Plot{pa})
	}
	if run.Emu != nil && len(run.Emu.Queue) > 0 {
		pq := newPanel("", "time (s)", "AP queue (frames)")
		var xys plotter.XYs
		for _, q := range run.Emu.Queue {
			xys = append(xys, plotter.XY{X: q.T, Y: float64(q.Frames)})
			row(q.T, "ap", "queue_frames", strconv.FormatUint(q.Frames, 10))
		}
		if err := addLine(pq, 6, "", xys, false); err != nil {
			return nil, err
		}
		pq.Y.Min = 0
		panels = append(panels, []*plot.Plot{pq})
	}
	var all []*plot.Plot
	for _, r := range panels {
		all = append(all, r[0])
	}
	alignX(all...)
	f.Panels = panels
	return f, nil
}

// lastSampleTime returns the time of the run's last flow sample.
func lastSampleTime(run analysis.Run) float64 {
	last := 0.0
	for _, s := range run.Flows {
		if n := len(s.Samples); n > 0 {
			last = math.Max(last, s.Samples[n-1].T)
		}
	}
	return last
}

// steps turns points into a step function (value held until the next point).
func steps(xys plotter.XYs) plotter.XYs {
	if len(xys) < 2 {
		return xys
	}
	out := make(plotter.XYs, 0, 2*len(xys))
	for i, p := range xys {
		if i > 0 {
			out = append(out, plotter.XY{X: p.X, Y: xys[i-1].Y})
		}
		out = append(out, p)
	}
	return out
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
			return nil, err
		}
		if err := addLine(pd, 0, "retransmitted since last sample", retr, false); err != nil {
			return nil, err
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
			return nil, err
		}
		if err := addLine(pr, 2, "", rt, false); err != nil {
			return nil, err
		}
	}
	marks := map[string]plotter.XYs{}
	for _, e := range ss.LossEvents {
		marks[e.Class] = append(marks[e.Class], plotter.XY{X: e.T, Y: float64(e.CwndAfter)})
		f.Rows = append(f.Rows, []string{num(e.T), "loss_" + e.Class, strconv.Itoa(int(e.CwndBefore))})
	}
	for k, c := range []string{analysis.Penalizing, analysis.Moderate, analysis.Unknown} {
		if err := addPoints(pc, []int{0, 1, 4}[k], c+" loss", marks[c]); err != nil {
			return nil, err
		}
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

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// airtime: the emulator's airtime share of every node (stations and the
// AP) in the trace runs, one panel per run, with the equal share 1/(N+1)
// dashed: the AP's share against what its ACKs need is the papers' problem.
func (m *model) airtime(runs []int) (*figure, error) {
	f := &figure{Name: "airtime", Title: "Airtime share per node (emulator)",
		Height:  2.6 * vg.Inch,
		Caption: "Share of the medium's time each node spent transmitting (emu/stations.csv airtime_share), for the runs whose traces are shown. Dashed: the equal share 1/(N+1) of N terminals and the AP.",
		Header:  []string{"run", "node", "airtime_share", "airtime_s", "attempts", "collisions", "retries", "drops"}}
	maxNodes := 0
	for _, i := range runs {
		e := m.runs[i].Emu
		if e == nil || len(e.Stations) == 0 {
			continue
		}
		sum := m.sums[i]
		title := sum.ID
		if !sum.Valid {
			title += " (INVALID)"
		}
		p := newPanel(title, "", "airtime share")
		var labels []string
		var vs plotter.Values
		for _, st := range e.Stations {
			labels = append(labels, st.Station)
			vs = append(vs, st.AirtimeShare)
			f.Rows = append(f.Rows, []string{sum.ID, st.Station, num(st.AirtimeShare), num(st.AirtimeS),
				strconv.FormatUint(st.Attempts, 10), strconv.FormatUint(st.Collisions, 10), strconv.FormatUint(st.Retries, 10), strconv.FormatUint(st.Drops, 10)})
		}
		b, err := plotter.NewBarChart(vs, vg.Points(14))
		if err != nil {
			return nil, fmt.Errorf("bars: %w", err)
		}
		c, _ := style(2)
		b.Color, b.LineStyle.Width = c, 0
		p.Add(b)
		nodes := len(m.runs[i].Info.Stations) + 1 // the terminals and the AP
		if nodes == 1 {
			nodes = len(e.Stations)
		}
		eq := 1 / float64(nodes)
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: eq}, {X: float64(len(vs)) - 0.5, Y: eq}})
		if err != nil {
			return nil, err
		}
		l.LineStyle.Dashes, l.LineStyle.Color = []vg.Length{vg.Points(4), vg.Points(3)}, color.Gray{Y: 90}
		p.Add(l)
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.7, float64(len(vs))-0.3
		p.Y.Min = 0
		f.Panels = append(f.Panels, []*plot.Plot{p})
		maxNodes = max(maxNodes, len(vs))
	}
	if len(f.Panels) == 0 {
		return nil, nil
	}
	f.Width = vg.Length(math.Max(4, 1.5+0.45*float64(maxNodes))) * vg.Inch
	top := 0.0
	for _, r := range f.Panels {
		top = math.Max(top, r[0].Y.Max)
	}
	for _, r := range f.Panels {
		r[0].Y.Max = top * 1.05
	}
	return f, nil
}
