// Package dcf is the shared 802.11 medium: the distributed coordination
// function (DCF, with 802.11e AIFS/CW per node) as event handlers on a
// des.Sim. Each node counts its random backoff down in idle slots, keeps the
// residual when the medium goes busy, transmits when it reaches zero;
// nodes reaching zero in the same slot collide. A failed attempt doubles CW
// up to CWmax; after RetryLimit attempts the frame is dropped. Airtime comes
// from a phy.Preset; with A-MPDU a transmission carries up to the preset's
// limit of frames to one receiver and is acknowledged by a BlockAck.
//
// The model follows Bianchi's assumptions where they are a choice: after
// every busy period (success or collision) all nodes wait AIFS (DIFS) before
// counting again (no EIFS), and counters decrement at every idle slot
// boundary including the one at which another node starts to transmit.
package dcf

import (
	"math"
	"math/rand/v2"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
	"github.com/coopcc/coopcc/emu/ratectl"
)

// Broadcast is the receiver id of a group-addressed frame.
const Broadcast = -1

// Frame is one MSDU waiting for or in transmission.
type Frame struct {
	MSDU     int    // bytes of the MSDU (the IP packet) for airtime
	To       int    // receiving node id, or Broadcast
	Data     []byte // the Ethernet frame (nil for synthetic traffic)
	Origin   int    // engine-defined: where the frame entered the emulator
	Enqueued des.Time
	attempts int
}

// Access is a node's channel-access parameters.
type Access struct {
	AIFSN        int // AIFS = SIFS + AIFSN slots; 2 = DIFS
	CWMin, CWMax int
	RetryLimit   int // attempts per frame
}

// Stats are a node's counters.
type Stats struct {
	Airtime    des.Time // medium time occupied by this node's attempts (data + ACK or ACK timeout)
	Attempts   uint64   // transmissions started
	Collisions uint64   // attempts that overlapped another node's
	Retries    uint64   // frame re-attempts after a failure
	RetryDrops uint64   // unicast frames dropped at the retry limit
	// BroadcastLost counts broadcast frames lost in a collision: they are
	// sent once, never retried (until 2026-11-25 they were in RetryDrops).
	BroadcastLost uint64
	QueueDrops    uint64 // frames refused by a full queue
	TxFrames      uint64 // frames delivered by this node
	TxBytes       uint64 // MSDU bytes delivered by this node
	RxFrames      uint64 // frames received by this node
	RxBytes       uint64
	FrameErrors   uint64 // frames lost to the frame error rate
	// ByRate counts the node's unicast attempts per PHY rate (Mbps).
	ByRate map[float64]*RateStats
	// AirtimeIn is the medium time of the unicast attempts addressed to
	// this node that did not collide (what nl80211 reports as the rx
	// duration of the frames from the node's peer).
	AirtimeIn des.Time
}

// Dropped is every frame the node lost on the medium or at its queue: queue
// drops, retry-limit drops and lost broadcasts.
func (s Stats) Dropped() uint64 { return s.QueueDrops + s.RetryDrops + s.BroadcastLost }

// RateStats is one PHY rate's share of a node's unicast transmissions.
type RateStats struct {
	Attempts  uint64   // attempts at this rate
	Successes uint64   // attempts acknowledged
	Frames    uint64   // MSDUs delivered by those attempts
	Airtime   des.Time // medium time of the attempts
}

func (s *Stats) rate(r float64) *RateStats {
	if s.ByRate == nil {
		s.ByRate = map[float64]*RateStats{}
	}
	rs := s.ByRate[r]
	if rs == nil {
		rs = &RateStats{}
		s.ByRate[r] = rs
	}
	return rs
}

// Node is a station or the AP.
type Node struct {
	ID       int
	Name     string
	IsAP     bool
	RateMbps float64 // PHY rate of this node's link (stations); 0 = preset default
	FER      float64 // frame error rate of this node's link, both directions
	// PER is the frame error rate of this node's link per PHY rate (Mbps),
	// both directions, on top of FER (independent); nil = none.
	PER map[float64]float64
	// Ctl returns the rate controller of this node's link to receiver `to`;
	// nil (or a nil result) keeps RateMbps and the retry limit: the
	// emulator's constant-rate behaviour.
	Ctl        func(to int) ratectl.Controller
	Associated bool
	Access     Access
	Q          Queue
	Stats      Stats

	pending []*Frame // frames of the current attempt series
	backoff int
	cw      int
	readyAt des.Time
}

// HasWork reports whether the node has a frame to send.
func (n *Node) HasWork() bool { return len(n.pending) > 0 || n.Q.Len() > 0 }

// Backlog is the number of frames held (queue + in transmission).
func (n *Node) Backlog() int { return len(n.pending) + n.Q.Len() }

// BacklogBytes is the MSDU bytes held (queue + in transmission).
func (n *Node) BacklogBytes() int {
	b := n.Q.Bytes()
	for _, f := range n.pending {
		b += f.MSDU
	}
	return b
}

// Medium is the shared channel.
type Medium struct {
	Sim   *des.Sim
	PHY   phy.Preset
	Rng   *rand.Rand
	Nodes []*Node

	// Deliver is called for every frame received without error, at the end of
	// the busy period: from sent f to `to` (for a broadcast, once per receiver).
	Deliver func(from *Node, f *Frame, to *Node)
	// Dropped is called for frames the MAC gives up on (retry limit, lost broadcast).
	Dropped func(from *Node, f *Frame)

	busy      bool
	idleStart des.Time
	txEv      *des.Event
	BusyTime  des.Time // total time the medium was busy
	txs       []*Node
}

// NewMedium returns an idle medium.
func NewMedium(sim *des.Sim, p phy.Preset, rng *rand.Rand) *Medium {
	return &Medium{Sim: sim, PHY: p, Rng: rng}
}

// DefaultAccess is DCF access for the preset (DIFS, CWmin, CWmax, retry limit).
func DefaultAccess(p phy.Preset) Access {
	return Access{AIFSN: 2, CWMin: p.CWMin, CWMax: p.CWMax, RetryLimit: p.RetryLimit}
}

// AddNode attaches a node; its backoff starts as a fresh draw from CWmin
// (post-backoff), so nodes do not all collide at time 0.
func (m *Medium) AddNode(n *Node) {
	n.ID = len(m.Nodes)
	n.cw = n.Access.CWMin
	n.backoff = m.Rng.IntN(n.cw + 1)
	n.readyAt = m.Sim.Now()
	m.Nodes = append(m.Nodes, n)
	m.reschedule()
}

// Enqueue offers f to n's queue and lets n contend. It returns false when the
// queue was full (counted as a queue drop).
func (m *Medium) Enqueue(n *Node, f *Frame) bool {
	had := n.HasWork()
	f.Enqueued = m.Sim.Now()
	if !n.Q.Push(f) {
		n.Stats.QueueDrops++
		return false
	}
	if !had {
		m.Wake(n)
	}
	return true
}

// Wake tells the medium that n has (or may have) a new head frame, e.g. after
// frames were put directly into its queue or it re-associated.
func (m *Medium) Wake(n *Node) {
	now := m.Sim.Now()
	// A frame that finds the medium busy and the backoff at zero must back off.
	if m.busy && n.backoff == 0 {
		n.backoff = m.Rng.IntN(n.cw + 1)
	}
	n.readyAt = now
	m.reschedule()
}

// Busy reports whether a transmission is in progress.
func (m *Medium) Busy() bool { return m.busy }

// accessTime is when n will transmit if the medium stays idle.
func (m *Medium) accessTime(n *Node) des.Time {
	t := m.idleStart + m.PHY.AIFS(n.Access.AIFSN) + des.Time(n.backoff)*m.PHY.Slot
	if t < n.readyAt {
		t = n.readyAt
	}
	return t
}

func (m *Medium) reschedule() {
	if m.busy {
		return
	}
	best := des.Time(math.MaxInt64)
	for _, n := range m.Nodes {
		if !n.Associated || !n.HasWork() {
			continue
		}
		if t := m.accessTime(n); t < best {
			best = t
		}
	}
	if m.txEv.Pending() {
		if m.txEv.At() == best {
			return
		}
		m.Sim.Cancel(m.txEv)
	}
	m.txEv = nil
	if best != math.MaxInt64 {
		m.txEv = m.Sim.At(best, m.startTx)
	}
}

// link returns the rate and FER of the link between from and node to: a
// link's parameters are those of its station end.
func (m *Medium) link(from *Node, to int) (float64, float64) {
	n := m.stationEnd(from, to)
	r := n.RateMbps
	if r <= 0 {
		r = m.PHY.DataRateMbps
	}
	return r, n.FER
}

// stationEnd is the node whose link parameters apply between from and to.
func (m *Medium) stationEnd(from *Node, to int) *Node {
	if from.IsAP && to >= 0 && to < len(m.Nodes) {
		return m.Nodes[to]
	}
	return from
}

func (m *Medium) mpdu(f *Frame) int { return m.PHY.MPDUBytes(f.MSDU) }

func (m *Medium) maxBytes(rate float64) int { return m.PHY.MaxAMPDUBytes(rate) }

func (m *Medium) startTx() {
	now := m.Sim.Now()
	m.txEv = nil
	m.busy = true
	m.txs = m.txs[:0]
	for _, n := range m.Nodes {
		transmits := n.Associated && n.HasWork() && m.accessTime(n) == now
		start := m.idleStart + m.PHY.AIFS(n.Access.AIFSN)
		if now >= start && n.backoff > 0 {
			el := int((now - start) / m.PHY.Slot)
			n.backoff = max(0, n.backoff-el)
		}
		if transmits {
			n.backoff = 0
			m.txs = append(m.txs, n)
		}
	}
	collision := len(m.txs) > 1
	var busy des.Time
	var out []delivery
	for _, n := range m.txs {
		m.fill(n)
		frames := n.pending
		n.Stats.Attempts++
		if collision {
			n.Stats.Collisions++
		}
		var occ des.Time
		if frames[0].To == Broadcast {
			occ = m.PHY.BroadcastTime(m.mpdu(frames[0]))
			out = m.broadcast(n, frames[0], collision, out)
		} else {
			var d *delivery
			occ, d = m.unicast(n, frames, collision)
			if d != nil {
				out = append(out, *d)
			}
			if to := frames[0].To; !collision && to >= 0 && to < len(m.Nodes) {
				m.Nodes[to].Stats.AirtimeIn += occ
			}
		}
		n.Stats.Airtime += occ
		busy = max(busy, occ)
	}
	m.BusyTime += busy
	m.Sim.After(busy, func() { m.endTx(out) })
}

// delivery is what a successful attempt hands to Deliver at the end of the busy period.
type delivery struct {
	from   *Node
	frames []*Frame
	to     []*Node
}

// fill loads the frames of n's next attempt: the retried ones, topped up with
// queued frames to the same receiver when aggregating.
func (m *Medium) fill(n *Node) {
	if len(n.pending) == 0 {
		maxFrames, maxB := 1, math.MaxInt
		if m.PHY.AMPDU {
			rate, _ := m.link(n, -1)
			maxFrames, maxB = m.PHY.AMPDUMaxFrames, m.maxBytes(rate)
		}
		n.pending = append(n.pending, n.Q.PopBatch(maxFrames, maxB, m.mpdu)...)
		return
	}
	to := n.pending[0].To
	if !m.PHY.AMPDU || to == Broadcast || len(n.pending) >= m.PHY.AMPDUMaxFrames {
		return
	}
	rate, _ := m.link(n, to)
	bytes := 0
	for _, f := range n.pending {
		bytes += m.mpdu(f)
	}
	n.pending = append(n.pending, n.Q.PopTo(to, m.PHY.AMPDUMaxFrames-len(n.pending), m.maxBytes(rate)-bytes, m.mpdu)...)
}

func (m *Medium) broadcast(n *Node, f *Frame, collision bool, out []delivery) []delivery {
	n.pending = n.pending[:0]
	m.resetCW(n)
	if collision {
		n.Stats.BroadcastLost++
		if m.Dropped != nil {
			m.Dropped(n, f)
		}
		return out
	}
	var rcv []*Node
	for _, r := range m.Nodes {
		if r == n || !r.Associated {
			continue
		}
		if r.FER > 0 && m.Rng.Float64() < r.FER {
			n.Stats.FrameErrors++
			continue
		}
		rcv = append(rcv, r)
	}
	n.Stats.TxFrames++
	n.Stats.TxBytes += uint64(f.MSDU)
	return append(out, delivery{from: n, frames: []*Frame{f}, to: rcv})
}

// unicast settles an acknowledged attempt: per-MPDU frame errors, CW update,
// retries and drops. It returns the node's medium occupancy.
func (m *Medium) unicast(n *Node, frames []*Frame, collision bool) (des.Time, *delivery) {
	to := frames[0].To
	rate, fer := m.link(n, to)
	var ctl ratectl.Controller
	if n.Ctl != nil {
		ctl = n.Ctl(to)
	}
	if ctl != nil {
		rate = ctl.Rate(m.Sim.Now(), frames[0].attempts)
	}
	if per := m.stationEnd(n, to).PER[rate]; per > 0 {
		fer = 1 - (1-fer)*(1-per)
	}
	sizes := make([]int, len(frames))
	for i, f := range frames {
		sizes[i] = m.mpdu(f)
	}
	data := m.PHY.DataTime(rate, sizes...)
	rcvOK := to >= 0 && to < len(m.Nodes) && m.Nodes[to].Associated
	var ok []*Frame
	failed := frames[:0:0]
	for _, f := range frames {
		if !collision && rcvOK && (fer <= 0 || m.Rng.Float64() >= fer) {
			ok = append(ok, f)
			continue
		}
		if !collision {
			n.Stats.FrameErrors++
		}
		failed = append(failed, f)
	}
	var occ des.Time
	if len(ok) > 0 {
		occ = m.PHY.SuccessTime(data)
		n.cw = n.Access.CWMin
	} else {
		occ = m.PHY.FailTime(data)
		n.cw = min(2*n.cw+1, n.Access.CWMax)
	}
	rs := n.Stats.rate(rate)
	rs.Attempts++
	rs.Airtime += occ
	if len(ok) > 0 {
		rs.Successes++
		rs.Frames += uint64(len(ok))
	}
	if ctl != nil {
		ctl.Report(m.Sim.Now()+occ, rate, len(ok) > 0)
	}
	n.pending = n.pending[:0]
	for _, f := range failed {
		f.attempts++
		if (ctl == nil && f.attempts >= n.Access.RetryLimit) || (ctl != nil && !ctl.Retry(f.attempts)) {
			n.Stats.RetryDrops++
			if m.Dropped != nil {
				m.Dropped(n, f)
			}
			continue
		}
		n.Stats.Retries++
		n.pending = append(n.pending, f)
	}
	if len(n.pending) == 0 {
		n.cw = n.Access.CWMin // success, or the series ended in a drop
	}
	n.backoff = m.Rng.IntN(n.cw + 1)
	if len(ok) == 0 {
		return occ, nil
	}
	for _, f := range ok {
		n.Stats.TxFrames++
		n.Stats.TxBytes += uint64(f.MSDU)
	}
	return occ, &delivery{from: n, frames: ok, to: []*Node{m.Nodes[to]}}
}

func (m *Medium) resetCW(n *Node) {
	n.cw = n.Access.CWMin
	n.backoff = m.Rng.IntN(n.cw + 1)
}

func (m *Medium) endTx(out []delivery) {
	m.busy = false
	m.idleStart = m.Sim.Now()
	for _, d := range out {
		for _, f := range d.frames {
			for _, r := range d.to {
				r.Stats.RxFrames++
				r.Stats.RxBytes += uint64(f.MSDU)
				if m.Deliver != nil {
					m.Deliver(d.from, f, r)
				}
			}
		}
	}
	m.reschedule()
}

// SetAssociated changes n's association. Leaving drops everything n holds and
// every frame the other nodes hold for it (returned, for accounting).
func (m *Medium) SetAssociated(n *Node, on bool) []*Frame {
	if n.Associated == on {
		return nil
	}
	n.Associated = on
	var gone []*Frame
	if !on {
		gone = append(gone, n.pending...)
		n.pending = n.pending[:0]
		for n.Q.Len() > 0 {
			gone = append(gone, n.Q.PopBatch(1<<30, math.MaxInt, m.mpdu)...)
		}
		for _, o := range m.Nodes {
			if o == n {
				continue
			}
			gone = append(gone, o.Q.Purge(n.ID)...)
			keep := o.pending[:0]
			for _, f := range o.pending {
				if f.To != n.ID {
					keep = append(keep, f)
				}
			}
			gone = append(gone, o.pending[len(keep):]...)
			o.pending = keep
		}
		m.resetCW(n)
	} else {
		n.readyAt = m.Sim.Now()
	}
	m.reschedule()
	return gone
}
