package report

// Figures of coexistence runs: per-group throughput of managed and
// unmanaged terminals, and the capability-weighted fairness scatter.

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

	"github.com/coopcc/coopcc/lab/analysis"
)

// coexistence: when some run mixes station groups (managed vs unmanaged,
// or the scenario's named groups), the mean goodput per terminal of each
// group, for every run group with the same N and delay as a mixed one
// (baselines with one group included); one panel per mode.
func (m *model) coexistence() (*figure, error) {
	modes, byMode, cats := mixedGroups(m.groups)
	if len(modes) == 0 {
		return nil, nil
	}
	maxCols := 0
	for _, mode := range modes {
		maxCols = max(maxCols, len(byMode[mode]))
	}
	f := &figure{Name: "coexistence", Title: "Mean goodput per terminal by terminal group",
		Height: 3.2 * vg.Inch, Width: vg.Length(1.5+(0.35+0.22*float64(len(cats)))*float64(maxCols)) * vg.Inch,
		Caption: "Managed terminals run the mode (the coopcc agent with its policy, or in a kernel mode such as bbr that CC), unmanaged ones keep the scenario's terminals.cc; named groups come from the scenario. Bars: mean goodput per terminal of each group, averaged over valid repetitions; one panel per mode. " + spreadCaption(m.groups),
		Header: append(append([]string{"group", "mode", "n", "delay_ms", "terminal_group", "terminals"}, statHeader("mbps")...),
			"aggregate_mbps", "reps")}
	for mi, mode := range modes {
		p, err := coexistencePanel(f, mode, byMode[mode], cats, maxCols, mi == 0)
		if err != nil {
			return nil, err
		}
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

// mixedGroups returns the run groups of the (N, delay) points at which some
// group has two or more terminal groups with a goodput (mixed runs), by mode
// in the order the modes first appear, and the terminal groups they name,
// managed first (catRank).
func mixedGroups(groups []analysis.GroupSummary) (modes []string, byMode map[string][]analysis.GroupSummary, cats []string) {
	type nd struct {
		n int
		d float64
	}
	count := func(g analysis.GroupSummary) int {
		n := 0
		for _, st := range g.GroupMbps {
			if !math.IsNaN(st.Mean) {
				n++
			}
		}
		return n
	}
	mixedAt := map[nd]bool{}
	for _, g := range groups {
		if count(g) >= 2 {
			mixedAt[nd{g.N, g.DelayMS}] = true
		}
	}
	byMode = map[string][]analysis.GroupSummary{}
	for _, g := range groups {
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
	return modes, byMode, cats
}

// coexistencePanel is one mode's panel of the coexistence figure: a bar
// per terminal group (cats) for each of the mode's run groups gs, with its
// spread; their rows go to f. legend puts the terminal groups in its legend.
func coexistencePanel(f *figure, mode string, gs []analysis.GroupSummary, cats []string, maxCols int, legend bool) (*plot.Plot, error) {
	w := vg.Points(11)
	p := newPanel(mode, "", "goodput per terminal (Mbit/s)")
	var labels []string
	vals := make([]plotter.Values, len(cats))
	sps := make([]spread, len(cats))
	for _, g := range gs {
		counts := map[string]int{}
		for _, st := range g.Runs[0].Stations {
			counts[stationGroupOf(st)]++
		}
		labels = append(labels, coexistenceLabel(g, counts))
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
		if legend {
			p.Legend.Add(cats[ci], b)
		}
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.7, float64(maxCols)-0.3
	p.Y.Min = 0
	p.Y.Max *= 1.1
	return p, nil
}

// coexistenceLabel is a run group's label on the coexistence figure: N and
// delay, the managed count, the variant and the valid repetitions.
func coexistenceLabel(g analysis.GroupSummary, counts map[string]int) string {
	label := fmt.Sprintf("N=%d, %gms", g.N, g.DelayMS)
	if counts["managed"] > 0 || counts["unmanaged"] > 0 {
		label += fmt.Sprintf("\n%d managed", counts["managed"])
	}
	if v := variant(g.Key); v != "" && !strings.HasPrefix(v, "managed=") {
		label += "\n" + v
	}
	return label + fmt.Sprintf("\nreps %d", g.ValidRuns)
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
