// Package report renders a lab results directory as figures (PNG and SVG,
// drawn with gonum/plot), the data of every figure as CSV, a summary table
// (text and CSV) and one self-contained HTML page. Which figures are drawn
// follows from what the results contain, so a report of a tiny run works.
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
)

// Options control a report.
type Options struct {
	// Formats of the figures: "png", "svg" or both (the default). The HTML
	// page embeds PNG as data URIs, or inline SVG when PNG is not rendered.
	Formats []string
	// LossRule classifies loss events; the zero value means analysis.DefaultLossRule().
	LossRule analysis.LossRule
	// Window, when not zero, measures goodput, the aggregate and the
	// fairness indices over this part of the traffic schedule only (e.g.
	// 10 s..25 s: steady state, without slow start); see analysis.Window.
	Window analysis.Window
}

// Report is what Write produced.
type Report struct {
	OutDir   string
	HTMLPath string
	Runs     []analysis.RunSummary // one per run, sorted by run id
	Groups   []analysis.GroupSummary
	Figures  []Figure
	Files    []string // every file written, relative to OutDir
	Warnings []string // the loader's warnings (SummarizeWarnings)
	// Window is the part of the traffic schedule goodput was measured over
	// (Options.Window; zero: each station's whole traffic window).
	Window analysis.Window
	// Knees are the calibration sweep's knees (analysis.Calibration; nil
	// without runs of sweep.bound_multiplier).
	Knees []analysis.CalibrationKnee
}

// WindowNote is the line that says over which window goodput was measured,
// "" when over the whole traffic windows.
func (r *Report) WindowNote() string {
	if r.Window.IsZero() {
		return ""
	}
	return fmt.Sprintf("goodput, aggregate and fairness over %s of the traffic schedule (--window); RTT and loss statistics over the whole run", r.Window)
}

// Analyze summarizes every run (its goodput over opt.Window when given) and
// groups the repetitions. Stations without a known throughput-alone value
// get one from reference runs (see analysis.FillMaxFromReference).
func Analyze(res *results.Results, opt Options) ([]analysis.RunSummary, []analysis.GroupSummary) {
	rule := opt.LossRule
	if rule == (analysis.LossRule{}) {
		rule = analysis.DefaultLossRule()
	}
	sums := make([]analysis.RunSummary, len(res.Runs))
	for i, r := range res.Runs {
		sums[i] = analysis.Summarize(opt.Window.Clip(r), rule)
	}
	analysis.FillMaxFromReference(sums)
	return sums, analysis.Group(sums)
}

// Write analyzes res and writes the report into outDir (created if needed):
// report.html, summary.txt, summary.csv, runs.csv, loss_events.csv (when
// there are loss events), rates.{txt,csv} (emulated runs), follow_n.{txt,csv}
// (runs whose agents' N changed: terminals joining and leaving), and
// <figure>.{png,svg,csv} for every figure.
func Write(res *results.Results, outDir string, opt Options) (*Report, error) {
	formats, err := normalizeFormats(opt.Formats)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("create report directory: %w", err)
	}
	sums, groups := Analyze(res, opt)
	rep := &Report{OutDir: outDir, Runs: sums, Groups: groups, Warnings: SummarizeWarnings(res.Warnings), Window: opt.Window}

	m := &model{runs: res.Runs, sums: sums, groups: groups, series: map[string]int{}}
	figs, err := m.figures()
	if err != nil {
		return nil, fmt.Errorf("build figures: %w", err)
	}
	for _, f := range figs {
		out, err := f.render(outDir, formats)
		if err != nil {
			return nil, err
		}
		rep.Figures = append(rep.Figures, out)
		for _, format := range append(append([]string(nil), formats...), "csv") {
			rep.Files = append(rep.Files, out.Files[format])
		}
	}

	var txt strings.Builder
	if note := rep.WindowNote(); note != "" {
		txt.WriteString(note + "\n")
	}
	if err := WriteSummaryTable(&txt, groups); err != nil {
		return nil, err
	}
	points, knees := analysis.Calibration(sums)
	rep.Knees = knees
	if len(knees) > 0 {
		txt.WriteString("\n")
		if err := WriteKneeTable(&txt, knees); err != nil {
			return nil, err
		}
	}
	calFiles, err := writeCalibration(outDir, points, knees)
	if err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, calFiles...)
	if err := os.WriteFile(filepath.Join(outDir, "summary.txt"), []byte(txt.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write summary.txt: %w", err)
	}
	if err := writeCSV(filepath.Join(outDir, "summary.csv"), summaryHeader, summaryRows(groups)); err != nil {
		return nil, err
	}
	if err := writeCSV(filepath.Join(outDir, "runs.csv"), runsHeader, runsRows(sums)); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, "summary.txt", "summary.csv", "runs.csv")
	if rows := rateRows(res.Runs); len(rows) > 0 {
		var rt strings.Builder
		if err := WriteRateTable(&rt, res.Runs); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(outDir, "rates.txt"), []byte(rt.String()), 0o644); err != nil {
			return nil, fmt.Errorf("write rates.txt: %w", err)
		}
		if err := writeCSV(filepath.Join(outDir, "rates.csv"), ratesHeader, rows); err != nil {
			return nil, err
		}
		rep.Files = append(rep.Files, "rates.txt", "rates.csv")
	}
	if rows := followRows(res.Runs); len(rows) > 0 {
		var ft strings.Builder
		if err := WriteFollowTable(&ft, res.Runs); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(outDir, "follow_n.txt"), []byte(ft.String()), 0o644); err != nil {
			return nil, fmt.Errorf("write follow_n.txt: %w", err)
		}
		if err := writeCSV(filepath.Join(outDir, "follow_n.csv"), followHeader, rows); err != nil {
			return nil, err
		}
		rep.Files = append(rep.Files, "follow_n.txt", "follow_n.csv")
	}

	rep.HTMLPath = filepath.Join(outDir, "report.html")
	if err := writeHTML(rep.HTMLPath, res, rep, txt.String()); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, "report.html")
	return rep, nil
}

func normalizeFormats(in []string) ([]string, error) {
	if len(in) == 0 {
		return []string{"png", "svg"}, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range in {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case "png", "svg":
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		case "":
		default:
			return nil, fmt.Errorf("unknown figure format %q: use png, svg or png,svg", f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no figure format given: use png, svg or png,svg")
	}
	return out, nil
}
