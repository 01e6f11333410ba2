package analysis

import "math"

// Medium is what the emulator counted over its lifetime (emu/stations.csv,
// emu.json): how the AP fared against the stations on the shared medium.
// Counts cover the emulator's whole lifetime, not the traffic window.
type Medium struct {
	APTxFrames    uint64  // frames the AP delivered (the ACKs of uploads)
	APQueueDrops  uint64  // frames dropped at the AP's full queue
	StaTxFrames   uint64  // frames the stations delivered
	StaQueueDrops uint64  // frames dropped at the stations' full queues
	StaRetryDrops uint64  // station frames dropped after the MAC retry limit
	BusyFraction  float64 // share of the time the medium was busy (NaN = unknown)
}

// MediumOf sums the emulator's per-node counters (node "ap" is the AP,
// every other node a station). ok is false without emu/stations.csv.
func MediumOf(e *Emu) (m Medium, ok bool) {
	m.BusyFraction = math.NaN()
	if e == nil || len(e.Stations) == 0 {
		return m, false
	}
	for _, st := range e.Stations {
		if st.Station == "ap" {
			m.APTxFrames += st.TxFrames
			m.APQueueDrops += st.QueueDrops
			continue
		}
		m.StaTxFrames += st.TxFrames
		m.StaQueueDrops += st.QueueDrops
		m.StaRetryDrops += st.RetryDrops
	}
	if e.Status != nil && e.Status.BusyFraction > 0 {
		m.BusyFraction = e.Status.BusyFraction
	}
	return m, true
}

// APDropShare is the share of the frames offered to the AP's queue that it
// dropped: drops / (drops + delivered) (NaN when the AP saw none).
func (m Medium) APDropShare() float64 {
	if m.APQueueDrops+m.APTxFrames == 0 {
		return math.NaN()
	}
	return float64(m.APQueueDrops) / float64(m.APQueueDrops+m.APTxFrames)
}

// DataPerAPFrame is the stations' delivered frames per frame the AP
// delivered: about 2 with delayed ACKs and one terminal, more when the AP
// drops ACKs (NaN when the AP delivered none).
func (m Medium) DataPerAPFrame() float64 {
	if m.APTxFrames == 0 {
		return math.NaN()
	}
	return float64(m.StaTxFrames) / float64(m.APTxFrames)
}

// CwndStats are a station's congestion windows and CA states over the
// samples of its data flows.
type CwndStats struct {
	P50, Max      float64 // cwnd, segments (NaN without samples)
	OpenShare     float64 // share of samples in CA state Open (0)
	RecoveryShare float64 // share of samples in CA state Recovery (3)
}

// CwndOf pools the samples of flows.
func CwndOf(flows []Series) CwndStats {
	var cw []float64
	var open, recovery int
	for _, f := range flows {
		for _, s := range f.Samples {
			cw = append(cw, float64(s.Cwnd))
			switch s.CAState {
			case 0:
				open++
			case 3:
				recovery++
			}
		}
	}
	if len(cw) == 0 {
		return CwndStats{P50: math.NaN(), Max: math.NaN(), OpenShare: math.NaN(), RecoveryShare: math.NaN()}
	}
	mx := 0.0
	for _, v := range cw {
		mx = math.Max(mx, v)
	}
	n := float64(len(cw))
	return CwndStats{P50: Percentile(cw, 50), Max: mx, OpenShare: float64(open) / n, RecoveryShare: float64(recovery) / n}
}

// SRTTGoodputCorr is Pearson's correlation, pooled over flows, between a
// flow's mean SRTT in each whole second [k, k+1) of [from, to) and the
// goodput it had acknowledged in that second. papers/000–001 (Fig. 10)
// observe a negative one ("the RTT is small when the throughput is high");
// a standing queue gives a positive one. NaN with fewer than 3 seconds or
// no variation.
func SRTTGoodputCorr(flows []Series, from, to float64) float64 {
	return pearson(srttGoodputPairs(flows, from, to))
}

// srttGoodputPairs returns, for every flow and whole second [k, k+1) of
// [from, to) with an SRTT sample, the flow's mean SRTT (ms) and the goodput
// it acknowledged in that second (Mbit/s).
func srttGoodputPairs(flows []Series, from, to float64) (xs, ys []float64) {
	for _, f := range flows {
		for k := math.Ceil(from); k+1 <= to; k++ {
			var sum float64
			var n int
			for _, s := range f.Samples {
				if s.T >= k && s.T < k+1 && s.SRTT > 0 {
					sum += float64(s.SRTT.Microseconds()) / 1e3
					n++
				}
			}
			if n == 0 {
				continue
			}
			xs = append(xs, sum/float64(n))
			ys = append(ys, AckedInWindow(f, k, k+1)*8/1e6)
		}
	}
	return xs, ys
}

// pearson is the sample correlation of xs and ys (NaN when undefined).
func pearson(xs, ys []float64) float64 {
	if len(xs) < 3 || len(xs) != len(ys) {
		return math.NaN()
	}
	mx, my := StatOf(xs).Mean, StatOf(ys).Mean
	var cov, vx, vy float64
	for i := range xs {
		cov += (xs[i] - mx) * (ys[i] - my)
		vx += (xs[i] - mx) * (xs[i] - mx)
		vy += (ys[i] - my) * (ys[i] - my)
	}
	if vx == 0 || vy == 0 {
		return math.NaN()
	}
	return cov / math.Sqrt(vx*vy)
}
