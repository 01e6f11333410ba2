package report

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
)

func loadFixture(t *testing.T) *results.Results {
	t.Helper()
	res, err := results.Load("../results/testdata/results")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWriteFixture(t *testing.T) {
	out := t.TempDir()
	rep, err := Write(loadFixture(t), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"throughput_vs_n", "jain_vs_n", "throughput_vs_p95rtt", "loss_events",
		"traces_mode_cubic_n_2_delay_4ms_rep_1", "traces_mode_coop_n_2_delay_4ms_rep_1",
		"vehicle_mode_cubic_n_2_delay_4ms_rep_1_sta2", "airtime"}
	got := map[string]bool{}
	for _, f := range rep.Figures {
		got[f.Name] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("figure %s missing; have %v", w, got)
		}
	}
	if got["coexistence"] {
		t.Errorf("coexistence figure drawn though no run mixes managed and unmanaged terminals")
	}
	for _, f := range rep.Figures {
		b, err := os.ReadFile(filepath.Join(out, f.Name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s.png does not decode: %v", f.Name, err)
		} else if r := img.Bounds(); r.Dx() < 300 || r.Dy() < 200 {
			t.Errorf("%s.png is %dx%d, too small to read", f.Name, r.Dx(), r.Dy())
		}
		svg, err := os.ReadFile(filepath.Join(out, f.Name+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg: %v, no <svg>", f.Name, err)
		}
		fc, err := os.Open(filepath.Join(out, f.Name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(fc).ReadAll()
		fc.Close()
		if err != nil || len(recs) < 2 {
			t.Errorf("%s.csv: %d records, %v: want a header and data", f.Name, len(recs), err)
		}
	}
	for _, name := range []string{"summary.txt", "summary.csv", "runs.csv", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	html, err := os.ReadFile(rep.HTMLPath)
	if err != nil {
		t.Fatal(err)
	}
	h := string(html)
	for _, w := range []string{`<table id="summary">`, "<td class=\"l\">cubic</td><td>2</td><td>4</td><td>22.37</td><td>0.896</td>",
		"INVALID</span> emulator overloaded", "1 run(s) are INVALID", "data:image/png;base64,", "0123456789ab", "scenario.toml as run",
		"<td class=\"l\">penalizing</td><td>1</td><td>1</td><td>46.0</td><td>0.80</td>"} {
		if !strings.Contains(h, w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	if strings.Contains(h, `src="traces`) || strings.Contains(h, `<img src="throughput`) {
		t.Errorf("report.html refers to image files instead of embedding them")
	}

	// The invalid repetition is left out: coop N=2 has one valid run.
	for _, g := range rep.Groups {
		if g.Key == "mode=coop,n=2,delay=4ms" && (g.ValidRuns != 1 || len(g.Runs) != 2) {
			t.Errorf("coop N=2: %d of %d valid, want 1 of 2", g.ValidRuns, len(g.Runs))
		}
	}
}

func TestSummaryTable(t *testing.T) {
	rep, err := Write(loadFixture(t), t.TempDir(), Options{Formats: []string{"svg"}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteSummaryTable(&b, rep.Groups); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "MODE") {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[4]); f[0] != "coop" || f[1] != "2" || !slices.Contains(f, "!") {
		t.Errorf("coop N=2 line %q: want flagged with ! for its invalid repetition", lines[4])
	}
	// The fixture's coop agents name their mode (cooperative throughout):
	// COMPETING 0.00 for coop, – for cubic.
	if !strings.Contains(lines[0], "COMPETING") || strings.Fields(lines[4])[len(strings.Fields(lines[4]))-1] != "0.00" {
		t.Errorf("table without the coop rows' COMPETING 0:\n%s", b.String())
	}
	if f := strings.Fields(lines[2]); f[0] != "cubic" || f[3] != "22.37" || f[4] != "0.896" || f[7] != "1" {
		t.Errorf("cubic N=2 line %q: want aggregate 22.37 (window goodput), Jain 0.896, 1 timeout", lines[2])
	}
	// SVG only: the page inlines SVG.
	for _, f := range rep.Figures {
		if f.PNG != nil || f.SVG == nil {
			t.Errorf("%s: PNG %v SVG %v with --format svg", f.Name, f.PNG != nil, f.SVG != nil)
		}
	}
	html, _ := os.ReadFile(rep.HTMLPath)
	if !bytes.Contains(html, []byte("<svg")) {
		t.Errorf("svg-only report does not inline SVG")
	}
}

// A tiny run: one terminal, only run.json and an iperf3 report.
func TestWriteTinyRun(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "runs", "mode=cubic,n=1,delay=4ms,rep=1")
	must := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(run, "run.json"), `{"mode":"cubic","n":1,"delay_ms":4,"rep":1,"valid":true,"stations":[{"name":"sta1"}]}`)
	must(filepath.Join(run, "iperf3", "sta1.json"), `{"start":{},"intervals":[{"sum":{"start":0,"end":1,"bytes":1250000}}],"end":{"sum_received":{"seconds":1,"bytes":1250000}}}`)
	res, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Write(res, filepath.Join(dir, "report"), Options{Formats: []string{"png"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Figures) != 1 || rep.Figures[0].Name != "throughput_by_mode" {
		t.Errorf("figures %v, want only throughput_by_mode", rep.Figures)
	}
	html, _ := os.ReadFile(rep.HTMLPath)
	if !bytes.Contains(html, []byte("<td>10.00</td>")) || !bytes.Contains(html, []byte("meta.json missing")) {
		t.Errorf("tiny report lacks the 10 Mbit/s aggregate or the missing-metadata note")
	}
}

func TestBadFormat(t *testing.T) {
	_, err := Write(loadFixture(t), t.TempDir(), Options{Formats: []string{"pdf"}})
	if err == nil || !strings.Contains(err.Error(), `unknown figure format "pdf"`) {
		t.Errorf("error %v", err)
	}
}

// copyTree copies the fixture into a temporary results directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestCoexistenceFigure(t *testing.T) {
	dir := copyTree(t, "../results/testdata/results")
	run := filepath.Join(dir, "runs", "mode=coop,n=2,delay=4ms,rep=1", "run.json")
	js := `{"mode":"coop","n":2,"delay_ms":4,"rep":1,"valid":true,
	        "stations":[{"name":"sta1","managed":true},{"name":"sta2","managed":false}]}`
	if err := os.WriteFile(run, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := Write(res, out, Options{Formats: []string{"png"}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Figures {
		found = found || f.Name == "coexistence"
	}
	if !found {
		t.Fatalf("no coexistence figure for a run with managed and unmanaged terminals")
	}
	b, err := os.ReadFile(filepath.Join(out, "coexistence.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// coop N=2 rep 1: sta1 (managed) and sta2 (unmanaged) each (10+5·11)/6 · 0.99 = 10.725 Mbit/s;
	// cubic N=2 is a one-group baseline at the same N and delay.
	// One valid repetition: no confidence interval, min = max = mean, reps 1.
	for _, w := range []string{`"mode=coop,n=2,delay=4ms",coop,2,4,managed,1,10.725,,10.725,10.725,1,21.45,1`,
		`"mode=coop,n=2,delay=4ms",coop,2,4,unmanaged,1,10.725,,10.725,10.725,1,21.45,1`, `"mode=cubic,n=2,delay=4ms",cubic,2,4,unmanaged,2,`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("coexistence.csv lacks %q:\n%s", w, b)
		}
	}
}

// The page opens with the headline, the summary table and the
// throughput-vs-p95-RTT figure, and keeps the metadata for the end.
func TestHTMLHeadlineFirst(t *testing.T) {
	rep, err := Write(loadFixture(t), t.TempDir(), Options{Formats: []string{"svg"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rep.HTMLPath)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	order := []string{`<table id="summary">`, `<figure id="throughput_vs_p95rtt" class="headline">`,
		`<figure id="throughput_vs_n">`, `<table id="runs">`, `<h2 id="metadata">`, "scenario.toml as run"}
	last, prev := -1, ""
	for _, w := range order {
		i := strings.Index(h, w)
		if i < 0 {
			t.Fatalf("report.html lacks %q", w)
		}
		if i < last {
			t.Errorf("report.html: %q comes before %q; want the order %q", w, prev, order)
		}
		last, prev = i, w
	}
	if n := strings.Count(h, `id="throughput_vs_p95rtt"`); n != 1 {
		t.Errorf("the headline figure appears %d times, want once", n)
	}
	if i, j := strings.Index(h, `<h2 id="metadata">`), strings.Index(h, "<h2"); j < 0 || i == j {
		t.Errorf("the metadata section is the first section")
	}
}

// runs.csv: every row as long as the header; the emulator, cwnd and mode
// columns filled from the fixture (coop N=1: sta1 sent 880 frames, the AP
// 440; its policy cooperative throughout).
func TestRunsCSVMediumColumns(t *testing.T) {
	out := t.TempDir()
	if _, err := Write(loadFixture(t), out, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	found := false
	for _, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			t.Fatalf("row of %d fields, header of %d: %q", len(rec), len(recs[0]), rec)
		}
		if rec[col["run"]] != "mode=coop,n=1,delay=4ms,rep=1" {
			continue
		}
		switch rec[col["station"]] {
		case "*":
			found = true
			if got := rec[col["data_frames_per_ap_frame"]]; got != "2" {
				t.Errorf("data_frames_per_ap_frame = %q, want 2", got)
			}
			if rec[col["ap_tx_frames"]] != "440" || rec[col["tx_frames"]] != "880" {
				t.Errorf("ap_tx_frames %q tx_frames %q, want 440 and 880", rec[col["ap_tx_frames"]], rec[col["tx_frames"]])
			}
		case "sta1":
			if rec[col["cwnd_max"]] == "" || rec[col["ca_open_share"]] == "" {
				t.Errorf("sta1: no cwnd or CA-state statistics: %q", rec)
			}
			// Its one event names the cooperative mode: no time competing.
			if rec[col["competing_share"]] != "0" || rec[col["first_competing_s"]] != "" {
				t.Errorf("sta1: competing_share %q first_competing_s %q, want 0 and blank", rec[col["competing_share"]], rec[col["first_competing_s"]])
			}
		}
	}
	if !found {
		t.Error("no run row for mode=coop,n=1,delay=4ms,rep=1")
	}
}

// The table of kinds against doing nothing: a heading, one row per kind
// with both means and the ratio, the point's parameters; nothing at all
// without a ratio. kinds.csv's rows carry the same numbers.
func TestWriteKindTable(t *testing.T) {
	var empty strings.Builder
	if err := WriteKindTable(&empty, nil); err != nil || empty.Len() != 0 {
		t.Fatalf("no ratios: %q, %v; want nothing", empty.String(), err)
	}
	ratios := []analysis.KindRatio{{Key: "mode=coop,n=4,delay=4ms,wired_rate=1Gbps", Mode: "coop", Kind: "phone-ac",
		Mbps: analysis.StatOf([]float64{22, 23}), Nothing: analysis.StatOf([]float64{30, 36}), Ratio: 22.5 / 33}}
	var b strings.Builder
	if err := WriteKindTable(&b, ratios); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"against doing nothing", "KIND", "phone-ac", "22.50 ±", "33.00 ±", "0.68", "wired_rate=1Gbps"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("kind table lacks %q:\n%s", want, b.String())
		}
	}
	rows := kindRows(ratios)
	if len(rows) != 1 || len(rows[0]) != len(kindHeader) || rows[0][2] != "phone-ac" || !strings.HasPrefix(rows[0][7], "0.68") {
		t.Errorf("kinds.csv rows %v (header %v)", rows, kindHeader)
	}
}
