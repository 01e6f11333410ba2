package analysis

import (
	"math"
	"strconv"
	"testing"
)

// A calibration sweep of two terminal groups: "fast" queues until 8× and
// then overflows (RTT flat), "slow" until 14×. One run at 16× is invalid
// and carries an RTT that would move the knee; runs without the parameter
// are not calibration runs.
func TestCalibrationFindsEachGroupsKnee(t *testing.T) {
	rtt := func(k, knee float64) float64 { return 5 + 3*math.Min(k, knee) } // ms
	var runs []RunSummary
	for _, k := range []int{2, 4, 6, 8, 10, 12, 14, 16, 24, 32} {
		for rep := 1; rep <= 2; rep++ {
			id := "mode=static,n=2,delay=4ms,wired_rate=100Mbps,bound_multiplier=" + strconv.Itoa(k) + ",rep=" + strconv.Itoa(rep)
			r := RunSummary{ID: id, Group: id[:len(id)-len(",rep=1")], Valid: !(k == 16 && rep == 2), DelayMS: 4,
				Params: map[string]string{"bound_multiplier": strconv.Itoa(k)}}
			r.Stations = []StationSummary{
				{Station: "sta1", Group: "fast", GoodputMbps: 40, RTT: Percentiles{P50: rtt(float64(k), 8), Count: 10}},
				{Station: "sta2", Group: "slow", GoodputMbps: 10, RTT: Percentiles{P50: rtt(float64(k), 14), Count: 10}},
			}
			if !r.Valid {
				r.Stations[0].RTT.P50 = 900
			}
			runs = append(runs, r)
		}
	}
	runs = append(runs, RunSummary{ID: "mode=cubic,n=2,delay=4ms,rep=1", Valid: true,
		Stations: []StationSummary{{Station: "sta1", Group: "fast", GoodputMbps: 90, RTT: Percentiles{P50: 500, Count: 1}}}})
	points, knees := Calibration(runs)
	if len(points) != 20 {
		t.Fatalf("%d points, want 10 multipliers × 2 groups", len(points))
	}
	if p := points[7]; p.Group != "fast" || p.Multiplier != 16 || p.Runs != 1 || p.RTTms != 29 || p.Variant != "wired_rate=100Mbps" {
		t.Errorf("point %+v: want fast at 16× from its one valid run, RTT 29 ms", p)
	}
	want := map[string]int{"fast": 8, "slow": 14}
	if len(knees) != 2 {
		t.Fatalf("knees %+v", knees)
	}
	for _, k := range knees {
		if k.Multiplier != want[k.Group] || k.Err != "" || k.Samples != 19 {
			t.Errorf("%s: knee %d (%s, %d samples), want %d from 19", k.Group, k.Multiplier, k.Err, k.Samples, want[k.Group])
		}
	}
	// Two multipliers are too few for a two-segment fit: the knee says so.
	_, knees = Calibration(runs[:4])
	if len(knees) != 2 || knees[0].Err == "" || knees[0].Multiplier != 0 {
		t.Errorf("two multipliers: %+v, want an error and no knee", knees)
	}
}
