package agent

import (
	"errors"
	"net/netip"
	"time"
)

// Downloads. A terminal bounds what it receives by the window it advertises
// (datapath.OpenReceive): the policy sees each download as one of the
// terminal's flows, keyed by the remote sender's address, with the receive
// rate and the receive-side RTT, so uploads and downloads of one terminal
// share one budget of the medium; the bounds the policy returns for a
// remote address are applied to both sides (bothSides).

// flowTick is what the agent measured of a flow between two ticks.
type flowTick struct {
	Rate   float64       // bytes/s received since the previous tick; 0 = not downloading
	MinRTT time.Duration // smallest receive-side RTT seen on the flow
	// Acked is the upload goodput: bytes/s the remote acknowledged since the
	// previous tick (tcpi_bytes_acked). Known is false for a flow seen for
	// the first time, which has no rate yet.
	Acked float64
	Known bool
}

// flowTicks follows the bytes received and acknowledged on each flow between
// ticks (by socket cookie) and the smallest receive-side RTT each one
// reported.
type flowTicks struct {
	prev, next map[uint64]tickSample
}

type tickSample struct {
	t           time.Time
	rcvd, acked uint64
	minRTT      time.Duration
}

func newFlowTicks() *flowTicks {
	return &flowTicks{prev: map[uint64]tickSample{}, next: map[uint64]tickSample{}}
}

// observe returns, per flow (same index), what it did since the previous
// tick. A flow is downloading when it is not uploading (isActive) and
// received bytes since the previous tick.
func (d *flowTicks) observe(now time.Time, flows []Flow) []flowTick {
	out := make([]flowTick, len(flows))
	clear(d.next)
	for i, f := range flows {
		s := tickSample{t: now, rcvd: f.BytesReceived, acked: f.BytesAcked, minRTT: f.RcvRTT}
		if p, ok := d.prev[f.Cookie]; ok {
			if p.minRTT > 0 && (s.minRTT == 0 || p.minRTT < s.minRTT) {
				s.minRTT = p.minRTT
			}
			if dt := now.Sub(p.t).Seconds(); dt > 0 {
				if f.BytesReceived > p.rcvd && !isActive(f) {
					out[i].Rate = float64(f.BytesReceived-p.rcvd) / dt
				}
				if f.BytesAcked >= p.acked {
					out[i].Acked, out[i].Known = float64(f.BytesAcked-p.acked)/dt, true
				}
			}
		}
		out[i].MinRTT = s.minRTT
		d.next[f.Cookie] = s
	}
	d.prev, d.next = d.next, d.prev
	return out
}

// uploadRate is an active upload's delivery rate as the policy and the peers
// see it: the goodput since the previous tick. TCP_INFO's delivery_rate is
// one sample of the last round trip, and where the AP sends ACKs in
// aggregates (802.11n/ac block acks) those samples run to several times what
// the medium can carry (270 Mbit/s reported on a 140 Mbit/s medium in the
// lab), which moved coop's capacity estimate tick by tick. A flow's first
// tick has no goodput yet: its delivery_rate stands in.
func uploadRate(f Flow, t flowTick) float64 {
	if t.Known {
		return t.Acked
	}
	return float64(f.DeliveryRate)
}

// downloadView is the policy's view of a download: the remote sender as
// destination, what it has in flight towards us (receive rate × receive
// RTT) as its cwnd, the receive-side RTT as its SRTT (it includes the AP's
// downlink queue) and the smaller of the handshake's RTT and the receive
// side's smallest as its base RTT.
//
// pathMin is the smallest min RTT of any flow to the same remote address
// (pathMinRTT): a download's own handshake may have waited behind other
// terminals' downloads already filling the AP's queue, while the control
// connection that came first saw the empty path.
func downloadView(f Flow, d flowTick, pathMin time.Duration) FlowView {
	mss := f.RcvMSS
	if mss == 0 {
		mss = f.MSS
	}
	srtt := f.RcvRTT
	if srtt == 0 {
		srtt = f.SRTT
	}
	base := f.MinRTT
	for _, m := range []time.Duration{d.MinRTT, pathMin} {
		if m > 0 && (base == 0 || m < base) {
			base = m
		}
	}
	// The sender's window is what it has in flight towards this host:
	// the receive rate over the receive RTT. (The advertised window is the
	// bound itself, so a policy comparing windows with bounds would never
	// see a sender that does not fill them.)
	var cwnd uint32
	if mss > 0 {
		cwnd = uint32(min(d.Rate*srtt.Seconds()/float64(mss)+0.5, 1e6))
	}
	return FlowView{Dst: f.Dst.Addr(), Cwnd: cwnd, MSS: mss, SRTT: srtt, MinRTT: base, DeliveryRate: d.Rate, Download: true}
}

// pathMinRTT is the smallest min RTT seen by any flow, per remote address.
func pathMinRTT(flows []Flow) map[netip.Addr]time.Duration {
	out := map[netip.Addr]time.Duration{}
	for _, f := range flows {
		a := f.Dst.Addr()
		if m, ok := out[a]; f.MinRTT > 0 && (!ok || f.MinRTT < m) {
			out[a] = f.MinRTT
		}
	}
	return out
}

// bothSides applies every bound to the send side (cwnd of this terminal's
// uploads) and the receive side (windows advertised to remote senders) at
// once; the receive side takes Hi only (a receiver cannot make a sender
// send more). A bound meant for one direction is harmless on the other: an
// upload's receive side and a download's send side carry ACKs only.
type bothSides struct {
	send, recv Enforcer
}

func (b bothSides) Set(dst netip.Addr, bd DPBounds) error {
	if err := b.send.Set(dst, bd); err != nil {
		return err
	}
	return b.recv.Set(dst, DPBounds{Hi: bd.Hi})
}

func (b bothSides) Delete(dst netip.Addr) error {
	return errors.Join(b.send.Delete(dst), b.recv.Delete(dst))
}

func (b bothSides) Heartbeat() error {
	return errors.Join(b.send.Heartbeat(), b.recv.Heartbeat())
}

// Counters adds the receive side's clamp counts to the send side's hi hits.
func (b bothSides) Counters() (map[netip.Addr]DPCounters, error) {
	out, err := b.send.Counters()
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[netip.Addr]DPCounters{}
	}
	rc, err := b.recv.Counters()
	if err != nil {
		return nil, err
	}
	for d, c := range rc {
		o := out[d]
		o.HiApplied += c.HiApplied
		out[d] = o
	}
	return out, nil
}

// Backend names both: e.g. "struct_ops+rcvwnd".
func (b bothSides) Backend() string { return b.send.Backend() + "+" + b.recv.Backend() }

func (b bothSides) Close() error { return errors.Join(b.send.Close(), b.recv.Close()) }
