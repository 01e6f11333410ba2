package policy

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"
)

// static applies Params.StaticLo/StaticHi to every flow, host-wide.
type static struct{ p Params }

func (s *static) Name() string { return "static" }

func (s *static) Decide(View) Decision {
	b := Bounds{Lo: s.p.StaticLo, Hi: s.p.StaticHi}
	if b == (Bounds{}) {
		return Decision{Reason: "static: no bounds configured"}
	}
	return Decision{Active: true, Default: b, Reason: fmt.Sprintf("static: lo %d hi %d", b.Lo, b.Hi)}
}

// hirai2013 is papers/004 §III-B/§IV-B: only the maximum cwnd is set,
//
//	ideal cwnd = (BDP − α) / (segment size × N),  BDP = bandwidth × RTT,
//
// bandwidth 20 Mbit/s (the practical 802.11g rate; Params.BWmax overrides),
// α a margin (Params.Alpha, bytes, default 0: the paper gives no value), N the
// number of terminals communicating (ActiveTerminals). RTT is the flow's min
// RTT **[interpretation: the paper's RTT is the path's (emulated) delay, i.e.
// the base RTT; SRTT is used only if min RTT is unknown]**. The segment size
// is the flow's MSS (Params.MSS if the flow reports none). Bounds are
// recomputed every Params.HiraiInterval (10 s, "the number of mobile hosts
// changes less often") or at once when a new destination appears.
type hirai2013 struct {
	p    Params
	tick cadence
	last Decision
}

func (h *hirai2013) Name() string { return "hirai2013" }

func (h *hirai2013) bandwidth() float64 {
	if h.p.BWmax > 0 {
		return h.p.BWmax
	}
	return 20e6
}

func (h *hirai2013) Decide(v View) Decision {
	gs := groupByDst(v.Flows, h.p.MSS)
	if len(gs) == 0 {
		h.tick = cadence{}
		h.last = Decision{}
		return Decision{Reason: "hirai2013: no flows"}
	}
	if eval, _ := h.tick.due(v.Now, h.p.HiraiInterval, gs); !eval {
		return copyDecision(h.last)
	}
	n := ActiveTerminals(v.Peers)
	bw := h.bandwidth()
	per := map[netip.Addr]Bounds{}
	var why []string
	for _, g := range gs {
		rtt := g.MinRTT
		if rtt <= 0 {
			rtt = g.SRTT
		}
		if rtt <= 0 {
			per[g.Dst] = Bounds{}
			why = append(why, fmt.Sprintf("%s: rtt unknown, no bound", dstName(g.Dst)))
			continue
		}
		bdp := bw / 8 * rtt.Seconds()
		hi := HiraiCwnd(bw, rtt, h.p.Alpha, g.MSS, n)
		per[g.Dst] = Bounds{Hi: hi}
		why = append(why, fmt.Sprintf("%s: (BDP %.0f B − α %.0f B)/(MSS %d × N %d) = %d", dstName(g.Dst), bdp, h.p.Alpha, g.MSS, n, hi))
	}
	h.last = decision(per, fmt.Sprintf("hirai2013: bw %.3g bit/s; %s", bw, strings.Join(why, "; ")))
	return copyDecision(h.last)
}

// HiraiCwnd is papers/004's ideal cwnd = (BDP − α)/(MSS × N), BDP =
// bandwidth (bit/s) × rtt, rounded down and at least 1 segment.
func HiraiCwnd(bandwidth float64, rtt time.Duration, alpha float64, mss uint32, n int) uint32 {
	if mss == 0 {
		mss = 1448
	}
	if n < 1 {
		n = 1
	}
	bdp := bandwidth / 8 * rtt.Seconds()
	return max(1, toSegments((bdp-alpha)/(float64(mss)*float64(n))))
}

// Hayakawa2015 tables (papers/000 §5.3), transcribed from the paper's text.
// Each row is {max, min}. Table 2 is indexed by N-1 (N = 1..10; N > 10 uses
// the N = 10 row **[interpretation: the paper stops at 10 terminals]**).
var (
	hayakawaTable2A = [10][2]uint32{{90, 80}, {80, 60}, {60, 50}, {40, 30}, {25, 20}, {20, 10}, {12, 8}, {8, 5}, {7, 3}, {4, 2}}
	hayakawaTable2B = [10][2]uint32{{555, 250}, {400, 300}, {300, 200}, {200, 120}, {65, 40}, {55, 30}, {39, 20}, {28, 15}, {24, 10}, {17, 5}}
)

// hayakawaRow is one row of Table 3: from ratio_rtt From upwards, {Max, Min}.
type hayakawaRow struct {
	From     float64
	Max, Min uint32
}

var (
	hayakawaTable3A = []hayakawaRow{{1, 100, 80}, {10, 80, 60}, {15, 60, 50}, {20, 50, 40}, {25, 40, 30}, {30, 30, 20}, {35, 20, 10}, {40, 10, 5}, {45, 4, 3}, {50, 3, 2}}
	hayakawaTable3B = []hayakawaRow{{1, 555, 300}, {2, 300, 100}, {3, 100, 20}, {4, 10, 5}, {5, 8, 4}, {6, 6, 3}, {7, 5, 3}, {8, 4, 2}, {9, 3, 2}, {10, 2, 1}}
)

// HayakawaPhaseA reports whether min_rtt puts a flow in phase A (0 ≤ min_rtt
// < 100 ms) rather than B (min_rtt ≥ 100 ms). An unknown (zero) min RTT is
// phase A.
func HayakawaPhaseA(minRTT time.Duration) bool { return minRTT < 100*time.Millisecond }

// HayakawaTable2 looks up Table 2 ("control parameters in the number of
// terminals"): (max, min) for N terminals in the given phase.
func HayakawaTable2(n int, phaseA bool) (maxCwnd, minCwnd uint32) {
	n = min(max(n, 1), 10)
	t := hayakawaTable2B
	if phaseA {
		t = hayakawaTable2A
	}
	return t[n-1][0], t[n-1][1]
}

// HayakawaTable3 looks up Table 3 ("control parameters in ratio_rtt"): the
// last row whose lower edge is ≤ ratio. Ratios below 1.0 (or NaN) use the
// first row **[interpretation: ratio_rtt < 1 cannot happen with a true
// minimum; the table starts at "1.0 ~"]**.
func HayakawaTable3(ratio float64, phaseA bool) (maxCwnd, minCwnd uint32) {
	t := hayakawaTable3B
	if phaseA {
		t = hayakawaTable3A
	}
	row := t[0]
	for _, r := range t {
		if ratio >= r.From {
			row = r
		}
	}
	return row.Max, row.Min
}

// Hayakawa2015Bounds is the paper's rule: the smaller max and the smaller min
// of the two lookups. The paper writes min_cwnd < tune_cwnd < max_cwnd; the
// datapath's bounds are inclusive, so Lo = min_cwnd and Hi = max_cwnd
// **[interpretation: one segment of difference at each edge]**. Because each
// table row has min ≤ max, Lo ≤ Hi always holds.
func Hayakawa2015Bounds(n int, minRTT time.Duration, ratio float64) Bounds {
	a := HayakawaPhaseA(minRTT)
	tMax, tMin := HayakawaTable2(n, a)
	rMax, rMin := HayakawaTable3(ratio, a)
	return Bounds{Lo: min(tMin, rMin), Hi: min(tMax, rMax)}
}

// hayakawa2015 is papers/000 §4–§5.3: tables 2 and 3, phases A/B, checked
// every Params.EvalInterval (0.5 s).
type hayakawa2015 struct {
	p    Params
	tick cadence
	last Decision
}

func (h *hayakawa2015) Name() string { return "hayakawa2015" }

func (h *hayakawa2015) Decide(v View) Decision {
	gs := groupByDst(v.Flows, h.p.MSS)
	if len(gs) == 0 {
		h.tick = cadence{}
		h.last = Decision{}
		return Decision{Reason: "hayakawa2015: no flows"}
	}
	if eval, _ := h.tick.due(v.Now, h.p.EvalInterval, gs); !eval {
		return copyDecision(h.last)
	}
	n := ActiveTerminals(v.Peers)
	per := map[netip.Addr]Bounds{}
	var why []string
	for _, g := range gs {
		a := HayakawaPhaseA(g.MinRTT)
		phase := "B"
		if a {
			phase = "A"
		}
		tMax, tMin := HayakawaTable2(n, a)
		rMax, rMin := HayakawaTable3(g.Ratio, a)
		b := Hayakawa2015Bounds(n, g.MinRTT, g.Ratio)
		per[g.Dst] = b
		why = append(why, fmt.Sprintf("%s: phase %s (min_rtt %v), N %d → table2 %d/%d, ratio_rtt %.2f → table3 %d/%d; max %d min %d",
			dstName(g.Dst), phase, g.MinRTT, n, tMax, tMin, g.Ratio, rMax, rMin, b.Hi, b.Lo))
	}
	h.last = decision(per, "hayakawa2015: "+strings.Join(why, "; "))
	return copyDecision(h.last)
}

// Hayakawa2016Cwnd is papers/001 expressions (2)–(4):
//
//	Bandwidth = BWmax × N^(−e)   (e = 0.15)
//	ideal cwnd = Bandwidth × RTT / (segment size × N)
//
// with BWmax in bit/s, RTT the base (min) RTT and the segment size in bytes
// (the paper's "1.5 Kbyte", default 1500), rounded down, at least 1.
// **[interpretation: the extracted text of (4) reads "0.15f(number of
// terminals) = number of terminals"; the paper calls f monotonically
// decreasing, so f(N) = N^(−0.15). RTT is the base RTT.]**
func Hayakawa2016Cwnd(bwmax float64, n int, rtt time.Duration, segBytes, exponent float64) uint32 {
	if n < 1 {
		n = 1
	}
	if !(segBytes > 0) {
		segBytes = 1500
	}
	bw := bwmax * math.Pow(float64(n), -exponent)
	return max(1, toSegments(bw*rtt.Seconds()/(segBytes*8*float64(n))))
}

// hayakawa2016 is papers/001: the formula, off at start, on when ratio_rtt >
// 6.0, and while on cwnd 1 whenever ratio_rtt > 5.0; every 0.5 s.
//
// State is kept per destination **[interpretation: the paper has one upload
// per terminal]**. "Sets CWND to 1" is the bound {Lo 0, Hi 1}: the kernel's
// cwnd is clamped to 1 segment until ratio_rtt ≤ 5.0 again, when Hi returns to
// the formula. The paper never says when control switches off; here it stays
// on for as long as this terminal has flows to that destination and is
// forgotten (off again) when they are all gone **[interpretation]**.
type hayakawa2016 struct {
	p    Params
	tick cadence
	on   map[netip.Addr]bool
	last Decision
}

// MinHi lets the paper's "cwnd 1" through ClampDecision (papers/001).
func (h *hayakawa2016) MinHi() uint32 { return 1 }

func (h *hayakawa2016) Name() string { return "hayakawa2016" }

func (h *hayakawa2016) bwmax() float64 {
	if h.p.BWmax > 0 {
		return h.p.BWmax
	}
	return 19e6
}

func (h *hayakawa2016) Decide(v View) Decision {
	gs := groupByDst(v.Flows, h.p.MSS)
	if len(gs) == 0 {
		h.tick = cadence{}
		h.last = Decision{}
		clear(h.on)
		return Decision{Reason: "hayakawa2016: no flows"}
	}
	seen := map[netip.Addr]bool{}
	for _, g := range gs {
		seen[g.Dst] = true
	}
	for dst := range h.on {
		if !seen[dst] {
			delete(h.on, dst)
		}
	}
	if eval, _ := h.tick.due(v.Now, h.p.EvalInterval, gs); !eval {
		return copyDecision(h.last)
	}
	n := ActiveTerminals(v.Peers)
	per := map[netip.Addr]Bounds{}
	var why []string
	anyOn := false
	for _, g := range gs {
		if !h.on[g.Dst] && g.Ratio > h.p.Hayakawa2016On {
			h.on[g.Dst] = true
		}
		if !h.on[g.Dst] {
			per[g.Dst] = Bounds{}
			why = append(why, fmt.Sprintf("%s: off, ratio_rtt %.2f ≤ %.1f", dstName(g.Dst), g.Ratio, h.p.Hayakawa2016On))
			continue
		}
		anyOn = true
		if g.Ratio > h.p.Hayakawa2016Cut {
			per[g.Dst] = Bounds{Hi: 1}
			why = append(why, fmt.Sprintf("%s: on, ratio_rtt %.2f > %.1f → cwnd 1", dstName(g.Dst), g.Ratio, h.p.Hayakawa2016Cut))
			continue
		}
		rtt := g.MinRTT
		if rtt <= 0 {
			rtt = g.SRTT
		}
		if rtt <= 0 {
			per[g.Dst] = Bounds{}
			why = append(why, fmt.Sprintf("%s: on, rtt unknown, no bound", dstName(g.Dst)))
			continue
		}
		hi := Hayakawa2016Cwnd(h.bwmax(), n, rtt, h.p.SegmentBytes, h.p.Hayakawa2016Exponent)
		per[g.Dst] = Bounds{Hi: hi}
		why = append(why, fmt.Sprintf("%s: on, ratio_rtt %.2f → %.3g bit/s × %d^-%.2f × %v / (%.0f B × %d) = %d",
			dstName(g.Dst), g.Ratio, h.bwmax(), n, h.p.Hayakawa2016Exponent, rtt, h.p.SegmentBytes, n, hi))
	}
	reason := "hayakawa2016: " + strings.Join(why, "; ")
	if !anyOn {
		h.last = Decision{Reason: reason}
	} else {
		h.last = decision(per, reason)
	}
	return copyDecision(h.last)
}

// dstName prints a destination for reasons ("*" for the host-wide default).
func dstName(a netip.Addr) string {
	if !a.IsValid() {
		return "*"
	}
	return a.String()
}
