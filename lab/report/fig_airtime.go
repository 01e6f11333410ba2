package report

// The airtime figure: each station's share of the medium.

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

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
