package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"sort"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
)

type htmlKV struct{ Key, Value string }

type htmlFigure struct {
	Figure
	Img template.URL  // PNG data URI
	SVG template.HTML // inline SVG when no PNG
}

type htmlGroup struct {
	analysis.GroupSummary
	Class                                          string
	Aggregate, Jain, WFair, P95, Retrans, Timeouts string
	Loss, Valid                                    string
}

type htmlRun struct {
	analysis.RunSummary
	Aggregate, Jain, WFair, P95, APDrops string
}

type htmlLoss struct {
	Class, Count, Rebuilt, SRTT, Rebuild, Deficit, Rel string
}

// htmlPage is what the report template shows, in page order: the headline
// (summary table and Headline figure), warnings, the loss events, the other
// figures, the runs, and at the end the metadata and the scenario file.
type htmlPage struct {
	Loss       []htmlLoss
	Title      string
	Dir        string
	Meta       []htmlKV
	Warnings   []string
	Groups     []htmlGroup
	Runs       []htmlRun
	Invalid    int
	WindowNote string       // Report.WindowNote
	Headline   *htmlFigure  // the throughput-vs-p95-RTT figure, shown under the summary table
	Figures    []htmlFigure // every other figure
	Scenario   string
	SummaryTxt string
}

// headlineFigure is the figure shown with the summary table at the top of
// the page (as Pantheon's reports open with throughput against delay).
const headlineFigure = "throughput_vs_p95rtt"

func metaKVs(meta map[string]any) []htmlKV {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]htmlKV, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := meta[k].(type) {
		case string:
			v = x
		case []any:
			if len(x) > 12 { // e.g. the ids of a long sweep: the runs table lists them all
				b, _ := json.Marshal(x[:12])
				v = fmt.Sprintf("%s … (%d in all)", b, len(x))
				break
			}
			b, _ := json.Marshal(x)
			v = string(b)
		default:
			b, _ := json.MarshalIndent(x, "", "  ")
			v = string(b)
		}
		out = append(out, htmlKV{k, v})
	}
	return out
}

func writeHTML(path string, res *results.Results, rep *Report, summaryTxt string) error {
	page := htmlPage{Title: "coopcc lab report", Dir: res.Dir, Meta: metaKVs(res.Meta), Warnings: rep.Warnings,
		Scenario: res.Scenario, SummaryTxt: summaryTxt, WindowNote: rep.WindowNote()}
	if name, ok := res.Meta["scenario"].(string); ok && name != "" {
		page.Title += ": " + name
	}
	for _, g := range rep.Groups {
		r := g.ValidRuns
		hg := htmlGroup{GroupSummary: g, Aggregate: fmtStat(g.AggregateMbps, 2, r), Jain: fmtStat(g.Jain, 3, r),
			WFair: fmtStat(g.WeightedFairness, 3, r), P95: fmtStat(g.P95RTTms, 1, r), Retrans: fmtStat(g.Retrans, 0, r),
			Timeouts: fmtStat(g.Timeouts, 0, r), Loss: fmtNum(g.Penalizing.Mean, 1) + " / " + fmtNum(g.Moderate.Mean, 1),
			Valid: fmt.Sprintf("%d/%d", g.ValidRuns, len(g.Runs))}
		switch {
		case g.ValidRuns == 0:
			hg.Class = "bad"
		case g.ValidRuns < len(g.Runs):
			hg.Class = "warn"
		}
		page.Groups = append(page.Groups, hg)
	}
	for _, r := range rep.Runs {
		if !r.Valid {
			page.Invalid++
		}
		page.Runs = append(page.Runs, htmlRun{RunSummary: r, Aggregate: fmtNum(r.AggregateMbps, 2), Jain: fmtNum(r.Jain, 3),
			WFair: fmtNum(r.WeightedFairness, 3), P95: fmtNum(r.RTT.P95, 1), APDrops: fmtNum(r.APDrops, 0)})
	}
	var events []analysis.LossEvent
	for _, r := range rep.Runs {
		if r.Valid {
			for _, st := range r.Stations {
				events = append(events, st.LossEvents...)
			}
		}
	}
	for _, c := range analysis.SummarizeLossEvents(events) {
		page.Loss = append(page.Loss, htmlLoss{Class: c.Class, Count: fmt.Sprint(c.Count), Rebuilt: fmt.Sprint(c.Rebuilt),
			SRTT: fmtNum(c.MedianSRTTms, 1), Rebuild: fmtNum(c.MedianRebuildS, 2), Deficit: fmtNum(c.MedianDeficitMbps, 2),
			Rel: fmtNum(100*c.MedianRelDeficit, 0)})
	}
	for _, f := range rep.Figures {
		hf := embedFigure(f)
		if f.Name == headlineFigure && page.Headline == nil {
			page.Headline = &hf
			continue
		}
		page.Figures = append(page.Figures, hf)
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	return nil
}

// embedFigure makes a figure part of the page: its PNG as a data URI, else
// its SVG inline.
func embedFigure(f Figure) htmlFigure {
	hf := htmlFigure{Figure: f}
	if f.PNG != nil {
		hf.Img = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))
	} else if f.SVG != nil {
		hf.SVG = template.HTML(stripXMLHeader(f.SVG))
	}
	return hf
}

// stripXMLHeader removes an <?xml …?> declaration so the SVG can be inlined.
func stripXMLHeader(b []byte) []byte {
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		return b[i:]
	}
	return b
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; vertical-align: top; }
th { background: #f2f2f2; } td.l, th.l { text-align: left; }
tr.warn td { background: #fff4d6; } tr.bad td, tr.invalid td { background: #fde0e0; }
.badge { display: inline-block; padding: 0 .5em; border-radius: .3em; font-weight: bold; font-size: .85em; }
.ok { background: #d9f2d9; color: #145214; } .no { background: #c62828; color: #fff; }
.banner { background: #fde0e0; border: 2px solid #c62828; padding: .6em 1em; margin: 1em 0; }
figure { margin: 1.5em 0; } figure.headline img, figure.headline svg { max-width: 720px; }
.fit { max-width: 100%; overflow-x: auto; } #summary { width: 100%; font-size: .85em; } #summary td.key { font-size: .9em; color: #555; }
p.note { font-size: .9em; color: #444; } figure img, figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #444; } pre { background: #f7f7f7; padding: .8em; overflow-x: auto; font-size: .85em; }
.meta td { text-align: left; } .meta td pre { margin: 0; padding: 0; background: none; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Invalid}}<div class="banner"><strong>{{.Invalid}} run(s) are INVALID</strong> and are left out of every mean and figure of group statistics; they are marked in red below with the reason.</div>{{end}}

<h2 id="headline">Summary</h2>
{{if .WindowNote}}<p><strong>{{.WindowNote}}.</strong></p>{{end}}
<div class="fit">
<table id="summary">
<tr><th class="l">mode</th><th>N</th><th>wired delay (ms)</th><th>aggregate goodput (Mbit/s)</th><th>Jain fairness</th><th>weighted fairness</th><th>p95 RTT (ms)</th><th>retrans&shy;missions</th><th>timeouts</th><th>loss events pen./mod.</th><th>reps</th><th>valid runs</th><th class="l">group</th></tr>
{{range .Groups}}<tr class="{{.Class}}"><td class="l">{{.Mode}}</td><td>{{.N}}</td><td>{{.DelayMS}}</td><td>{{.Aggregate}}</td><td>{{.Jain}}</td><td>{{.WFair}}</td><td>{{.P95}}</td><td>{{.Retrans}}</td><td>{{.Timeouts}}</td><td>{{.Loss}}</td><td>{{.ValidRuns}}</td><td>{{.Valid}}</td><td class="l key">{{.Key}}</td></tr>
{{end}}</table>
</div>
<p class="note">Values: mean ±half-width of the 95 % confidence interval of the mean (Student t) (min–max) over the valid repetitions; <em>reps</em> is how many stand behind each number ([n=k] where a metric has fewer). Goodput is the bytes the receiver acknowledged inside each station's traffic window; the aggregate is over the union of the stations' windows; RTT is the senders' smoothed RTT; timeouts are entries into CA state Loss. Definitions: <code>docs/analysis.md</code>.
Data: <a href="summary.csv">summary.csv</a>, <a href="runs.csv">runs.csv</a>.</p>
{{with .Headline}}<figure id="{{.Name}}" class="headline">
{{if .Img}}<img src="{{.Img}}" alt="{{.Title}}">{{else if .SVG}}{{.SVG}}{{end}}
<figcaption><strong>{{.Title}}.</strong> {{.Caption}} Files: {{range $k, $v := .Files}}<a href="{{$v}}">{{$k}}</a> {{end}}</figcaption>
</figure>{{end}}
{{if .Warnings}}<h2 id="warnings">Warnings</h2><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}

{{if .Loss}}<h2>Loss events (papers/002)</h2>
<table id="loss">
<tr><th class="l">class</th><th>events</th><th>rebuilt</th><th>median SRTT at loss (ms)</th><th>median time to rebuild cwnd (s)</th><th>median throughput deficit (Mbit/s)</th><th>median deficit (% of before)</th></tr>
{{range .Loss}}<tr><td class="l">{{.Class}}</td><td>{{.Count}}</td><td>{{.Rebuilt}}</td><td>{{.SRTT}}</td><td>{{.Rebuild}}</td><td>{{.Deficit}}</td><td>{{.Rel}}</td></tr>
{{end}}<tr><td class="l"><em>paper, penalizing</em></td><td>2</td><td></td><td>≈ 25</td><td>2.11</td><td>7–10</td><td>40–60</td></tr>
<tr><td class="l"><em>paper, moderate</em></td><td>1</td><td></td><td>≈ 2</td><td>1.57</td><td>small</td><td></td></tr>
</table>
<p>Valid runs only. A collapse is a cwnd drop to ≤ 2 segments or by ≥ 50 % in one sample with loss evidence; penalizing = throughput deficit ≥ 30 % while cwnd is rebuilt [interpretation]; see docs/analysis.md and <a href="loss_events.csv">loss_events.csv</a>.</p>
{{end}}
<h2>Figures</h2>
{{range .Figures}}<figure id="{{.Name}}">
<h3>{{.Title}}</h3>
{{if .Img}}<img src="{{.Img}}" alt="{{.Title}}">{{else if .SVG}}{{.SVG}}{{end}}
<figcaption>{{.Caption}} Files: {{range $k, $v := .Files}}<a href="{{$v}}">{{$k}}</a> {{end}}</figcaption>
</figure>
{{else}}<p>No figure: the results hold no data to draw.</p>{{end}}

<h2>Runs</h2>
<table id="runs">
<tr><th class="l">run</th><th class="l">validity</th><th>aggregate (Mbit/s)</th><th>Jain</th><th>weighted</th><th>p95 RTT (ms)</th><th>retrans.</th><th>timeouts</th><th>loss pen./mod.</th><th>AP drops</th></tr>
{{range .Runs}}<tr class="{{if not .Valid}}invalid{{end}}"><td class="l">{{.ID}}</td><td class="l">{{if .Valid}}<span class="badge ok">valid</span>{{else}}<span class="badge no">INVALID</span> {{.InvalidReason}}{{end}}</td><td>{{.Aggregate}}</td><td>{{.Jain}}</td><td>{{.WFair}}</td><td>{{.P95}}</td><td>{{.Retrans}}</td><td>{{.Timeouts}}</td><td>{{.Penalizing}} / {{.Moderate}}</td><td>{{.APDrops}}</td></tr>
{{end}}</table>

<h2>Summary as text</h2>
<pre>{{.SummaryTxt}}</pre>

<h2 id="metadata">Metadata</h2>
<p>Results directory: <code>{{.Dir}}</code>.</p>
{{if .Meta}}<table class="meta">{{range .Meta}}<tr><th class="l">{{.Key}}</th><td><pre>{{.Value}}</pre></td></tr>{{end}}</table>
{{else}}<p>No meta.json.</p>{{end}}
{{if .Scenario}}<details><summary>scenario.toml as run</summary><pre>{{.Scenario}}</pre></details>{{end}}
</body>
</html>
`))
