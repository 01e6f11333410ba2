package analysis

import (
	"fmt"
	"math"

	"github.com/coopcc/coopcc/emu/phy"
)

// CapacityTolerance is how far a measured aggregate may exceed the physical
// ceiling before the run is refused: the goodput window's edges are
// interpolated between monitor samples (50 ms apart), which can shift a few
// per cent of one station's bytes into or out of a short window.
const CapacityTolerance = 0.03

// capacityMSDU is the largest MSDU the ceiling assumes: a 1500-byte IP packet.
const capacityMSDU = 1500

// Capacity returns the most payload the run's medium and wired pipe could
// carry, in Mbit/s: a physical ceiling, not an estimate. On the air it is one
// station alone on the channel at the fastest PHY rate of the run, sending
// the largest aggregate its preset allows, paying only what no DCF station
// can skip (DIFS, the mean post-backoff of CWmin/2 slots, the PPDU, SIFS and
// the ACK or BlockAck), and counting every MSDU byte, IP and TCP headers
// included, as payload; no contention, no collisions, no TCP ACKs from the
// AP. The wired pipe's rate (when set) bounds it too. ok is false when the
// run does not say which PHY it used (results written before run.json
// recorded it) and for runs on the veth backend, which emulates no medium.
func Capacity(info RunInfo) (mbps float64, ok bool, err error) {
	if info.WLAN.PHY == "" || info.Backend == "veth" {
		return 0, false, nil
	}
	p, err := phy.Lookup(info.WLAN.PHY)
	if err != nil {
		return 0, false, fmt.Errorf("capacity: %w", err)
	}
	rate := p.DataRateMbps
	if info.WLAN.DataMbps > 0 {
		rate = info.WLAN.DataMbps
	}
	for _, st := range info.Stations {
		rate = math.Max(rate, st.PHYMbps)
	}
	air := airCeilingMbps(p, rate, info.WLAN.AMPDUMax)
	if w := info.Wired.RateBps; w > 0 {
		air = math.Min(air, w/1e6)
	}
	return air, true, nil
}

// airCeilingMbps is one saturated station's MSDU throughput at rateMbps with
// the largest aggregate the preset allows (ampduMax > 0 lowers the frame
// limit, as the scenario key ampdu_max does).
func airCeilingMbps(p phy.Preset, rateMbps float64, ampduMax int) float64 {
	mpdu := p.MPDUBytes(capacityMSDU)
	frames := 1
	if p.AMPDU {
		frames = p.AMPDUMaxFrames
		if ampduMax > 0 && ampduMax < frames {
			frames = ampduMax
		}
		for frames > 1 && phy.AMPDUBytes(repeat(mpdu, frames)...) > p.MaxAMPDUBytes(rateMbps) {
			frames--
		}
	}
	data := p.DataTime(rateMbps, repeat(mpdu, frames)...)
	backoff := float64(p.CWMin) / 2 * float64(p.Slot)
	cycleNs := float64(p.DIFS()+p.SuccessTime(data)) + backoff
	return float64(8*capacityMSDU*frames) / cycleNs * 1e3 // bits per ns → Mbit/s
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
