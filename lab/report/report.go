// Package report renders a lab results directory as figures (PNG and SVG,
// drawn with gonum/plot), the data of every figure as CSV, a summary table
// (text and CSV) and one self-contained HTML page. Which figures are drawn
// follows from what the results contain, so a report of a tiny run works.
package report

import (
	"fmt"
	"io"
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
	// Kinds are the groups' kinds of terminal against doing nothing
	// (analysis.KindRatios; nil without a cubic reference).
	Kinds []analysis.KindRatio
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

	if err := rep.writeFigures(res.Runs, formats); err != nil {
		return nil, err
	}
	txt, err := rep.writeSummaries()
	if err != nil {
		return nil, err
	}
	if err := rep.writeRunTable("rates", res.Runs, WriteRateTable, ratesHeader, rateRows(res.Runs)); err != nil {
		return nil, err
	}
	if err := rep.writeRunTable("follow_n", res.Runs, WriteFollowTable, followHeader, followRows(res.Runs)); err != nil {
		return nil, err
	}

	rep.HTMLPath = filepath.Join(outDir, "report.html")
	if err := writeHTML(rep.HTMLPath, res, rep, txt); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, "report.html")
	return rep, nil
}

// writeFigures draws the figures of runs (summarized in rep) in formats,
// each with its data as CSV, and adds them and their files to rep.
func (rep *Report) writeFigures(runs []analysis.Run, formats []string) error {
	m := &model{runs: runs, sums: rep.Runs, groups: rep.Groups, series: map[string]int{}}
	figs, err := m.figures()
	if err != nil {
		return fmt.Errorf("build figures: %w", err)
	}
	for _, f := range figs {
		out, err := f.render(rep.OutDir, formats)
		if err != nil {
			return err
		}
		rep.Figures = append(rep.Figures, out)
		for _, format := range append(append([]string(nil), formats...), "csv") {
			rep.Files = append(rep.Files, out.Files[format])
		}
	}
	return nil
}

// writeSummaries writes the calibration's files (runs of
// sweep.bound_multiplier), summary.txt, summary.csv, runs.csv and, where a
// group has a reference without coopcc, kinds.csv; adds
// them to rep, sets rep.Knees, and returns the text of summary.txt.
func (rep *Report) writeSummaries() (string, error) {
	txt, points, err := rep.summaryText()
	if err != nil {
		return "", err
	}
	calFiles, err := writeCalibration(rep.OutDir, points, rep.Knees)
	if err != nil {
		return "", err
	}
	rep.Files = append(rep.Files, calFiles...)
	if err := os.WriteFile(filepath.Join(rep.OutDir, "summary.txt"), []byte(txt), 0o644); err != nil {
		return "", fmt.Errorf("write summary.txt: %w", err)
	}
	if err := writeCSV(filepath.Join(rep.OutDir, "summary.csv"), summaryHeader, summaryRows(rep.Groups)); err != nil {
		return "", err
	}
	if err := writeCSV(filepath.Join(rep.OutDir, "runs.csv"), runsHeader, runsRows(rep.Runs)); err != nil {
		return "", err
	}
	rep.Files = append(rep.Files, "summary.txt", "summary.csv", "runs.csv")
	if len(rep.Kinds) > 0 {
		if err := writeCSV(filepath.Join(rep.OutDir, "kinds.csv"), kindHeader, kindRows(rep.Kinds)); err != nil {
			return "", err
		}
		rep.Files = append(rep.Files, "kinds.csv")
	}
	return txt, nil
}

// summaryText is the text of summary.txt: the window note, the summary
// table, the kinds against doing nothing and the calibration's knees when
// there are any. It sets rep.Kinds and rep.Knees and returns the
// calibration's points beside the text.
func (rep *Report) summaryText() (string, []analysis.CalibrationPoint, error) {
	var txt strings.Builder
	if note := rep.WindowNote(); note != "" {
		txt.WriteString(note + "\n")
	}
	if err := WriteSummaryTable(&txt, rep.Groups); err != nil {
		return "", nil, err
	}
	rep.Kinds = analysis.KindRatios(rep.Groups)
	if err := WriteKindTable(&txt, rep.Kinds); err != nil {
		return "", nil, err
	}
	points, knees := analysis.Calibration(rep.Runs)
	rep.Knees = knees
	if len(knees) > 0 {
		txt.WriteString("\n")
		if err := WriteKneeTable(&txt, knees); err != nil {
			return "", nil, err
		}
	}
	return txt.String(), points, nil
}

// writeRunTable writes one table of the runs as text, <name>.txt (drawn by
// table), and as CSV, <name>.csv (header and rows), and adds both files to
// rep. It writes nothing when there are no rows.
func (rep *Report) writeRunTable(name string, runs []analysis.Run, table func(io.Writer, []analysis.Run) error, header []string, rows [][]string) error {
	if len(rows) == 0 {
		return nil
	}
	var txt strings.Builder
	if err := table(&txt, runs); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(rep.OutDir, name+".txt"), []byte(txt.String()), 0o644); err != nil {
		return fmt.Errorf("write %s.txt: %w", name, err)
	}
	if err := writeCSV(filepath.Join(rep.OutDir, name+".csv"), header, rows); err != nil {
		return err
	}
	rep.Files = append(rep.Files, name+".txt", name+".csv")
	return nil
}

// normalizeFormats checks the requested figure formats and returns them
// without duplicates (the default when none is given).
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
