package emu

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/coopcc/coopcc/emu/bianchi"
	"github.com/coopcc/coopcc/emu/dcf"
	"github.com/coopcc/coopcc/emu/phy"
)

// ValidateOptions configures a saturation validation against Bianchi.
type ValidateOptions struct {
	PHY        string  // preset name
	N          []int   // station counts
	Frame      int     // MSDU (IP packet) bytes
	Seconds    float64 // virtual seconds measured per N (after 1 s warm-up)
	Seed       uint64
	RetryLimit int // 0 = preset
	// RateControl runs the stations with a rate controller (arf, aarf,
	// minstrel; "" or constant = Bianchi's fixed rate). The model still
	// assumes the preset's fixed rate: the error column then measures what
	// rate control costs, it is not a validation.
	RateControl string
}

// ValidationRow is one line of the validation table.
type ValidationRow struct {
	N                  int
	SimMbps, ModelMbps float64 // MSDU throughput
	ErrPct             float64
	SimP, ModelP       float64
	GoodputMbps        float64 // model throughput counted as TCP payload (frame − 40 B)
	Jain               float64
	FramesPerTx        int
	EventsPerSimSecond float64
	RateControl        string  // "" for constant rate
	MeanRate           float64 // mean PHY rate of delivered frames (Mbps)
}

// Validate runs saturated stations in virtual time for every N and compares
// with Bianchi's model. With an aggregating preset every transmission carries
// a full A-MPDU (the model uses the same count).
func Validate(o ValidateOptions) ([]ValidationRow, error) {
	p, err := phy.Lookup(o.PHY)
	if err != nil {
		return nil, err
	}
	if o.Frame < 41 || o.Frame > 7935 {
		return nil, fmt.Errorf("frame size %d B out of range: use 41..7935", o.Frame)
	}
	if o.Seconds <= 0 {
		return nil, fmt.Errorf("seconds must be positive (got %g)", o.Seconds)
	}
	frames := 1
	if p.AMPDU {
		mpdu := p.MPDUBytes(o.Frame)
		frames = p.AMPDUMaxFrames
		for frames > 1 && phy.AMPDUBytes(repeat(mpdu, frames)...) > p.MaxAMPDUBytes(0) {
			frames--
		}
	}
	var rows []ValidationRow
	for _, n := range o.N {
		if n < 1 || n > 200 {
			return nil, fmt.Errorf("station count %d out of range: use 1..200", n)
		}
		rc := o.RateControl
		if rc == "constant" {
			rc = ""
		}
		sim, err := dcf.Saturate(dcf.SaturationConfig{PHY: p, N: n, MSDU: o.Frame, Warmup: 1, Seconds: o.Seconds, RetryLimit: o.RetryLimit, Seed: o.Seed, RateControl: rc})
		if err != nil {
			return nil, err
		}
		model, err := bianchi.Saturation(p, n, o.Frame, frames)
		if err != nil {
			return nil, err
		}
		rows = append(rows, ValidationRow{
			N: n, SimMbps: sim.Throughput / 1e6, ModelMbps: model.Throughput / 1e6,
			ErrPct: 100 * (sim.Throughput - model.Throughput) / model.Throughput,
			SimP:   sim.CollisionP, ModelP: model.P,
			GoodputMbps: model.Throughput / 1e6 * float64(o.Frame-40) / float64(o.Frame),
			Jain:        sim.Jain, FramesPerTx: frames,
			EventsPerSimSecond: float64(sim.Events) / (o.Seconds + 1),
			RateControl:        rc, MeanRate: sim.MeanRate,
		})
	}
	return rows, nil
}

// MaxAbsErr is the largest |error %| of the rows.
func MaxAbsErr(rows []ValidationRow) float64 {
	m := 0.0
	for _, r := range rows {
		m = math.Max(m, math.Abs(r.ErrPct))
	}
	return m
}

// WriteValidationTable prints rows as a Markdown table.
func WriteValidationTable(w io.Writer, rows []ValidationRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	rc := len(rows) > 0 && rows[0].RateControl != ""
	if rc {
		fmt.Fprintln(tw, "| N\t| emulator Mbps\t| Bianchi (fixed rate) Mbps\t| difference %\t| p emulator\t| p Bianchi\t| mean PHY Mbps\t| Jain\t|")
	} else {
		fmt.Fprintln(tw, "| N\t| emulator Mbps\t| Bianchi Mbps\t| error %\t| p emulator\t| p Bianchi\t| Bianchi TCP-payload Mbps\t| Jain\t|")
	}
	fmt.Fprintln(tw, "|--\t|--\t|--\t|--\t|--\t|--\t|--\t|--\t|")
	for _, r := range rows {
		third := r.GoodputMbps
		if rc {
			third = r.MeanRate
		}
		fmt.Fprintf(tw, "| %d\t| %.2f\t| %.2f\t| %+.2f\t| %.3f\t| %.3f\t| %.2f\t| %.3f\t|\n",
			r.N, r.SimMbps, r.ModelMbps, r.ErrPct, r.SimP, r.ModelP, third, r.Jain)
	}
	return tw.Flush()
}

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}
