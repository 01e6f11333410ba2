package lab

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/schema"
)

// The per-run progress line carries the numbers the report will show
// (goodput in the traffic window and where it was measured, Jain, p95 RTT),
// not iperf3's per-flow lifetime totals.
func TestProgressLineUsesTheReportsNumbers(t *testing.T) {
	dir := filepath.Join("results", "testdata", "results", "runs", "mode=cubic,n=2,delay=4ms,rep=1")
	got := progressLine(dir, &schema.Run{Valid: true})
	for _, want := range []string{"aggregate ", "Mbit/s (goodput from window)", "Jain ", "p95 RTT "} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "iperf3") {
		t.Errorf("progress line %q still quotes iperf3's totals", got)
	}
	// A run the report would refuse says so, with the report's reason.
	got = progressLine(filepath.Join(t.TempDir(), "none"), &schema.Run{Valid: false, InvalidReason: "emulator overloaded"})
	if !strings.Contains(got, "INVALID (") {
		t.Errorf("run without a record: %q", got)
	}
}
