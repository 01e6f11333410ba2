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
	tf := newTraceFigure(sum)
	perStation, agg := analysis.GoodputTraces(run, analysis.GoodputBinS)
	for si, st := range sum.Stations {
		if err := tf.addStation(run, si, st.Station, perStation[st.Station]); err != nil {
			return nil, err
		}
	}
	if !tf.haveGoodput && !tf.haveFlows {
		return nil, nil
	}
	legendPanel := tf.cwnd
	if tf.haveGoodput {
		legendPanel = tf.goodput
		if err := addAggregate(tf.goodput, agg, sum.CapacityMbps, tf.row); err != nil {
			return nil, err
		}
	}
	if tf.haveBounds {
		dotted := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Gray{Y: 80}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(3)}}}
		legendPanel.Legend.Add("agent's upper bound", dotted)
	}
	panels, err := tf.layout(run)
	if err != nil {
		return nil, err
	}
	var all []*plot.Plot
	for _, r := range panels {
		all = append(all, r[0])
	}
	alignX(all...)
	tf.f.Panels = panels
	return tf.f, nil
}

// traceFigure is a run's traces figure while it is drawn: its panels,
// which of them have data, and the figure, whose rows record every value
// drawn.
type traceFigure struct {
	f                                  *figure
	goodput, cwnd, rtt, ca             *plot.Plot
	haveGoodput, haveFlows, haveBounds bool
}

// newTraceFigure is the empty traces figure of the run summarized by sum,
// with its four panels (goodput, cwnd, SRTT and CA state).
func newTraceFigure(sum analysis.RunSummary) *traceFigure {
	f := &figure{Name: fileStem("traces", sum.ID), Title: "Goodput, cwnd, RTT, CA state and AP queue: " + sum.ID,
		Width: 7 * vg.Inch, Height: 2.4 * vg.Inch,
		Caption: "Goodput: bytes each terminal's data flows had acknowledged (monitor, flows.csv) in 1 s bins; acknowledgement bursts above the medium's capacity (dashed) are moved back into the bins before them (analysis.GoodputTraces); the thick grey line is the aggregate of all terminals. cwnd, SRTT and CA state: sender-side TCP state of every data flow sampled by the monitor (flows.csv); dotted: the agent's upper bound; CA-state lines are offset slightly per terminal so that they stay apart. AP queue: the emulator's downlink queue (its own clock).",
		Header:  []string{"t_s", "station", "series", "value"}}
	if !sum.Valid {
		f.Title += " (INVALID)"
	}
	tf := &traceFigure{f: f,
		goodput: newPanel("", "time (s)", fmt.Sprintf("goodput (Mbit/s, %g s bins)", analysis.GoodputBinS)),
		cwnd:    newPanel("", "time (s)", "cwnd (segments)"),
		rtt:     newPanel("", "time (s)", "smoothed RTT (ms)"),
		ca:      newPanel("", "time (s)", "CA state"),
	}
	tf.ca.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "Open"}, {Value: 1, Label: "Disorder"},
		{Value: 2, Label: "CWR"}, {Value: 3, Label: "Recovery"}, {Value: 4, Label: "Loss"}})
	tf.ca.Y.Min, tf.ca.Y.Max = -0.2, 4.8
	return tf
}

// row records one value drawn in the figure's data.
func (tf *traceFigure) row(t float64, station, series, v string) {
	tf.f.Rows = append(tf.f.Rows, []string{num(t), station, series, v})
}

// addStation draws the traces of the station with index si: its goodput
// (binned points), the cwnd, SRTT and CA state of each of its data flows
// (the first flow's cwnd named after the station in the legend) and the
// agent's upper bound.
func (tf *traceFigure) addStation(run analysis.Run, si int, station string, goodput []analysis.Point) error {
	if err := tf.addGoodput(si, station, goodput); err != nil {
		return err
	}
	for fi, fl := range analysis.DataFlows(run.Flows, station) {
		tf.haveFlows = true
		name := ""
		if fi == 0 {
			name = station
		}
		if err := addFlowState(tf.cwnd, tf.rtt, tf.ca, fl, si, name, func(t float64, series, v string) { tf.row(t, station, series, v) }); err != nil {
			return err
		}
	}
	return tf.addBound(run, si, station)
}

// addGoodput draws a station's goodput (points; nothing when there are
// none) in style si on the goodput panel.
func (tf *traceFigure) addGoodput(si int, station string, points []analysis.Point) error {
	var xys plotter.XYs
	for _, p := range points {
		xys = append(xys, plotter.XY{X: p.T, Y: p.V})
		tf.row(p.T, station, "goodput_mbps", num(p.V))
	}
	if len(xys) == 0 {
		return nil
	}
	tf.haveGoodput = true
	return addLine(tf.goodput, si, station, xys, false)
}

// addBound draws the agent's upper bound of a station, when it set one, as
// a dotted step line in style si on the cwnd panel.
func (tf *traceFigure) addBound(run analysis.Run, si int, station string) error {
	hi := boundSeries(run, analysis.StationBounds(run, station), func(e analysis.BoundEvent) uint32 { return e.Hi },
		func(t float64, v uint32) { tf.row(t, station, "bound_hi", strconv.Itoa(int(v))) })
	if len(hi) == 0 {
		return nil
	}
	if err := addDotted(tf.cwnd, si, hi); err != nil {
		return err
	}
	tf.haveBounds = true
	return nil
}

// layout is the figure's rows of panels, top to bottom those with data:
// goodput; cwnd, SRTT and CA state; the AP queue (emulated runs).
func (tf *traceFigure) layout(run analysis.Run) ([][]*plot.Plot, error) {
	var panels [][]*plot.Plot
	if tf.haveGoodput {
		tf.goodput.Y.Min = 0
		panels = append(panels, []*plot.Plot{tf.goodput})
	}
	if tf.haveFlows {
		tf.cwnd.Y.Min, tf.rtt.Y.Min = 0, 0
		panels = append(panels, []*plot.Plot{tf.cwnd}, []*plot.Plot{tf.rtt}, []*plot.Plot{tf.ca})
	}
	if run.Emu != nil && len(run.Emu.Queue) > 0 {
		pq, err := apQueuePanel(run.Emu.Queue, tf.row)
		if err != nil {
			return nil, err
		}
		panels = append(panels, []*plot.Plot{pq})
	}
	if run.Emu != nil && len(run.Emu.Medium) > 0 {
		pm, err := airPanel(run, tf.row)
		if err != nil {
			return nil, err
		}
		panels = append(panels, []*plot.Plot{pm})
	}
	return panels, nil
}

// airPanel is the medium's panel (emu/medium.csv, over the emulator's
// time): the share of each 100 ms the medium was busy, and the airtime
// shares of the managed stations together, of the others (hosts outside
// the mode) together and of the AP; row records each sample. Beside hosts
// it shows who had the air before the managed terminals' verdict
// (docs/results.md, twenty-third session).
func airPanel(run analysis.Run, row func(t float64, station, series, v string)) (*plot.Plot, error) {
	managed := map[string]bool{}
	for _, st := range run.Info.Stations {
		managed[st.Name] = st.Managed
	}
	p := newPanel("", "time (s)", "share of the air")
	var busy, man, other, ap plotter.XYs
	for _, m := range run.Emu.Medium {
		var sm, so float64
		for node, v := range m.Share {
			switch {
			case node == "ap":
			case managed[node]:
				sm += v
			default:
				so += v
			}
		}
		busy = append(busy, plotter.XY{X: m.T, Y: m.Busy})
		man = append(man, plotter.XY{X: m.T, Y: sm})
		other = append(other, plotter.XY{X: m.T, Y: so})
		ap = append(ap, plotter.XY{X: m.T, Y: m.Share["ap"]})
		row(m.T, "medium", "busy_share", num(m.Busy))
		row(m.T, "managed", "air_share", num(sm))
		row(m.T, "others", "air_share", num(so))
		row(m.T, "ap", "air_share", num(m.Share["ap"]))
	}
	for i, l := range []struct {
		name string
		xys  plotter.XYs
	}{{"busy", busy}, {"managed", man}, {"others", other}, {"AP", ap}} {
		if err := addLine(p, i, l.name, l.xys, false); err != nil {
			return nil, err
		}
	}
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = 0, 1.05
	return p, nil
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
