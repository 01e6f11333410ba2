package report

import (
	"strings"
	"testing"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
)

func TestRateTable(t *testing.T) {
	rates, err := results.ParseRatesCSV(strings.NewReader("station,rate_control,rate_mbps,attempts,successes,frames,airtime_s\n" +
		"sta1,arf,48,10,5,5,0.001\nsta1,arf,54,30,15,15,0.004\nap,constant,54,8,8,8,0.001\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := analysis.Run{Emu: &analysis.Emu{Rates: rates}}
	run.Info.ID = "mode=cubic,n=1"
	var b strings.Builder
	if err := WriteRateTable(&b, []analysis.Run{run}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// sta1: 20 frames, mean (5·48 + 15·54)/20 = 52.5, 20 of 40 attempts acked.
	if !strings.Contains(out, "sta1  arf           52.5") || !strings.Contains(out, "54:75 48:25") || !strings.Contains(out, "ap    constant      54.0") {
		t.Fatalf("table:\n%s", out)
	}
	if rows := rateRows([]analysis.Run{run}); len(rows) != 3 || rows[0][0] != "mode=cubic,n=1" {
		t.Fatalf("rows %v", rows)
	}
}
