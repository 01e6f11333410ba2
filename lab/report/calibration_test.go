package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/policy"
)

func TestWriteCalibration(t *testing.T) {
	dir := t.TempDir()
	if files, err := writeCalibration(dir, nil, nil); err != nil || files != nil {
		t.Fatalf("no sweep: files %v err %v, want nothing written", files, err)
	}
	points := []analysis.CalibrationPoint{
		{Variant: "wired_rate=100Mbps", DelayMS: 4, Group: "phone", Multiplier: 2, Runs: 3, RTTms: 9.5, GoodputMbps: 20},
		{Variant: "wired_rate=100Mbps", DelayMS: 4, Group: "tablet", Multiplier: 2, Runs: 3, RTTms: 30, GoodputMbps: 5},
	}
	knees := []analysis.CalibrationKnee{
		{Variant: "wired_rate=100Mbps", DelayMS: 4, Group: "phone", Multiplier: 8, Fit: policy.Fit{Slope1: 0.003}, Samples: 30},
		{Variant: "wired_rate=100Mbps", DelayMS: 4, Group: "tablet", Err: "too few", Samples: 6},
	}
	files, err := writeCalibration(dir, points, knees)
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v err %v", files, err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "calibration.csv"))
	for _, want := range []string{"wired_rate=100Mbps,4.0,phone,2,3,9.50,20.00,8", "tablet,2,3,30.00,5.00,none: too few"} {
		if !strings.Contains(string(csv), want) {
			t.Errorf("calibration.csv lacks %q:\n%s", want, csv)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(dir, "calibration.txt"))
	if !strings.Contains(string(txt), "phone") || !strings.Contains(string(txt), "3.000") {
		t.Errorf("calibration.txt lacks the phone's knee and slope:\n%s", txt)
	}
}
