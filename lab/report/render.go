package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is one figure of the report: a grid of panels, and its data as a table.
type figure struct {
	Name    string // file stem, e.g. "throughput_vs_n"
	Title   string
	Caption string
	Panels  [][]*plot.Plot // rows × columns
	Width   vg.Length      // per column
	Height  vg.Length      // per row
	Header  []string       // CSV header of the figure's data
	Rows    [][]string

	prepared bool
	legends  []*plot.Legend // per row, drawn right of the panels (nil = none)
	legendW  vg.Length
}

// prepare moves each row's legend (the first panel's that has entries) out
// of the data area into a column right of the panels, so legends never hide
// data. Idempotent.
func (f *figure) prepare() {
	if f.prepared {
		return
	}
	f.prepared = true
	f.legends = make([]*plot.Legend, len(f.Panels))
	for j, row := range f.Panels {
		for _, p := range row {
			if p == nil {
				continue
			}
			r := p.Legend.Rectangle(draw.Canvas{})
			if w := r.Max.X - r.Min.X; w > 0 && f.legends[j] == nil {
				lg := p.Legend
				lg.Top, lg.Left = true, true
				f.legends[j] = &lg
				if w+vg.Millimeter*4 > f.legendW {
					f.legendW = w + vg.Millimeter*4
				}
			}
			style := p.Legend.TextStyle
			p.Legend = plot.NewLegend()
			p.Legend.TextStyle = style
		}
	}
}

// Figure is a rendered figure as the report lists it.
type Figure struct {
	Name    string
	Title   string
	Caption string
	Files   map[string]string // format ("png", "svg", "csv") → file name relative to the output directory
	PNG     []byte            // rendered PNG (nil unless "png" was asked for)
	SVG     []byte            // rendered SVG (nil unless "svg" was asked for)
}

const dpi = 110

func (f *figure) size() (vg.Length, vg.Length) {
	f.prepare()
	rows, cols := len(f.Panels), 0
	if rows > 0 {
		cols = len(f.Panels[0])
	}
	return f.Width*vg.Length(cols) + f.legendW, f.Height * vg.Length(rows)
}

// draw renders the panels onto dc.
func (f *figure) draw(dc draw.Canvas) {
	rows, cols := len(f.Panels), len(f.Panels[0])
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 3}
	f.prepare()
	area := draw.Crop(dc, 0, -f.legendW, 0, 0)
	canvases := plot.Align(f.Panels, tiles, area)
	for j := range f.Panels {
		for i, p := range f.Panels[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
		if lg := f.legends[j]; lg != nil {
			c := canvases[j][cols-1]
			c.Min.X, c.Max.X = area.Max.X+vg.Millimeter*2, dc.Max.X
			c.Max.Y -= vg.Millimeter * 8 // below the panel title
			lg.Draw(c)
		}
	}
}

// render writes the figure in each format, and its data as CSV, into dir.
func (f *figure) render(dir string, formats []string) (Figure, error) {
	out := Figure{Name: f.Name, Title: f.Title, Caption: f.Caption, Files: map[string]string{}}
	w, h := f.size()
	for _, format := range formats {
		var buf bytes.Buffer
		switch format {
		case "png":
			c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
			f.draw(draw.New(c))
			if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
				return out, fmt.Errorf("render %s.png: %w", f.Name, err)
			}
			out.PNG = buf.Bytes()
		case "svg":
			c := vgsvg.New(w, h)
			f.draw(draw.New(c))
			if _, err := c.WriteTo(&buf); err != nil {
				return out, fmt.Errorf("render %s.svg: %w", f.Name, err)
			}
			out.SVG = buf.Bytes()
		default:
			return out, fmt.Errorf("unknown figure format %q (use png, svg)", format)
		}
		name := f.Name + "." + format
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return out, fmt.Errorf("write figure: %w", err)
		}
		out.Files[format] = name
	}
	name := f.Name + ".csv"
	if err := writeCSV(filepath.Join(dir, name), f.Header, f.Rows); err != nil {
		return out, err
	}
	out.Files["csv"] = name
	return out, nil
}

func writeCSV(path string, header []string, rows [][]string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// newPanel returns a plot with a title, axis labels, a grid and the legend
// at the top left.
func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(3)
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	return p
}

// niceTicks puts about five labelled ticks at 1, 2 or 5 × 10^k steps,
// labelled with no more decimals than the step needs.
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 4, 64)}}
	}
	raw := (max - min) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	prec := 0
	if step < 1 {
		prec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		// unlabelled minor ticks halfway
		if h := v + step/2; h <= max {
			ts = append(ts, plot.Tick{Value: h})
		}
	}
	if h := math.Ceil(min/step)*step - step/2; h >= min {
		ts = append(ts, plot.Tick{Value: h})
	}
	return ts
}

// sharedLegend adds one legend entry per label to p (a line with the
// label's glyph, styled like addLine's series), for figures whose panels
// share their series.
func sharedLegend(p *plot.Plot, labels []string, styleOf func(string) int, points bool) {
	for _, l := range labels {
		i := styleOf(l)
		c, dashes := style(i)
		var thumbs []plot.Thumbnailer
		if points {
			sc := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: c, Shape: plotutil.Shape(i), Radius: vg.Points(3)}}
			thumbs = append(thumbs, sc)
		}
		ln := &plotter.Line{LineStyle: draw.LineStyle{Color: c, Dashes: dashes, Width: vg.Points(1.5)}}
		thumbs = append([]plot.Thumbnailer{ln}, thumbs...)
		p.Legend.Add(l, thumbs...)
	}
}

// intTicks marks integers only (for counts such as N), at most about ten.
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	step := math.Max(1, math.Ceil((hi-lo)/10))
	var ts []plot.Tick
	for v := lo; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ts
}

// alignX gives stacked time panels the same x range, starting at 0.
func alignX(ps ...*plot.Plot) {
	max := 0.0
	for _, p := range ps {
		max = math.Max(max, p.X.Max)
	}
	for _, p := range ps {
		p.X.Min, p.X.Max = 0, max
	}
}

// style picks a distinguishable color (and, beyond the palette, a dash pattern) for series i.
func style(i int) (color.Color, []vg.Length) {
	return plotutil.Color(i), plotutil.Dashes(i / len(plotutil.DefaultColors))
}

// finite drops points with a NaN or infinite coordinate (gonum refuses them).
func finite(xys plotter.XYs) plotter.XYs {
	out := xys[:0:0]
	for _, p := range xys {
		if !math.IsNaN(p.X) && !math.IsNaN(p.Y) && !math.IsInf(p.X, 0) && !math.IsInf(p.Y, 0) {
			out = append(out, p)
		}
	}
	return out
}

// addLine adds a line (with point glyphs when points is set) for series i.
func addLine(p *plot.Plot, i int, name string, xys plotter.XYs, points bool) error {
	xys = finite(xys)
	if len(xys) == 0 {
		return nil
	}
	c, dashes := style(i)
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("line %s: %w", name, err)
	}
	l.LineStyle.Color, l.LineStyle.Dashes, l.LineStyle.Width = c, dashes, vg.Points(1.5)
	p.Add(l)
	if points {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("points %s: %w", name, err)
		}
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = c, plotutil.Shape(i), vg.Points(3)
		p.Add(s)
		if name != "" {
			p.Legend.Add(name, l, s)
		}
		return nil
	}
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// addPoints adds a scatter for series i.
func addPoints(p *plot.Plot, i int, name string, xys plotter.XYs) error {
	xys = finite(xys)
	if len(xys) == 0 {
		return nil
	}
	c, _ := style(i)
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("points %s: %w", name, err)
	}
	s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = c, filledShape(i), vg.Points(4)
	p.Add(s)
	if name != "" {
		p.Legend.Add(name, s)
	}
	return nil
}

// num formats a number for CSV: "" for NaN.
func num(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// filledShape returns a filled glyph (easier to see than outlines) for series i.
func filledShape(i int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	return shapes[i%len(shapes)]
}
