package analysis

import (
	"math"
	"time"
)

// Loss-event classes (papers/002).
const (
	Penalizing = "penalizing" // the collapse cost a substantial part of the throughput
	Moderate   = "moderate"   // cwnd collapsed but throughput barely suffered
	Unknown    = "unknown"    // no throughput history before the collapse to compare with
)

// LossRule says what counts as a cwnd collapse and when one is penalizing.
//
// papers/002 (I2V over 802.11g) names a loss "penalizing" when the cwnd
// collapse hits throughput (their slow drive: 10 and 7 Mbit/s lost out of
// ≈ 17 Mbit/s, i.e. 40–60 %, cwnd rebuilt in 2.11 s at SRTT ≈ 25 ms) and
// "moderate" when it does not (cwnd rebuilt in 1.57 s at SRTT ≈ 2 ms, "no
// substantial throughput degradation"), and observes that the SRTT at the time
// of loss decides which. **[interpretation]** The paper gives no numeric
// rule, so we classify by the effect the paper names — the relative
// throughput deficit while cwnd is rebuilt — and report the SRTT at the time
// of loss next to it, so that the paper's explanation can be checked rather
// than assumed.
type LossRule struct {
	// CollapseCwnd: a drop to at most this many segments is a collapse (the
	// paper's "down to 1"; Linux's loss window is 1, after recovery 2).
	CollapseCwnd uint32
	// CollapseRatio: a drop to at most this fraction of the previous sample
	// is a collapse (a multiplicative decrease of 50 % or more in one sample).
	CollapseRatio float64
	// PreWindowS: seconds before the collapse over which the reference
	// throughput is measured.
	PreWindowS float64
	// PenalizingDeficit: a relative throughput deficit (1 − during/before) at
	// or above this makes the event penalizing.
	PenalizingDeficit float64
}

// DefaultLossRule: collapse to ≤ 2 segments or by ≥ 50 % in one sample, 1 s of
// reference throughput, penalizing from a 30 % deficit **[interpretation]**:
// below the paper's penalizing 40–60 %, well above noise between samples.
func DefaultLossRule() LossRule {
	return LossRule{CollapseCwnd: 2, CollapseRatio: 0.5, PreWindowS: 1, PenalizingDeficit: 0.3}
}

// LossEvent is one cwnd collapse caused by loss.
type LossEvent struct {
	Flow       FlowKey
	T          float64 // time of the first sample that shows the collapse
	CwndBefore uint32  // cwnd at the sample before: the level to rebuild to
	CwndAfter  uint32
	CAState    uint8         // CA state at the collapse sample
	SRTT       time.Duration // SRTT at the sample before the collapse ("at the time of loss")
	MinRTT     time.Duration
	// Rebuilt is true when cwnd got back to CwndBefore; RebuildS is then the
	// time from T until it did (NaN otherwise). The rebuild window ends at
	// EndT: when cwnd is rebuilt, at the next collapse, or at the series end.
	Rebuilt  bool
	RebuildS float64
	EndT     float64
	// Throughput from bytes_acked, Mbit/s: over PreWindowS before the
	// collapse, and from the sample before the collapse to EndT.
	PreMbps, DuringMbps float64
	// DeficitMbps = max(0, PreMbps − DuringMbps); DeficitMB is the data not
	// delivered compared with PreMbps over the window, in megabytes.
	DeficitMbps float64
	DeficitMB   float64
	Class       string // Penalizing, Moderate or Unknown
}

// RelativeDeficit is DeficitMbps / PreMbps (NaN when PreMbps is 0 or unknown).
func (e LossEvent) RelativeDeficit() float64 {
	if !(e.PreMbps > 0) {
		return math.NaN()
	}
	return e.DeficitMbps / e.PreMbps
}

// isCollapse reports whether the step from a to b is a loss-driven cwnd collapse:
// cwnd falls to ≤ CollapseCwnd (from above it) or to ≤ CollapseRatio of its
// previous value, and the flow shows loss — CA state Recovery or Loss at b, or
// retransmissions since a. The loss evidence keeps out decreases that are not
// losses: a cooperative upper bound being lowered, idle restarts, CWR (ECN).
func (r LossRule) isCollapse(a, b Sample) bool {
	if b.Cwnd >= a.Cwnd {
		return false
	}
	drop := (b.Cwnd <= r.CollapseCwnd && a.Cwnd > r.CollapseCwnd) ||
		float64(b.Cwnd) <= r.CollapseRatio*float64(a.Cwnd)
	loss := b.CAState == 3 || b.CAState == 4 || b.TotalRetrans > a.TotalRetrans
	return drop && loss
}

// LossEvents finds and classifies every loss-driven cwnd collapse of one
// flow. Samples must be sorted by time.
func LossEvents(s Series, r LossRule) []LossEvent {
	smp := s.Samples
	var idx []int
	for i := 1; i < len(smp); i++ {
		if r.isCollapse(smp[i-1], smp[i]) {
			idx = append(idx, i)
		}
	}
	out := make([]LossEvent, 0, len(idx))
	for k, i := range idx {
		before, at := smp[i-1], smp[i]
		ev := LossEvent{
			Flow: s.Key, T: at.T, CwndBefore: before.Cwnd, CwndAfter: at.Cwnd,
			CAState: at.CAState, SRTT: before.SRTT, MinRTT: before.MinRTT,
			RebuildS: math.NaN(),
		}
		limit := len(smp) - 1 // last index the window may reach
		if k+1 < len(idx) {
			limit = idx[k+1]
		}
		end := limit
		for j := i + 1; j <= limit; j++ {
			if smp[j].Cwnd >= before.Cwnd {
				ev.Rebuilt, ev.RebuildS, end = true, smp[j].T-at.T, j
				break
			}
		}
		ev.EndT = smp[end].T
		ev.PreMbps = ackedRate(smp, preStart(smp, i-1, r.PreWindowS), i-1)
		ev.DuringMbps = ackedRate(smp, i-1, end)
		switch {
		case math.IsNaN(ev.PreMbps):
			ev.Class = Unknown
			ev.DeficitMbps, ev.DeficitMB = math.NaN(), math.NaN()
		default:
			ev.DeficitMbps = math.Max(0, ev.PreMbps-ev.DuringMbps)
			ev.DeficitMB = ev.DeficitMbps * (ev.EndT - before.T) / 8
			ev.Class = Moderate
			if ev.PreMbps > 0 && ev.DeficitMbps >= r.PenalizingDeficit*ev.PreMbps {
				ev.Class = Penalizing
			}
		}
		out = append(out, ev)
	}
	return out
}

// preStart returns the first index a ≤ i with T[a] ≥ T[i] − window.
func preStart(smp []Sample, i int, window float64) int {
	a := i
	for a > 0 && smp[a-1].T >= smp[i].T-window-1e-9 {
		a--
	}
	return a
}

// ackedRate is the bytes_acked rate in Mbit/s between samples a and b (NaN if b ≤ a in time).
func ackedRate(smp []Sample, a, b int) float64 {
	if b <= a || smp[b].T <= smp[a].T {
		return math.NaN()
	}
	var d float64
	if smp[b].BytesAcked >= smp[a].BytesAcked {
		d = float64(smp[b].BytesAcked - smp[a].BytesAcked)
	}
	return d * 8 / (smp[b].T - smp[a].T) / 1e6
}

// LossClassStats summarizes the loss events of one class.
type LossClassStats struct {
	Class             string
	Count             int
	Rebuilt           int     // events whose cwnd got back to its pre-loss level
	MedianSRTTms      float64 // SRTT at the time of loss
	MedianRebuildS    float64 // over rebuilt events
	MedianDeficitMbps float64
	MedianRelDeficit  float64 // deficit / throughput before
}

// SummarizeLossEvents returns one LossClassStats per class present, in the
// order penalizing, moderate, unknown (medians NaN when nothing to take them of).
func SummarizeLossEvents(events []LossEvent) []LossClassStats {
	var out []LossClassStats
	for _, class := range []string{Penalizing, Moderate, Unknown} {
		st := LossClassStats{Class: class}
		var srtt, rebuild, deficit, rel []float64
		for _, e := range events {
			if e.Class != class {
				continue
			}
			st.Count++
			srtt = append(srtt, float64(e.SRTT.Microseconds())/1000)
			if e.Rebuilt {
				st.Rebuilt++
				rebuild = append(rebuild, e.RebuildS)
			}
			if !math.IsNaN(e.DeficitMbps) {
				deficit = append(deficit, e.DeficitMbps)
			}
			if r := e.RelativeDeficit(); !math.IsNaN(r) {
				rel = append(rel, r)
			}
		}
		if st.Count == 0 {
			continue
		}
		st.MedianSRTTms, st.MedianRebuildS = Percentile(srtt, 50), Percentile(rebuild, 50)
		st.MedianDeficitMbps, st.MedianRelDeficit = Percentile(deficit, 50), Percentile(rel, 50)
		out = append(out, st)
	}
	return out
}
