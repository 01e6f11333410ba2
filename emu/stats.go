package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coopcc/coopcc/emu/dcf"
	"github.com/coopcc/coopcc/emu/des"
)

// Report is emu.json.
type Report struct {
	Valid         bool               `json:"valid"`
	LatenessUs    map[string]float64 `json:"lateness_us"` // scheduling lateness of events: p50, p99, max
	ThresholdUs   float64            `json:"threshold_us"`
	OverloadDrops uint64             `json:"overload_drops"` // sum of Overload's counters
	Events        uint64             `json:"events"`
	Reason        string             `json:"reason"`
	// Resource names what ran out when the run is invalid: "timing_thread"
	// (the emulator's event loop itself), "cpu" (the machine's CPUs: other
	// processes, the senders included, kept the loop from running),
	// "writer_threads" (frames reached the namespaces late or not at all) or
	// "tap_ring" (the loop did not read the TAPs in time); "" when valid.
	Resource   string             `json:"overload_resource,omitempty"`
	Overload   Overload           `json:"overload"`
	DeliveryUs map[string]float64 `json:"delivery_lateness_us,omitempty"` // TAP writes: start − scheduled time
	// ArrivalUs: how much later than its arrival stamp a frame read from a
	// TAP entered the simulation (threaded engine).
	ArrivalUs   map[string]float64 `json:"arrival_error_us,omitempty"`
	Engine      string             `json:"engine,omitempty"` // threaded | inline
	Writers     int                `json:"writer_threads,omitempty"`
	CPUPressure float64            `json:"cpu_pressure"` // share of the run some task waited for a CPU (PSI some); -1 unknown
	// CPUSteal is the share of the machine's CPU time over the run that
	// its hypervisor gave to others (/proc/stat steal); -1 unknown.
	CPUSteal      float64 `json:"cpu_steal"`
	DurationS     float64 `json:"duration_s"`
	PHY           string  `json:"phy"`
	APQueue       string  `json:"ap_queue"`
	UpBytes       uint64  `json:"up_bytes"`   // delivered to the server
	DownBytes     uint64  `json:"down_bytes"` // delivered to stations
	WireUpDrops   uint64  `json:"wire_up_drops"`
	WireDownDrops uint64  `json:"wire_down_drops"`
	UnknownDrops  uint64  `json:"unknown_dst_drops"`
	BusyFraction  float64 `json:"medium_busy_fraction"`
	// NeighbourAirFraction is the share of the run's time another network's
	// attempts took (Config.Neighbour), NeighbourMbps what its AP received.
	NeighbourAirFraction float64 `json:"neighbour_air_fraction,omitempty"`
	NeighbourMbps        float64 `json:"neighbour_mbps,omitempty"`
	DownDrops            uint64  `json:"iface_down_drops"` // frames for an interface that was down
	// LateBy: events more than 100 µs late, by what the loop was doing before.
	LateBy map[string]uint64 `json:"late_by,omitempty"`
	// RateControl names each node's rate controller (stations by name, "ap").
	RateControl map[string]string `json:"rate_control,omitempty"`
	// MeanRateMbps is each node's mean PHY rate over its delivered unicast frames.
	MeanRateMbps map[string]float64 `json:"mean_rate_mbps,omitempty"`
	// LinkSpeedErrors counts the station TAPs' link speed sets that failed
	// (the speed follows the PHY rate; a failure does not void the run) and
	// LinkSpeedError is the first.
	LinkSpeedErrors uint64 `json:"link_speed_errors,omitempty"`
	LinkSpeedError  string `json:"link_speed_error,omitempty"`
	// AirtimeErrors counts the stations' airtime files that could not be
	// written (Config.AirtimeDir; an agent that reads a stale file judges
	// without the air, and the run stays valid) and AirtimeError is the first.
	AirtimeErrors uint64 `json:"airtime_errors,omitempty"`
	AirtimeError  string `json:"airtime_error,omitempty"`
}

// RateControlOf is the controller kind of a node of the engine ("constant"
// when none, and for the neighbour network's nodes).
func (e *Engine) RateControlOf(n *dcf.Node) string {
	kind := e.Cfg.AP.RateControl
	if n != e.AP {
		kind = ""
		if i := n.ID - 1; i >= 0 && i < len(e.Cfg.Stations) {
			kind = e.Cfg.Stations[i].RateControl
		}
	}
	if kind == "" {
		kind = "constant"
	}
	return kind
}

// Overload counts frames lost to the emulator's own limits. Frames the
// model drops on purpose (queue limits, retry limit, association, wired loss)
// and frames for an interface that is down are not here.
type Overload struct {
	// TAPRingDrops: frames the namespaces sent that their TAP's ring dropped
	// (tx_dropped) because the timing thread did not read them in time.
	TAPRingDrops uint64 `json:"tap_ring_drops"`
	// TAPWriteErrors: writes into a TAP the kernel refused.
	TAPWriteErrors uint64 `json:"tap_write_errors"`
	// WriterQueueDrops: frames dropped because a writer thread fell a whole
	// queue (8192 frames) behind.
	WriterQueueDrops uint64 `json:"writer_queue_drops"`
	// InputQueueDrops: frames an I/O thread read but dropped because the
	// timing thread fell a whole input queue (8192 frames) behind.
	InputQueueDrops uint64 `json:"input_queue_drops"`
}

// Total is the number of frames lost to overload.
func (o Overload) Total() uint64 {
	return o.TAPRingDrops + o.TAPWriteErrors + o.WriterQueueDrops + o.InputQueueDrops
}

// NewReport judges a run's scheduling: invalid when p99 lateness exceeds the
// threshold or anything was dropped for the emulator's own overload.
func NewReport(e *Engine, h *Histogram, o Overload, dur des.Time) Report {
	r := Report{
		LatenessUs:    map[string]float64{"p50": h.Quantile(0.5), "p99": h.Quantile(0.99), "max": float64(h.Max()) / 1000},
		ThresholdUs:   e.Cfg.LatenessThresholdUs,
		OverloadDrops: o.Total(),
		Overload:      o,
		Events:        e.Sim.Events(),
		DurationS:     float64(dur) / 1e9,
		PHY:           e.PHY.Name,
		APQueue:       e.Cfg.AP.Queue,
		UpBytes:       e.UpBytes,
		DownBytes:     e.DownBytes,
		WireUpDrops:   e.Up.Stats.QueueDrops + e.Up.Stats.LossDrops,
		WireDownDrops: e.Down.Stats.QueueDrops + e.Down.Stats.LossDrops,
		UnknownDrops:  e.UnknownDrops,
		CPUPressure:   -1,
		CPUSteal:      -1,
		Valid:         true,
	}
	r.RateControl, r.MeanRateMbps = map[string]string{}, map[string]float64{}
	for _, n := range e.Med.Nodes {
		r.RateControl[n.Name] = e.RateControlOf(n)
		r.MeanRateMbps[n.Name] = n.Stats.MeanRate()
	}
	if dur > 0 {
		r.BusyFraction = float64(e.Med.BusyTime) / float64(dur)
		if e.nb != nil {
			r.NeighbourAirFraction = float64(e.nb.airtime()) / float64(dur)
			r.NeighbourMbps = float64(e.nb.bytes*8) / (float64(dur) / 1e3)
		}
	}
	if h.Count() == 0 {
		r.Valid, r.Reason = false, "no events handled"
	}
	return r
}

// DeliveryFactor: a run is invalid when the p99 delivery lateness of TAP
// writes exceeds this many times the scheduling threshold (1 ms by default).
// A late write only adds to that frame's path delay (it does not reorder
// the simulation), and the inline engine by design delayed writes by up to
// 300 µs; 1 ms stays below a few 802.11g frame times and below 1 % of the
// scenarios' 100–256 ms RTTs.
const DeliveryFactor = 5

// judgeDelivery sets the verdict from the scheduling lateness (already in
// r), the TAP writes' delivery lateness d, the overload counters and LateBy,
// naming the resource that ran out first and what to change.
func (r *Report) judgeDelivery(d *Histogram) {
	if d != nil && d.Count() > 0 {
		r.DeliveryUs = map[string]float64{"p50": d.Quantile(0.5), "p99": d.Quantile(0.99), "max": float64(d.Max()) / 1000}
	}
	if r.Reason != "" { // no events at all
		return
	}
	var why []string
	add := func(res, text string) {
		if r.Resource == "" {
			r.Resource = res
		}
		why = append(why, text)
	}
	if p99 := r.LatenessUs["p99"]; p99 > r.ThresholdUs {
		if res := r.lateResource(); res == "cpu" {
			add("cpu", fmt.Sprintf("p99 scheduling lateness %.0f µs exceeds %.0f µs: the timing thread woke late because the machine's CPUs were taken (senders, agents, other jobs%s): fewer or lighter senders, or more cores", p99, r.ThresholdUs, r.pressureText()))
		} else {
			add("timing_thread", fmt.Sprintf("p99 scheduling lateness %.0f µs exceeds %.0f µs: the emulator's timing thread was saturated (handling, reading or writing frames): a lower frame rate or fewer stations", p99, r.ThresholdUs))
		}
	}
	if p99, lim := r.DeliveryUs["p99"], DeliveryFactor*r.ThresholdUs; p99 > lim {
		add("writer_threads", fmt.Sprintf("p99 delivery lateness %.0f µs exceeds %.0f µs: TAP writes (the receiving namespaces' stacks) fell behind%s: more cores or lighter receivers", p99, lim, r.pressureText()))
	}
	if n := r.Overload.WriterQueueDrops + r.Overload.TAPWriteErrors; n > 0 {
		add("writer_threads", fmt.Sprintf("%d frames could not be written into the namespaces (%d writer queue full, %d TAP writes refused)", n, r.Overload.WriterQueueDrops, r.Overload.TAPWriteErrors))
	}
	if n := r.Overload.InputQueueDrops; n > 0 {
		add("timing_thread", fmt.Sprintf("%d frames read from the TAPs were dropped: the timing thread fell a whole input queue behind", n))
	}
	if n := r.Overload.TAPRingDrops; n > 0 {
		add("tap_ring", fmt.Sprintf("%d frames dropped in the TAPs' rings: the timing thread did not read them in time", n))
	}
	if len(why) > 0 {
		if r.CPUSteal >= StealNoted {
			why = append(why, fmt.Sprintf("the virtual machine's host took %.0f %% of its CPU time during the run (steal): a busy host, not this run's load; run it again later or on another machine", 100*r.CPUSteal))
		}
		r.Valid, r.Reason = false, strings.Join(why, "; ")
	}
}

// lateResource says why events were late: "cpu" when most late runs began
// while the loop slept or spun (someone else had its CPU), else
// "timing_thread" (the loop was busy with its own work).
func (r *Report) lateResource() string {
	own := r.LateBy["handling"] + r.LateBy["writing"] + r.LateBy["reading"] + r.LateBy["budget_sleep"]
	if r.LateBy["sleeping"]+r.LateBy["spinning"] > own {
		return "cpu"
	}
	return "timing_thread"
}

// StealNoted is the share of CPU time taken by the hypervisor (CPUSteal)
// from which an invalid run's reason names it (last): a virtual machine
// whose host is busy wakes the timing thread late however light the run.
const StealNoted = 0.01

// pressureText is the CPU pressure as a clause, or "".
func (r *Report) pressureText() string {
	if r.CPUPressure < 0 {
		return ""
	}
	return fmt.Sprintf("; tasks waited for a CPU %.0f %% of the run", 100*r.CPUPressure)
}

// cpuStat is the aggregate line of /proc/stat: the time the hypervisor
// took (steal) and all the time accounted, in clock ticks.
type cpuStat struct {
	steal, total float64
	ok           bool
}

// readCPUStat reads /proc/stat's aggregate CPU line.
func readCPUStat() cpuStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}
	}
	return parseCPUStat(string(b))
}

// parseCPUStat parses /proc/stat's first line, "cpu  user nice system idle
// iowait irq softirq steal guest guest_nice" (guest time is already in
// user and nice, so it is not added to the total).
func parseCPUStat(s string) cpuStat {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuStat{}
	}
	var st cpuStat
	for i, v := range f[1:9] {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return cpuStat{}
		}
		st.total += x
		if i == 7 {
			st.steal = x
		}
	}
	st.ok = st.total > 0
	return st
}

// stealShare is the share of the CPU time between p and q the hypervisor
// took; -1 when unknown.
func (p cpuStat) stealShare(q cpuStat) float64 {
	if !p.ok || !q.ok || q.total <= p.total {
		return -1
	}
	return min(max((q.steal-p.steal)/(q.total-p.total), 0), 1)
}

// HostSteal is the share of this machine's CPU time its hypervisor took
// (/proc/stat steal) over the next d, or -1 when unknown (no /proc/stat, or
// ctx ended first). The lab waits for a quiet host with it.
func HostSteal(ctx context.Context, d time.Duration) float64 {
	p := readCPUStat()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return -1
	case <-t.C:
	}
	return p.stealShare(readCPUStat())
}

// cpuPressure is a reading of /proc/pressure/cpu ("some" total, µs) and when.
type cpuPressure struct {
	totalUs float64
	at      time.Time
	ok      bool
}

// readCPUPressure reads the system's CPU pressure stall information.
func readCPUPressure() cpuPressure {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return cpuPressure{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	i := strings.Index(line, "total=")
	if i < 0 {
		return cpuPressure{}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(line[i+len("total="):]), 64)
	if err != nil {
		return cpuPressure{}
	}
	return cpuPressure{totalUs: v, at: time.Now(), ok: true}
}

// share is the fraction of the time between p and q that some task waited
// for a CPU; -1 when unknown.
func (p cpuPressure) share(q cpuPressure) float64 {
	wall := q.at.Sub(p.at).Seconds()
	if !p.ok || !q.ok || wall <= 0 {
		return -1
	}
	return min(max((q.totalUs-p.totalUs)/1e6/wall, 0), 1)
}

// WriteStats writes stations.csv, rates.csv, apqueue.csv, medium.csv and
// emu.json into dir.
func WriteStats(dir string, e *Engine, r Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "stations.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "station,airtime_s,airtime_share,attempts,collisions,retries,drops,tx_frames,tx_bytes,rx_frames,rx_bytes,queue_drops,retry_drops,frame_errors,assoc_drops,broadcast_lost")
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
			fmt.Fprintf(w, "%s,%.6f,%.6f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", n.Name, float64(s.Airtime)/1e9, share,
				s.Attempts, s.Collisions, s.Retries, s.Dropped()+assoc, s.TxFrames, s.TxBytes, s.RxFrames, s.RxBytes,
				s.QueueDrops, s.RetryDrops, s.FrameErrors, assoc, s.BroadcastLost)
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
		for _, n := range e.stationsThenAP() {
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
	if err := writeFile(filepath.Join(dir, "medium.csv"), func(w *bufio.Writer) { writeMedium(w, e) }); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "emu.json"), append(b, '\n'), 0o644)
}

// writeMedium writes medium.csv: per MediumInterval of emulated time (t_s
// its end), the share of it the medium was busy and each node's airtime
// share, stations then the AP. Collisions occupy the medium once and count
// in the airtime of every node that took part, so the nodes' shares may
// add up to more than busy_share.
func writeMedium(w *bufio.Writer, e *Engine) {
	w.WriteString("t_s,busy_share")
	for _, n := range e.stationsThenAP() {
		w.WriteString("," + n.Name + "_share")
	}
	w.WriteString("\n")
	for i := 1; i < len(e.Medium); i++ {
		p, q := e.Medium[i-1], e.Medium[i]
		dt := float64(q.T - p.T)
		if dt <= 0 {
			continue
		}
		fmt.Fprintf(w, "%.3f,%.4f", float64(q.T)/1e9, float64(q.Busy-p.Busy)/dt)
		for j := range q.Airtime {
			fmt.Fprintf(w, ",%.4f", float64(q.Airtime[j]-p.Airtime[j])/dt)
		}
		w.WriteString("\n")
	}
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
