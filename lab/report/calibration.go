package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/coopcc/coopcc/lab/analysis"
)

var calibrationHeader = []string{"variant", "delay_ms", "group", "bound_multiplier", "runs", "rtt_p50_ms", "goodput_mbps", "knee"}

// calibrationRows is calibration.csv: one row per group and multiplier,
// the group's knee on every row of it.
func calibrationRows(points []analysis.CalibrationPoint, knees []analysis.CalibrationKnee) [][]string {
	knee := map[string]string{}
	for _, k := range knees {
		knee[calKey(k.Variant, k.DelayMS, k.Group)] = kneeText(k)
	}
	rows := make([][]string, 0, len(points))
	for _, p := range points {
		rows = append(rows, []string{p.Variant, fmtNum(p.DelayMS, 1), p.Group, strconv.Itoa(p.Multiplier), strconv.Itoa(p.Runs),
			fmtNum(p.RTTms, 2), fmtNum(p.GoodputMbps, 2), knee[calKey(p.Variant, p.DelayMS, p.Group)]})
	}
	return rows
}

func calKey(variant string, delay float64, group string) string {
	return fmt.Sprintf("%s|%g|%s", variant, delay, group)
}

// kneeText is the knee multiplier, or "none: why".
func kneeText(k analysis.CalibrationKnee) string {
	if k.Err != "" {
		return "none: " + k.Err
	}
	return strconv.Itoa(k.Multiplier)
}

// WriteKneeTable prints papers/003's "Buffer limited" point of every
// terminal group of a calibration sweep: the knee multiplier and the two
// lines of the fit (RTT in ms per multiple of the base cwnd). Nothing when
// there are no knees.
func WriteKneeTable(w io.Writer, knees []analysis.CalibrationKnee) error {
	if len(knees) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CALIBRATION (papers/003): VARIANT\tDELAY_MS\tGROUP\tKNEE (× base cwnd)\tSLOPE BELOW ms/×\tSLOPE ABOVE ms/×\tSAMPLES")
	for _, k := range knees {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", orDash(k.Variant), fmtNum(k.DelayMS, 1), k.Group, kneeText(k),
			fmtNum(k.Fit.Slope1*1e3, 3), fmtNum(k.Fit.Slope2*1e3, 3), k.Samples)
	}
	return tw.Flush()
}

// writeCalibration writes calibration.txt (the knees and the points) and
// calibration.csv when the runs hold a calibration sweep; it returns the
// files written.
func writeCalibration(outDir string, points []analysis.CalibrationPoint, knees []analysis.CalibrationKnee) ([]string, error) {
	if len(points) == 0 {
		return nil, nil
	}
	f, err := os.Create(filepath.Join(outDir, "calibration.txt"))
	if err != nil {
		return nil, fmt.Errorf("write calibration.txt: %w", err)
	}
	defer f.Close()
	if err := WriteKneeTable(f, knees); err != nil {
		return nil, fmt.Errorf("write calibration.txt: %w", err)
	}
	tw := tabwriter.NewWriter(f, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nVARIANT\tDELAY_MS\tGROUP\tMULTIPLIER\tRUNS\tRTT_P50_MS\tGOODPUT_MBPS")
	for _, p := range points {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", orDash(p.Variant), fmtNum(p.DelayMS, 1), p.Group, p.Multiplier, p.Runs,
			fmtNum(p.RTTms, 2), fmtNum(p.GoodputMbps, 2))
	}
	if err := tw.Flush(); err != nil {
		return nil, fmt.Errorf("write calibration.txt: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write calibration.txt: %w", err)
	}
	if err := writeCSV(filepath.Join(outDir, "calibration.csv"), calibrationHeader, calibrationRows(points, knees)); err != nil {
		return nil, err
	}
	return []string{"calibration.txt", "calibration.csv"}, nil
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
