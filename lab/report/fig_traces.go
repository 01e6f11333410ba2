package report

// Per-run time-series figures: goodput, cwnd, SRTT and the AP queue of
// every station, with the aggregate and the medium's capacity.

import (
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coopcc/coopcc/lab/analysis"
)

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
			name := ""
			if legendPanel == pc && fi == 0 {
				name = st.Station
			}
			if err := addFlowState(pc, pr, pa, fl, si, name, func(t float64, series, v string) { row(t, st.Station, series, v) }); err != nil {
				return nil, err
			}
		}
		// The agent's upper bound, when it set one, as a dotted step line.
		hi := boundSeries(run, analysis.StationBounds(run, st.Station), func(e analysis.BoundEvent) uint32 { return e.Hi },
			func(t float64, v uint32) { row(t, st.Station, "bound_hi", strconv.Itoa(int(v))) })
		if len(hi) > 0 {
			if err := addDotted(pc, si, hi); err != nil {
				return nil, err
			}
			bounds = true
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
		pq, err := apQueuePanel(run.Emu.Queue, row)
		if err != nil {
			return nil, err
		}
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

// addFlowState adds one data flow's cwnd (pc, legend name unless ""), SRTT
// (pr) and CA state (pa, offset by the station's index si so that the
// stations' lines stay apart) in the station's style si; row records each
// sample.
func addFlowState(pc, pr, pa *plot.Plot, fl analysis.Series, si int, name string, row func(t float64, series, v string)) error {
	var cw, rt, ca plotter.XYs
	for _, s := range fl.Samples {
		cw = append(cw, plotter.XY{X: s.T, Y: float64(s.Cwnd)})
		row(s.T, "cwnd", strconv.Itoa(int(s.Cwnd)))
		if s.SRTT > 0 {
			v := float64(s.SRTT.Microseconds()) / 1000
			rt = append(rt, plotter.XY{X: s.T, Y: v})
			row(s.T, "srtt_ms", num(v))
		}
		ca = append(ca, plotter.XY{X: s.T, Y: float64(s.CAState) + 0.06*float64(si%10)})
		row(s.T, "ca_state", strconv.Itoa(int(s.CAState)))
	}
	if err := addLine(pc, si, name, cw, false); err != nil {
		return err
	}
	if err := addLine(pr, si, "", rt, false); err != nil {
		return err
	}
	return addLine(pa, si, "", steps(ca), false)
}

// addDotted adds xys to p as a dotted line in style i.
func addDotted(p *plot.Plot, i int, xys plotter.XYs) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	c, _ := style(i)
	l.LineStyle.Color, l.LineStyle.Dashes, l.LineStyle.Width = c, []vg.Length{vg.Points(1), vg.Points(3)}, vg.Points(1)
	p.Add(l)
	return nil
}

// apQueuePanel is the AP queue's panel (frames over the emulator's time);
// row records each sample.
func apQueuePanel(queue []analysis.QueueSample, row func(t float64, station, series, v string)) (*plot.Plot, error) {
	pq := newPanel("", "time (s)", "AP queue (frames)")
	var xys plotter.XYs
	for _, q := range queue {
		xys = append(xys, plotter.XY{X: q.T, Y: float64(q.Frames)})
		row(q.T, "ap", "queue_frames", strconv.FormatUint(q.Frames, 10))
	}
	if err := addLine(pq, 6, "", xys, false); err != nil {
		return nil, err
	}
	pq.Y.Min = 0
	return pq, nil
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

// boundSeries is one bound (value picks it from an event: Lo or Hi) as a
// step line on the run's clock through the events that set it (> 0), held
// to the last flow sample; nil when it was never set. Events off the
// recording's clock (skewed or foreign timestamps) are left out; row sees
// every event kept, zero values too.
func boundSeries(run analysis.Run, evs []analysis.BoundEvent, value func(analysis.BoundEvent) uint32, row func(t float64, v uint32)) plotter.XYs {
	if len(evs) == 0 || math.IsNaN(run.RunTime(evs[0].T)) {
		return nil
	}
	var xys plotter.XYs
	last := lastSampleTime(run)
	for _, e := range evs {
		t := run.RunTime(e.T)
		if t < -1 || t > last+1 {
			continue
		}
		v := value(e)
		if v > 0 {
			xys = append(xys, plotter.XY{X: t, Y: float64(v)})
		}
		row(t, v)
	}
	if len(xys) == 0 {
		return nil
	}
	if n := len(xys); last > xys[n-1].X {
		xys = append(xys, plotter.XY{X: last, Y: xys[n-1].Y})
	}
	return steps(finite(xys))
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
