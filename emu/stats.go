package emu

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/coopcc/coopcc/emu/dcf"
	"github.com/coopcc/coopcc/emu/des"
)

// Report is emu.json.
type Report struct {
	Valid         bool               `json:"valid"`
	LatenessUs    map[string]float64 `json:"lateness_us"` // p50, p99, max
	ThresholdUs   float64            `json:"threshold_us"`
	OverloadDrops uint64             `json:"overload_drops"`
	Events        uint64             `json:"events"`
	Reason        string             `json:"reason"`
	DurationS     float64            `json:"duration_s"`
	PHY           string             `json:"phy"`
	APQueue       string             `json:"ap_queue"`
	UpBytes       uint64             `json:"up_bytes"`   // delivered to the server
	DownBytes     uint64             `json:"down_bytes"` // delivered to stations
	WireUpDrops   uint64             `json:"wire_up_drops"`
	WireDownDrops uint64             `json:"wire_down_drops"`
	UnknownDrops  uint64             `json:"unknown_dst_drops"`
	BusyFraction  float64            `json:"medium_busy_fraction"`
	DownDrops     uint64             `json:"iface_down_drops"` // frames for an interface that was down
	// LateBy: events more than 100 µs late, by what the loop was doing before.
	LateBy map[string]uint64 `json:"late_by,omitempty"`
	// RateControl names each node's rate controller (stations by name, "ap").
	RateControl map[string]string `json:"rate_control,omitempty"`
	// MeanRateMbps is each node's mean PHY rate over its delivered unicast frames.
	MeanRateMbps map[string]float64 `json:"mean_rate_mbps,omitempty"`
}

// RateControlOf is the controller kind of a node of the engine ("constant" when none).
func (e *Engine) RateControlOf(n *dcf.Node) string {
	kind := e.Cfg.AP.RateControl
	if n != e.AP {
		kind = e.Cfg.Stations[n.ID-1].RateControl
	}
	if kind == "" {
		kind = "constant"
	}
	return kind
}

// NewReport judges a run: invalid when p99 lateness exceeds the threshold or
// anything was dropped for the emulator's own overload.
func NewReport(e *Engine, h *Histogram, overload uint64, dur des.Time) Report {
	r := Report{
		LatenessUs:    map[string]float64{"p50": h.Quantile(0.5), "p99": h.Quantile(0.99), "max": float64(h.Max()) / 1000},
		ThresholdUs:   e.Cfg.LatenessThresholdUs,
		OverloadDrops: overload,
		Events:        e.Sim.Events(),
		DurationS:     float64(dur) / 1e9,
		PHY:           e.PHY.Name,
		APQueue:       e.Cfg.AP.Queue,
		UpBytes:       e.UpBytes,
		DownBytes:     e.DownBytes,
		WireUpDrops:   e.Up.Stats.QueueDrops + e.Up.Stats.LossDrops,
		WireDownDrops: e.Down.Stats.QueueDrops + e.Down.Stats.LossDrops,
		UnknownDrops:  e.UnknownDrops,
		Valid:         true,
	}
	r.RateControl, r.MeanRateMbps = map[string]string{}, map[string]float64{}
	for _, n := range e.Med.Nodes {
		r.RateControl[n.Name] = e.RateControlOf(n)
		r.MeanRateMbps[n.Name] = n.Stats.MeanRate()
	}
	if dur > 0 {
		r.BusyFraction = float64(e.Med.BusyTime) / float64(dur)
	}
	switch {
	case h.Count() == 0:
		r.Valid, r.Reason = false, "no events handled"
	case r.LatenessUs["p99"] > r.ThresholdUs:
		r.Valid, r.Reason = false, fmt.Sprintf("p99 scheduling lateness %.0f µs exceeds %.0f µs (machine overloaded?)", r.LatenessUs["p99"], r.ThresholdUs)
	case overload > 0:
		r.Valid, r.Reason = false, fmt.Sprintf("%d frames dropped for the emulator's own overload", overload)
	}
	return r
}

// WriteStats writes stations.csv, apqueue.csv and emu.json into dir.
func WriteStats(dir string, e *Engine, r Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "stations.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "station,airtime_s,airtime_share,attempts,collisions,retries,drops,tx_frames,tx_bytes,rx_frames,rx_bytes,queue_drops,retry_drops,frame_errors,assoc_drops")
		var total des.Time
		for _, n := range e.Med.Nodes {
			total += n.Stats.Airtime
		}
		row := func(n *dcf.Node, assoc uint64) {
			s := n.Stats
			share := 0.0
			if total > 0 {
				share = float64(s.Airtime) / float64(total)
			}
			fmt.Fprintf(w, "%s,%.6f,%.6f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", n.Name, float64(s.Airtime)/1e9, share,
				s.Attempts, s.Collisions, s.Retries, s.QueueDrops+s.RetryDrops+assoc, s.TxFrames, s.TxBytes, s.RxFrames, s.RxBytes,
				s.QueueDrops, s.RetryDrops, s.FrameErrors, assoc)
		}
		for i, n := range e.Stas {
			row(n, e.AssocDrops[i])
		}
		row(e.AP, 0)
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "rates.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "station,rate_control,rate_mbps,attempts,successes,frames,airtime_s")
		nodes := append(append([]*dcf.Node{}, e.Stas...), e.AP)
		for _, n := range nodes {
			rates := make([]float64, 0, len(n.Stats.ByRate))
			for r := range n.Stats.ByRate {
				rates = append(rates, r)
			}
			sort.Float64s(rates)
			for _, r := range rates {
				rs := n.Stats.ByRate[r]
				fmt.Fprintf(w, "%s,%s,%g,%d,%d,%d,%.6f\n", n.Name, e.RateControlOf(n), r, rs.Attempts, rs.Successes, rs.Frames, float64(rs.Airtime)/1e9)
			}
		}
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "apqueue.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "t_s,frames,bytes,drops_total")
		for _, s := range e.Samples {
			fmt.Fprintf(w, "%.3f,%d,%d,%d\n", float64(s.T)/1e9, s.Frames, s.Bytes, s.DropsTotal)
		}
	}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "emu.json"), append(b, '\n'), 0o644)
}

func writeFile(path string, fill func(*bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
