package analysis

import (
	"math"
	"sort"
)

// MinDataBytes is how many bytes a flow must have acknowledged during the
// recording to count as a data flow. iperf3's control connection moves a few
// hundred bytes and is left out of RTT, retransmission and loss statistics.
const MinDataBytes = 64 << 10

// Point is one point of a time series.
type Point struct{ T, V float64 }

// AckedBytes returns how many bytes the flow acknowledged between its first
// and last sample (bytes_acked is cumulative).
func AckedBytes(s Series) uint64 {
	if len(s.Samples) < 2 {
		return 0
	}
	first, last := s.Samples[0].BytesAcked, s.Samples[len(s.Samples)-1].BytesAcked
	if last < first {
		return 0
	}
	return last - first
}

// AckedInWindow returns the bytes s acknowledged between run times t0 and t1,
// with bytes_acked interpolated linearly at the window's edges. A flow that
// opened inside the window counts from zero; one that closed inside it counts
// up to its last sample.
func AckedInWindow(s Series, t0, t1 float64) float64 {
	return counterInWindow(s, t0, t1, func(x Sample) uint64 { return x.BytesAcked })
}

// ReceivedInWindow is AckedInWindow of the receiving socket's bytes_received:
// what arrived in order between t0 and t1, without the delay of the ACKs'
// way back that the sender's bytes_acked carries.
func ReceivedInWindow(s Series, t0, t1 float64) float64 {
	return counterInWindow(s, t0, t1, func(x Sample) uint64 { return x.BytesReceived })
}

// counterInWindow is the increase of a monotone per-flow counter between
// run times t0 and t1, interpolated linearly between samples.
func counterInWindow(s Series, t0, t1 float64, counter func(Sample) uint64) float64 {
	if len(s.Samples) == 0 || t1 <= t0 {
		return 0
	}
	at := func(t float64) float64 {
		sm := s.Samples
		if t <= sm[0].T {
			return 0 // the flow (or its recording) had not started: nothing counted yet
		}
		if t >= sm[len(sm)-1].T {
			return float64(counter(sm[len(sm)-1]))
		}
		i := sort.Search(len(sm), func(i int) bool { return sm[i].T >= t })
		a, b := sm[i-1], sm[i]
		if b.T <= a.T {
			return float64(counter(b))
		}
		return float64(counter(a)) + (float64(counter(b))-float64(counter(a)))*(t-a.T)/(b.T-a.T)
	}
	if d := at(t1) - at(t0); d > 0 {
		return d
	}
	return 0
}

// ReceiverFlows returns the receiving side's data flows of a station (from
// receivers.csv): its series that received at least MinDataBytes.
func ReceiverFlows(receivers []Series, station string) []Series {
	var out []Series
	for _, s := range receivers {
		if n := len(s.Samples); s.Key.Station == station && n > 0 && s.Samples[n-1].BytesReceived-s.Samples[0].BytesReceived >= MinDataBytes {
			out = append(out, s)
		}
	}
	return out
}

// windowSlack is how far before a station's stop time the run's recording may
// end and still count as covering the window (one or two monitor samples).
const windowSlack = 0.25

// recordedUntil returns the run time of the last flow sample of the run.
func recordedUntil(run Run) float64 {
	last := math.Inf(-1)
	for _, f := range run.Flows {
		if n := len(f.Samples); n > 0 {
			last = math.Max(last, f.Samples[n-1].T)
		}
	}
	return last
}

// IsDataFlow reports whether s carried bulk data (see MinDataBytes).
func IsDataFlow(s Series) bool { return AckedBytes(s) >= MinDataBytes }

// MinStarvedBytes: a station none of whose flows reached MinDataBytes (a
// starved terminal) still has its largest flow taken as its data flow when
// that flow acknowledged at least this much (iperf3's control connection
// acknowledges a few hundred bytes).
const MinStarvedBytes = 4 << 10

// DataFlows returns the data flows of a station, in input order: the
// flows recorded in its netns and — for downloads, where the station only
// receives — the mirror-image flows recorded at the other end (another
// netns's flow whose src is the station flow's dst and vice versa), keeping
// those that acknowledged at least MinDataBytes. A starved station with no
// such flow keeps its flow with the largest bytes_acked if that is at least
// MinStarvedBytes.
func DataFlows(flows []Series, station string) []Series {
	mirror := map[[2]string]bool{}
	for _, s := range flows {
		if s.Key.Station == station {
			mirror[[2]string{s.Key.Dst, s.Key.Src}] = true
		}
	}
	var out []Series
	best, bestAcked := -1, uint64(0)
	for i, s := range flows {
		if s.Key.Station != station && !mirror[[2]string{s.Key.Src, s.Key.Dst}] {
			continue
		}
		if IsDataFlow(s) {
			out = append(out, s)
		}
		if n := len(s.Samples); n > 0 && s.Samples[n-1].BytesAcked > bestAcked {
			best, bestAcked = i, s.Samples[n-1].BytesAcked
		}
	}
	if len(out) == 0 && best >= 0 && bestAcked >= MinStarvedBytes {
		out = append(out, flows[best])
	}
	return out
}

// SRTTsMs returns the flow's smoothed-RTT samples in milliseconds, skipping
// samples where the kernel had no RTT estimate yet (srtt 0).
func SRTTsMs(s Series) []float64 {
	out := make([]float64, 0, len(s.Samples))
	for _, smp := range s.Samples {
		if smp.SRTT > 0 {
			out = append(out, float64(smp.SRTT.Microseconds())/1000)
		}
	}
	return out
}

// Retransmissions returns the segments the flow retransmitted: the first
// sample's total_retrans (the connection's retransmissions before the
// recording saw it) plus every later increase. A decrease (the counter can
// only reset with a new socket on the same addresses) starts a new count.
func Retransmissions(s Series) int {
	if len(s.Samples) == 0 {
		return 0
	}
	n := int(s.Samples[0].TotalRetrans)
	for i := 1; i < len(s.Samples); i++ {
		prev, cur := s.Samples[i-1].TotalRetrans, s.Samples[i].TotalRetrans
		switch {
		case cur > prev:
			n += int(cur - prev)
		case cur < prev:
			n += int(cur)
		}
	}
	return n
}

// LossEpisodes counts the flow's retransmission-timeout episodes: entries
// into CA state 4 (TCP_CA_Loss), which Linux enters only on an RTO. A first
// sample already in Loss counts as one. Episodes shorter than the sampling
// interval can be missed (documented in docs/analysis.md).
func LossEpisodes(s Series) int {
	n := 0
	for i, smp := range s.Samples {
		if smp.CAState == 4 && (i == 0 || s.Samples[i-1].CAState != 4) {
			n++
		}
	}
	return n
}

// AckedThroughput returns the flow's sender-side throughput in Mbit/s
// between consecutive samples, from the bytes_acked deltas, each point at
// the end of its interval.
func AckedThroughput(s Series) []Point {
	var out []Point
	for i := 1; i < len(s.Samples); i++ {
		a, b := s.Samples[i-1], s.Samples[i]
		dt := b.T - a.T
		if dt <= 0 {
			continue
		}
		var d float64
		if b.BytesAcked >= a.BytesAcked {
			d = float64(b.BytesAcked - a.BytesAcked)
		}
		out = append(out, Point{T: b.T, V: d * 8 / dt / 1e6})
	}
	return out
}

// GoodputSeries returns the iperf3 per-interval throughput in Mbit/s, each
// point at the end of its interval shifted by offset seconds (the station's
// start time, to put it on the run's clock).
func GoodputSeries(ip Iperf, offset float64) []Point {
	out := make([]Point, 0, len(ip.Intervals))
	for _, iv := range ip.Intervals {
		if iv.End <= iv.Start {
			continue
		}
		out = append(out, Point{T: iv.End + offset, V: iv.Mbps()})
	}
	return out
}

// GoodputBinS is the bin width of goodput time series: long enough to hold
// about 20 monitor samples, short enough to show a terminal joining.
const GoodputBinS = 1.0

// BinnedGoodput returns the goodput of flows in Mbit/s in bins of bin
// seconds covering [t0, t1): the bytes they acknowledged inside each bin
// (AckedInWindow) over the bin's length, each point at the bin's middle. A
// bin can therefore never show more than was acknowledged in it, unlike
// per-sample rates (sample times jitter) or iperf3's client intervals (for an
// upload, bytes written into the socket, not delivered).
func BinnedGoodput(flows []Series, t0, t1, bin float64) []Point {
	if bin <= 0 || t1 <= t0 {
		return nil
	}
	n := int(math.Ceil((t1 - t0) / bin))
	out := make([]Point, 0, n)
	for k := 0; k < n; k++ {
		a := t0 + float64(k)*bin
		b := math.Min(a+bin, t1)
		var bytes float64
		for _, f := range flows {
			bytes += AckedInWindow(f, a, b)
		}
		out = append(out, Point{T: (a + b) / 2, V: bytes * 8 / (b - a) / 1e6})
	}
	return out
}

// RecordedSpan returns the first and last sample times of the flows (NaN, NaN
// when there are none).
func RecordedSpan(flows []Series) (first, last float64) {
	first, last = math.Inf(1), math.Inf(-1)
	for _, f := range flows {
		if n := len(f.Samples); n > 0 {
			first = math.Min(first, f.Samples[0].T)
			last = math.Max(last, f.Samples[n-1].T)
		}
	}
	if first > last {
		return math.NaN(), math.NaN()
	}
	return first, last
}

// GoodputTraces returns every station's goodput over time and the
// aggregate, in bins of bin seconds from the run's first recorded sample
// (bins start at whole multiples of bin). Each bin holds the bytes the
// station's data flows had acknowledged in it (BinnedGoodput). Cumulative
// ACKs arrive in bursts — when a retransmission fills a hole and a
// window's worth of SACKed data is acknowledged at once, or when the AP's
// backlog of ACKs drains — so a bin can hold more than the medium can carry
// in one bin. When the run's capacity is known (Capacity), the bytes of a
// bin above it are moved back into the bins before it, split among the
// stations as they were acknowledged: data acknowledged by t crossed the
// medium before t, so this only undoes the burst, and every station keeps
// exactly the bytes it had acknowledged.
func GoodputTraces(run Run, bin float64) (perStation map[string][]Point, aggregate []Point) {
	var all []Series
	byStation := map[string][]Series{}
	for _, st := range stationsOf(run) {
		fl := DataFlows(run.Flows, st.Name)
		byStation[st.Name] = fl
		all = append(all, fl...)
	}
	first, last := RecordedSpan(all)
	if math.IsNaN(first) || bin <= 0 {
		return nil, nil
	}
	t0 := math.Floor(first/bin) * bin
	n := max(1, int(math.Ceil((last-t0)/bin-1e-9)))
	t1 := t0 + float64(n)*bin // whole bins: rates of equal-width bins can be moved between them
	perStation = map[string][]Point{}
	for name, fl := range byStation {
		if len(fl) > 0 {
			perStation[name] = BinnedGoodput(fl, t0, t1, bin)
		}
	}
	aggregate = make([]Point, n)
	for k := range aggregate {
		aggregate[k].T = t0 + (float64(k)+0.5)*bin
		for _, pts := range perStation {
			aggregate[k].V += pts[k].V
		}
	}
	if c, ok, err := Capacity(run.Info); err == nil && ok {
		spreadBursts(aggregate, perStation, c)
	}
	return perStation, aggregate
}

// spreadBursts moves what a bin of agg holds above capacity (Mbit/s) into
// the bin before it, from the last bin to the first, taking it from each
// station's series in proportion to its part of the bin. The bins have
// equal width, so moving a rate moves bytes; the first bin keeps what it
// cannot pass on.
func spreadBursts(agg []Point, per map[string][]Point, capacity float64) {
	for k := len(agg) - 1; k > 0; k-- {
		excess := agg[k].V - capacity
		if excess <= 0 {
			continue
		}
		for _, pts := range per {
			moved := excess * pts[k].V / agg[k].V
			pts[k].V -= moved
			pts[k-1].V += moved
		}
		agg[k].V = capacity
		agg[k-1].V += excess
	}
}
