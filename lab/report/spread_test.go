package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/lab/analysis"
)

// repGroups: cubic and coop at N = 1 and 2, three repetitions each with
// aggregates mean ± 1 (19, 20, 21 for cubic N=2: CI95 half-width
// t(0.975, 2)·1/√3 = 2.484), one of coop N=2 invalid.
func repGroups() ([]analysis.RunSummary, []analysis.GroupSummary) {
	var sums []analysis.RunSummary
	for _, mode := range []string{"cubic", "coop"} {
		for n := 1; n <= 2; n++ {
			for rep := 1; rep <= 3; rep++ {
				key := "mode=" + mode + ",n=" + string(rune('0'+n)) + ",delay=4ms"
				agg := 20 + float64(rep-2)
				sums = append(sums, analysis.RunSummary{ID: key + ",rep=" + string(rune('0'+rep)), Group: key, Mode: mode, N: n,
					DelayMS: 4, Rep: rep, Valid: !(mode == "coop" && n == 2 && rep == 3), AggregateMbps: agg,
					Jain: 0.9 + 0.01*float64(rep), WeightedFairness: math.NaN(), ManagedMbps: math.NaN(), UnmanagedMbps: math.NaN(),
					RTT: analysis.Percentiles{P50: 10, P95: 40 + float64(rep), P99: 50, Count: 100}})
			}
		}
	}
	return sums, analysis.Group(sums)
}

// Every table that aggregates repetitions shows mean, 95 % CI, min–max and
// how many repetitions stand behind the numbers.
func TestSummaryShowsSpreadAndReps(t *testing.T) {
	_, groups := repGroups()
	var b bytes.Buffer
	if err := WriteSummaryTable(&b, groups); err != nil {
		t.Fatal(err)
	}
	txt := b.String()
	if !strings.Contains(strings.SplitN(txt, "\n", 2)[0], "REPS") {
		t.Errorf("no REPS column:\n%s", txt)
	}
	for _, w := range []string{"20.00 ±2.48 (19.00–21.00)", "0.920 ±0.025 (0.910–0.930)", "19.50 ±6.35 (19.00–20.00)"} {
		if !strings.Contains(txt, w) {
			t.Errorf("summary table lacks %q:\n%s", w, txt)
		}
	}
	rows := summaryRows(groups)
	col := map[string]int{}
	for i, h := range summaryHeader {
		col[h] = i
	}
	for _, h := range []string{"reps", "aggregate_mbps_mean", "aggregate_mbps_ci95", "aggregate_mbps_min", "aggregate_mbps_max", "aggregate_mbps_n", "p95_rtt_ms_ci95"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("summary.csv has no column %s: %v", h, summaryHeader)
		}
	}
	for _, r := range rows {
		if r[0] == "mode=cubic,n=2,delay=4ms" && (r[col["reps"]] != "3" || r[col["aggregate_mbps_ci95"]] != "2.48417" || r[col["aggregate_mbps_min"]] != "19") {
			t.Errorf("cubic N=2 row: %v", r)
		}
		if r[0] == "mode=coop,n=2,delay=4ms" && r[col["reps"]] != "2" {
			t.Errorf("coop N=2 has 2 valid repetitions: %v", r)
		}
	}
}

// Every figure that aggregates repetitions has the spread and reps in its
// data and says so in its caption.
func TestFiguresShowSpreadAndReps(t *testing.T) {
	sums, groups := repGroups()
	m := &model{sums: sums, groups: groups, series: map[string]int{}}
	vsN, err := m.vsN("throughput_vs_n", "t", "y", func(g analysis.GroupSummary) analysis.Stat { return g.AggregateMbps })
	if err != nil {
		t.Fatal(err)
	}
	byMode, err := m.byMode()
	if err != nil {
		t.Fatal(err)
	}
	rtt, err := m.throughputVsRTT()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*figure{vsN, byMode, rtt} {
		h := strings.Join(f.Header, ",")
		if !strings.Contains(h, "ci95") || !strings.Contains(h, "min") || !strings.Contains(h, "reps") {
			t.Errorf("%s: header %s lacks ci95/min/reps", f.Name, h)
		}
		if !strings.Contains(f.Caption, "95 % confidence interval") || !strings.Contains(f.Caption, "2–3 valid repetitions per point") {
			t.Errorf("%s: caption %q", f.Name, f.Caption)
		}
		found := false
		for _, r := range f.Rows {
			if strings.Contains(strings.Join(r, ","), "2.48417") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no row with the CI half-width 2.48417: %v", f.Name, f.Rows)
		}
	}
	for _, f := range []*figure{vsN, byMode, rtt} { // the spread bars render
		if _, err := f.render(t.TempDir(), []string{"png", "svg"}); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
}
