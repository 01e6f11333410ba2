package report

import (
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/analysis"
)

// followRuns are two repetitions of one point where sta2 joins at 10 s:
// sta1's bounds follow after 2 s in the first and 4 s in the second, sta2's
// at once; and a kernel-mode run without agents.
func followRuns() []analysis.Run {
	at := func(s float64) time.Time { return time.UnixMicro(int64((1000 + s) * 1e6)) }
	mk := func(rep string, lag float64) analysis.Run {
		r := analysis.Run{T0: 1000, Bounds: map[string][]analysis.BoundEvent{
			"sta1": {{T: at(1), N: 1}, {T: at(10 + lag), N: 2}},
			"sta2": {{T: at(10.2), N: 2}},
		}}
		r.Info.ID = "mode=hirai2013,n=2,rep=" + rep
		r.Info.Mode, r.Info.N = "hirai2013", 2
		r.Info.Params = map[string]string{"n": "2"}
		r.Info.LengthS = 30
		r.Info.Stations = []analysis.Station{{Name: "sta1", Agent: true, StopS: 30}, {Name: "sta2", Agent: true, StartS: 10, StopS: 30}}
		return r
	}
	kernel := mk("1", 0)
	kernel.Info.ID, kernel.Info.Mode, kernel.Bounds = "mode=cubic,n=2,rep=1", "cubic", nil
	return []analysis.Run{mk("1", 2), mk("2", 4), kernel}
}

func TestFollowTable(t *testing.T) {
	runs := followRuns()
	rows := followRows(runs)
	if len(rows) != 2 || rows[0][0] != "mode=hirai2013,n=2,rep=1" || rows[0][1] != "10.000" || rows[0][5] != "2" || rows[0][7] != "2.000" || rows[1][7] != "4.000" {
		t.Fatalf("rows %v", rows)
	}
	var b strings.Builder
	if err := WriteFollowTable(&b, runs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// One group, 2 changes, 4 of 4 agent-changes followed, lags 0.2, 0.2, 2, 4.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "hirai2013") || !strings.Contains(lines[1], " 2 ") ||
		!strings.Contains(lines[1], "4/4") || !strings.HasSuffix(lines[1], "4.0") || strings.Contains(out, "cubic") {
		t.Fatalf("table:\n%s", out)
	}
}
