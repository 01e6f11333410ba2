package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coopcc/coopcc/lab/analysis"
)

// spread draws the spread of group statistics over repetitions: at each
// point a thin bar over min–max (with caps) and a thick bar over the 95 %
// confidence interval of the mean. YStats are drawn vertically at X[i]
// (shifted by Offset on the canvas, for grouped bars), XStats horizontally
// at Y[i]; either may be nil. A statistic of fewer than two repetitions has
// no spread and draws nothing.
type spread struct {
	X, Y           []float64
	XStats, YStats []analysis.Stat
	Offset         vg.Length
	Color          color.Color
}

// Plot implements plot.Plotter.
func (s spread) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	thin := draw.LineStyle{Color: s.Color, Width: vg.Points(0.8)}
	thick := draw.LineStyle{Color: s.Color, Width: vg.Points(3)}
	capW := vg.Points(3)
	clampY := func(v float64) vg.Length { return trY(math.Max(p.Y.Min, math.Min(p.Y.Max, v))) }
	clampX := func(v float64) vg.Length { return trX(math.Max(p.X.Min, math.Min(p.X.Max, v))) }
	for i, st := range s.YStats {
		if st.N < 2 || math.IsNaN(s.X[i]) {
			continue
		}
		x := trX(s.X[i]) + s.Offset
		lo, hi := clampY(st.Min), clampY(st.Max)
		c.StrokeLine2(thin, x, lo, x, hi)
		c.StrokeLine2(thin, x-capW, lo, x+capW, lo)
		c.StrokeLine2(thin, x-capW, hi, x+capW, hi)
		if !math.IsNaN(st.CI95) {
			c.StrokeLine2(thick, x, clampY(st.Mean-st.CI95), x, clampY(st.Mean+st.CI95))
		}
	}
	for i, st := range s.XStats {
		if st.N < 2 || math.IsNaN(s.Y[i]) {
			continue
		}
		y := trY(s.Y[i])
		lo, hi := clampX(st.Min), clampX(st.Max)
		c.StrokeLine2(thin, lo, y, hi, y)
		c.StrokeLine2(thin, lo, y-capW, lo, y+capW)
		c.StrokeLine2(thin, hi, y-capW, hi, y+capW)
		if !math.IsNaN(st.CI95) {
			c.StrokeLine2(thick, clampX(st.Mean-st.CI95), y, clampX(st.Mean+st.CI95), y)
		}
	}
}

// DataRange implements plot.DataRanger: the axes take in the whole spread
// (a figure that fixes an axis, Jain's at 1.02, clips the bars to it).
func (s spread) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	see := func(v float64, lo, hi *float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			*lo, *hi = math.Min(*lo, v), math.Max(*hi, v)
		}
	}
	for i, st := range s.YStats {
		see(s.X[i], &xmin, &xmax)
		if st.N >= 2 {
			see(st.Min, &ymin, &ymax)
			see(st.Max, &ymin, &ymax)
			see(st.Mean-st.CI95, &ymin, &ymax)
			see(st.Mean+st.CI95, &ymin, &ymax)
		}
	}
	for i, st := range s.XStats {
		see(s.Y[i], &ymin, &ymax)
		if st.N >= 2 {
			see(st.Min, &xmin, &xmax)
			see(st.Max, &xmin, &xmax)
			see(st.Mean-st.CI95, &xmin, &xmax)
			see(st.Mean+st.CI95, &xmin, &xmax)
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 0
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 0, 0
	}
	return xmin, xmax, ymin, ymax
}

// spreadCaption says how the spread is drawn and how many repetitions
// stand behind the numbers of the groups drawn.
func spreadCaption(groups []analysis.GroupSummary) string {
	return "Mean over valid repetitions; thick bars: 95 % confidence interval of the mean (Student t), thin bars: min–max. " +
		repsNote(groups) + " Invalid runs are left out."
}

// repsNote is "3 valid repetitions per point." or "2–3 valid repetitions
// per point (column reps of the CSV)."
func repsNote(groups []analysis.GroupSummary) string {
	lo, hi := math.MaxInt, 0
	for _, g := range groups {
		if g.ValidRuns == 0 {
			continue
		}
		lo, hi = min(lo, g.ValidRuns), max(hi, g.ValidRuns)
	}
	switch {
	case hi == 0:
		return "No valid repetitions."
	case lo == hi && hi == 1:
		return "1 valid repetition per point: no spread to show."
	case lo == hi:
		return fmt.Sprintf("%d valid repetitions per point.", hi)
	}
	return fmt.Sprintf("%d–%d valid repetitions per point (column reps of the CSV).", lo, hi)
}
