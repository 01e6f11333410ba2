package emu

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// TracePoint sets a station's link from time T (seconds since the start) on.
type TracePoint struct {
	T          float64
	RateMbps   float64 // 0 keeps the configured rate
	FER        float64
	Associated bool
}

// MobilityPresets lists the built-in traces, modelled on papers/002 (802.11g,
// AP on a lamppost, auto-rate off at 54 Mbps there; here the rate steps down
// with distance). **[interpretation]** The paper reports throughput, ARQ and
// loss-of-sight times, not rate/FER; the traces are step functions that put
// the reported events at the reported times:
//   - walk: 6 mph along a road past the AP; ARQ bursts (residual loss) at
//     ~30 s and ~40 s, best link around 100-200 s, connection lost at 350 s.
//   - drive: 10 mph around a parking lot; stable (17 Mbps goodput) for 20 s,
//     more ARQ after 20 s, residual loss around 32 s and 40-48 s, loss of
//     sight from 48 s to 88 s (the 40 s outage), back with a loss burst at ~91 s.
//   - parked: stationary 52 m from the AP; steady link, one loss burst at 60 s.
func MobilityPresets() map[string][]TracePoint {
	return map[string][]TracePoint{
		"walk": {
			{0, 24, 0.10, true}, {28, 24, 0.75, true}, {31, 24, 0.10, true}, {38, 24, 0.75, true}, {41, 24, 0.10, true},
			{45, 36, 0.05, true}, {100, 54, 0.02, true}, {200, 36, 0.10, true}, {300, 12, 0.30, true}, {350, 12, 0.30, false},
		},
		"drive": {
			{0, 54, 0.02, true}, {20, 36, 0.10, true}, {30, 24, 0.70, true}, {34, 24, 0.30, true}, {40, 18, 0.70, true},
			{43, 18, 0.40, true}, {48, 18, 0.40, false}, {88, 24, 0.20, true}, {90, 24, 0.75, true}, {93, 36, 0.10, true},
		},
		"parked": {
			{0, 36, 0.05, true}, {60, 36, 0.80, true}, {61.5, 36, 0.05, true},
		},
	}
}

// LoadTrace returns a preset by name or reads a CSV file.
func LoadTrace(nameOrPath string) ([]TracePoint, error) {
	if tr, ok := MobilityPresets()[nameOrPath]; ok {
		return tr, nil
	}
	f, err := os.Open(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("mobility %q is neither a preset (walk, drive, parked) nor a readable CSV file: %w", nameOrPath, err)
	}
	defer f.Close()
	tr, err := ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("mobility trace %s: %w", nameOrPath, err)
	}
	return tr, nil
}

// ReadTrace parses CSV with header time_s,rate_mbps,fer,associated (any
// column order; associated is true/false or 1/0). Times must not decrease.
func ReadTrace(r io.Reader) ([]TracePoint, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("need a header time_s,rate_mbps,fer,associated and at least one row")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	for _, h := range []string{"time_s", "rate_mbps", "fer", "associated"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("header lacks column %q (want time_s,rate_mbps,fer,associated)", h)
		}
	}
	var out []TracePoint
	for i, row := range rows[1:] {
		get := func(h string) string {
			if c := col[h]; c < len(row) {
				return strings.TrimSpace(row[c])
			}
			return ""
		}
		var p TracePoint
		var e1, e2, e3, e4 error
		p.T, e1 = strconv.ParseFloat(get("time_s"), 64)
		p.RateMbps, e2 = strconv.ParseFloat(get("rate_mbps"), 64)
		p.FER, e3 = strconv.ParseFloat(get("fer"), 64)
		p.Associated, e4 = strconv.ParseBool(get("associated"))
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil || p.T < 0 || p.RateMbps < 0 || p.FER < 0 || p.FER > 1 {
			return nil, fmt.Errorf("line %d: want time_s >= 0, rate_mbps >= 0, 0 <= fer <= 1, associated true/false", i+2)
		}
		if len(out) > 0 && p.T < out[len(out)-1].T {
			return nil, fmt.Errorf("line %d: time goes backwards", i+2)
		}
		out = append(out, p)
	}
	return out, nil
}
