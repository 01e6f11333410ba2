// Package analysis turns the recordings of lab runs into the papers' metrics:
// receiver-side goodput, aggregate throughput, Jain's and the capability-weighted
// fairness index (papers/003), RTT percentiles, retransmissions and timeouts,
// and loss events classified as "penalizing" or "moderate" (papers/002).
//
// The package is pure: it works on in-memory values only (package lab/results
// loads a results directory into these types) and never touches files,
// sockets or the clock. docs/analysis.md defines every metric and its source.
package analysis

import (
	"math"
	"time"

	"github.com/coopcc/coopcc/schema"
)

// Run is everything recorded for one run of a scenario (one directory
// runs/<run-id>/ of a results directory). Only Info is required; every other
// part may be empty when the run did not record it.
type Run struct {
	Info  RunInfo
	Iperf map[string]Iperf // by station name (iperf3/<station>.json)
	Flows []Series         // monitor time series (flows.csv), one per flow
	// Receivers are the receiving sockets' time series (receivers.csv: the
	// server's for uploads, the station's for downloads), labelled by
	// station; empty in runs recorded before the lab sampled them.
	Receivers []Series
	Bounds    map[string][]BoundEvent // agent bound changes by station (bounds/<station>.jsonl)
	Emu       *Emu                    // emulator statistics; nil when emu/ is absent
	// T0 is the Unix time (seconds) that flows.csv's t_s values were
	// rebased by, so that sample times are seconds since the recording
	// started; 0 when the file already held relative times.
	T0 float64
}

// RunTime converts a wall-clock time (an agent event's) to seconds on the
// run's clock (see T0). Without T0 it returns NaN.
func (r Run) RunTime(t time.Time) float64 {
	if r.T0 == 0 {
		return math.NaN()
	}
	return float64(t.UnixMicro())/1e6 - r.T0
}

// RunInfo is run.json, the record the runner writes (schema.Run). The
// loader sets ID to the run directory's name.
type RunInfo = schema.Run

// Station is one terminal of a run (schema.Station).
type Station = schema.Station

// Iperf is the part of one iperf3 -J report the analysis uses.
type Iperf struct {
	Station string
	// ReceivedBytes and ReceivedSeconds come from end.sum_received: the
	// receiver-side goodput of the flow.
	ReceivedBytes   float64
	ReceivedSeconds float64
	SentBytes       float64
	Retransmits     int  // end.sum_sent.retransmits (sender side; 0 when unknown)
	Reverse         bool // iperf3 -R: the station received
	// Intervals are the per-interval sums as the iperf3 client saw them
	// (sender side for an upload, receiver side for -R).
	Intervals []Interval
	Error     string // iperf3's "error" field, if the test failed
}

// Interval is one entry of iperf3's intervals[].sum.
type Interval struct {
	Start, End float64 // seconds since the test started
	Bytes      float64
}

// Mbps returns the interval's throughput in Mbit/s (0 for an empty interval).
func (iv Interval) Mbps() float64 {
	if iv.End <= iv.Start {
		return 0
	}
	return iv.Bytes * 8 / (iv.End - iv.Start) / 1e6
}

// GoodputMbps is the receiver-side goodput in Mbit/s (end.sum_received).
func (ip Iperf) GoodputMbps() float64 {
	if ip.ReceivedSeconds <= 0 {
		return 0
	}
	return ip.ReceivedBytes * 8 / ip.ReceivedSeconds / 1e6
}

// FlowKey identifies one monitored flow.
type FlowKey struct {
	Station string // the netns column
	Src     string // "addr:port"
	Dst     string
}

// Sample is one row of flows.csv for one flow.
type Sample struct {
	T            float64 // t_s: seconds since the run started
	CC           string
	Cwnd         uint32 // segments
	Ssthresh     uint32
	MSS          uint32 // bytes
	SRTT         time.Duration
	RTTVar       time.Duration
	MinRTT       time.Duration
	CAState      uint8 // 0 Open 1 Disorder 2 CWR 3 Recovery 4 Loss
	Retrans      uint32
	TotalRetrans uint32
	Lost         uint32
	Sacked       uint32 // optional column "sacked": segments the receiver SACKed (dup-ACK evidence)
	Unacked      uint32
	BytesAcked   uint64
	// BytesReceived is the socket's bytes received in order (column
	// bytes_received): the receiving side's counter, in receivers.csv.
	BytesReceived uint64
	DeliveryRate  float64 // bytes/s
	AppLimited    bool
}

// Series is the time series of one flow, sorted by time.
type Series struct {
	Key     FlowKey
	Samples []Sample
}

// BoundEvent is one line of an agent's events file (schema.BoundEvent, the
// type the agent writes).
type BoundEvent = schema.BoundEvent

// Emu holds the emulator's output files.
type Emu struct {
	Stations []EmuStation // stations.csv (may be empty)
	Rates    []EmuRate    // rates.csv (absent before rate control existed)
	Queue    []QueueSample
	Medium   []MediumSample // medium.csv (absent before the emulator wrote it)
	Status   *EmuStatus     // emu.json; nil when absent
}

// EmuStation is one row of stations.csv.
type EmuStation struct {
	Station                              string
	AirtimeS, AirtimeShare               float64
	Attempts, Collisions, Retries, Drops uint64
	TxFrames, TxBytes, RxFrames, RxBytes uint64
	// QueueDrops are frames dropped at the node's full transmit queue,
	// RetryDrops frames dropped after the MAC retry limit (0 when the
	// emulator's stations.csv predates these columns).
	QueueDrops, RetryDrops uint64
}

// EmuRate is one row of rates.csv: a node's unicast attempts at one PHY rate.
type EmuRate struct {
	Station, RateControl        string
	RateMbps                    float64
	Attempts, Successes, Frames uint64
	AirtimeS                    float64
}

// QueueSample is one row of apqueue.csv.
type QueueSample struct {
	T          float64
	Frames     uint64
	Bytes      uint64
	DropsTotal uint64
}

// MediumSample is one row of medium.csv: at T (the end of a 100 ms
// interval of the emulator's clock) the share of the interval the medium
// was busy and each node's airtime share, by node name (the stations and
// "ap").
type MediumSample struct {
	T, Busy float64
	Share   map[string]float64
}

// EmuStatus is emu.json.
type EmuStatus struct {
	Valid      bool `json:"valid"`
	LatenessUs struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
		Max float64 `json:"max"`
	} `json:"lateness_us"`
	ThresholdUs   float64 `json:"threshold_us"`
	OverloadDrops uint64  `json:"overload_drops"`
	Events        uint64  `json:"events"`
	Reason        string  `json:"reason"`
	// BusyFraction is the share of the emulator's lifetime the medium was
	// busy (0 when emu.json predates it).
	BusyFraction float64 `json:"medium_busy_fraction"`
	// CPUSteal is the share of the machine's CPU time over the run that
	// its hypervisor gave to other guests (nil when emu.json predates it;
	// negative when the machine did not say).
	CPUSteal *float64 `json:"cpu_steal,omitempty"`
}
