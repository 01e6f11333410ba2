// Package bianchi implements Bianchi's analytic model of the 802.11 DCF in
// saturation (G. Bianchi, "Performance Analysis of the IEEE 802.11 Distributed
// Coordination Function", IEEE JSAC 18(3), 2000): the fixed point of the
// transmission probability τ and the conditional collision probability p,
// and the saturation throughput with basic access. It is pure math: the
// emulator's DCF is validated against it.
package bianchi

import (
	"fmt"
	"math"

	"github.com/coopcc/coopcc/emu/phy"
)

// Tau is Bianchi's eq. (7) for the transmission probability in a random slot
// given the conditional collision probability p, with W = CWmin+1 and m
// backoff stages (CWmax+1 = 2^m W). It is written in the paper's equivalent
// sum form τ = 2 / (1 + W + pW Σ_{k=0}^{m-1} (2p)^k), which has no 0/0 at p = 1/2.
func Tau(p float64, w, m int) float64 {
	sum, term := 0.0, 1.0
	for k := 0; k < m; k++ {
		sum += term
		term *= 2 * p
	}
	W := float64(w)
	return 2 / (1 + W + p*W*sum)
}

// Solve finds the fixed point of eqs. (7) and (9): τ = Tau(p), p = 1 − (1 − τ)^(n−1),
// by bisection on p (p − (1 − (1 − Tau(p))^(n−1)) is increasing in p, so the root is unique).
func Solve(n, w, m int) (tau, p float64) {
	if n <= 1 {
		return Tau(0, w, m), 0
	}
	f := func(p float64) float64 { return p - (1 - math.Pow(1-Tau(p, w, m), float64(n-1))) }
	lo, hi := 0.0, 1.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	p = (lo + hi) / 2
	return Tau(p, w, m), p
}

// Stages returns m such that CWmax+1 = 2^m (CWmin+1).
func Stages(cwMin, cwMax int) int {
	return int(math.Round(math.Log2(float64(cwMax+1) / float64(cwMin+1))))
}

// Result is the model's answer for n saturated stations.
type Result struct {
	N          int
	Tau, P     float64 // transmission probability per slot, conditional collision probability
	Ptr, Ps    float64 // P(at least one transmission in a slot), P(success | transmission)
	SlotS      float64 // mean duration of a virtual slot (s)
	Throughput float64 // payload bits per second (eq. 13)
}

// Throughput evaluates eq. (13): S = Ps Ptr E[P] / ((1−Ptr)σ + Ptr Ps Ts + Ptr (1−Ps) Tc),
// with σ the slot, Ts/Tc the busy times of a success/collision (seconds, each
// including the DIFS that follows it) and payloadBits per success.
func Throughput(n, w, m int, sigma, ts, tc, payloadBits float64) Result {
	tau, p := Solve(n, w, m)
	ptr := 1 - math.Pow(1-tau, float64(n))
	ps := float64(n) * tau * math.Pow(1-tau, float64(n-1)) / ptr
	slot := (1-ptr)*sigma + ptr*ps*ts + ptr*(1-ps)*tc
	return Result{N: n, Tau: tau, P: p, Ptr: ptr, Ps: ps, SlotS: slot, Throughput: ps * ptr * payloadBits / slot}
}

// Times returns Ts and Tc (seconds) for basic access with the preset: a data
// PPDU of `frames` MPDUs carrying msdu-byte MSDUs at the preset's data rate.
// Ts = DIFS + data + SIFS + ACK; Tc = DIFS + data + ACK timeout
// **[interpretation]**: Bianchi's Tc = H + E[P*] + DIFS + δ; the station
// learns of the collision only when its ACK timeout expires, so the emulator and
// this model both charge the ACK timeout (propagation delay δ is 0).
func Times(p phy.Preset, msdu, frames int) (ts, tc float64) {
	mpdus := make([]int, frames)
	for i := range mpdus {
		mpdus[i] = p.MPDUBytes(msdu)
	}
	data := p.DataTime(0, mpdus...)
	difs := p.DIFS()
	return float64(difs+p.SuccessTime(data)) / 1e9, float64(difs+p.FailTime(data)) / 1e9
}

// Saturation is the model for n saturated stations of the preset sending
// msdu-byte packets, frames per transmission (1 without aggregation); the
// throughput counts MSDU bits.
func Saturation(p phy.Preset, n, msdu, frames int) (Result, error) {
	if n < 1 || msdu < 1 || frames < 1 {
		return Result{}, fmt.Errorf("bianchi: need n, msdu and frames >= 1 (got %d, %d, %d)", n, msdu, frames)
	}
	ts, tc := Times(p, msdu, frames)
	return Throughput(n, p.CWMin+1, Stages(p.CWMin, p.CWMax), float64(p.Slot)/1e9, ts, tc, float64(8*msdu*frames)), nil
}

// TCPUploadCeiling predicts the aggregate TCP goodput (payload bits/s) of
// nSTA stations uploading through the AP with delayed ACKs: every ackEvery
// data segments (mss payload bytes, headerBytes of IP+TCP headers) the
// receiver sends one ACK packet (headerBytes), which the AP transmits.
// **[interpretation]** The model treats the nSTA stations and the AP as
// nSTA+1 saturated contenders (Bianchi's τ, p, idle and collision statistics
// for n = nSTA+1). DCF gives every contender the same share of successes, so
// the AP sends one frame per max(ackEvery, nSTA) data frames: exactly what
// delayed ACKs need when nSTA <= ackEvery; for more stations the AP's queue
// fills and the ACKs that get through are cumulative (thinned), so the data
// frames' share grows to nSTA/(nSTA+1).
func TCPUploadCeiling(p phy.Preset, nSTA, mss, headerBytes, ackEvery int) (float64, error) {
	if nSTA < 1 || mss < 1 || ackEvery < 1 {
		return 0, fmt.Errorf("bianchi: need stations, mss and ackEvery >= 1")
	}
	n := nSTA + 1
	tsData, tcData := Times(p, mss+headerBytes, 1)
	tsAck, _ := Times(p, headerBytes, 1)
	r := Throughput(n, p.CWMin+1, Stages(p.CWMin, p.CWMax), float64(p.Slot)/1e9, tsData, tcData, 0)
	k := float64(max(ackEvery, nSTA))
	ts := (k*tsData + tsAck) / (k + 1)
	slot := (1-r.Ptr)*float64(p.Slot)/1e9 + r.Ptr*r.Ps*ts + r.Ptr*(1-r.Ps)*tcData
	perSuccess := slot / (r.Ptr * r.Ps)
	return k / (k + 1) * float64(8*mss) / perSuccess, nil
}
