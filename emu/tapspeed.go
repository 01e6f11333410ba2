package emu

import (
	"fmt"
	"io"
	"math"

	"github.com/coopcc/coopcc/internal/linkspeed"
	"github.com/coopcc/coopcc/internal/nsenter"
)

// speedSetter keeps each station TAP's link speed (ethtool, Mbit/s) at the
// PHY rate the engine reports for the station, as a Wi-Fi driver reports
// its tx bitrate. The engine's timing thread hands it rate snapshots with
// offer, which never blocks; one goroutine applies them.
type speedSetter struct {
	set  func(i int, mbps uint32) error // sets station i's speed
	last []uint32                       // per station: the speed last asked for (0: none)
	feed *feed[[]float64]

	// errTally's Errors counts failed sets and First is the first one;
	// read them after stop.
	errTally
}

// newSpeedSetter makes a setter for n stations; start starts its goroutine.
func newSpeedSetter(n int, set func(i int, mbps uint32) error, warn io.Writer) *speedSetter {
	return &speedSetter{set: set, last: make([]uint32, n), feed: newFeed[[]float64](), errTally: errTally{what: "link speed", warn: warn}}
}

// roundMbps is a rate as a link speed: the nearest whole Mbit/s, at least 1;
// 0 (nothing to set) for a rate ≤ 0, a station that delivered no frame yet.
func roundMbps(r float64) uint32 {
	if !(r > 0) {
		return 0
	}
	return uint32(max(math.Round(min(r, float64(linkspeed.Unknown-1))), 1))
}

// setOne sets station i's speed to rate r when its rounded value changed.
// A failed set is counted and not retried until the value changes again
// (a driver that refuses once refuses every time).
func (s *speedSetter) setOne(i int, r float64) {
	v := roundMbps(r)
	if v == 0 || v == s.last[i] {
		return
	}
	s.last[i] = v
	s.note(s.set(i, v))
}

// apply sets every station whose rounded rate changed.
func (s *speedSetter) apply(mbps []float64) {
	for i, r := range mbps {
		if i < len(s.last) {
			s.setOne(i, r)
		}
	}
}

// offer hands a copy of the snapshot to the goroutine (feed.offer).
func (s *speedSetter) offer(mbps []float64) { s.feed.offer(append([]float64(nil), mbps...)) }

// start runs the goroutine that applies the snapshots until stop.
func (s *speedSetter) start() { s.feed.start(s.apply) }

// stop ends the goroutine and waits for it (idempotent; only after start).
func (s *speedSetter) stop() { s.feed.stop() }

// openLinkSpeeds opens one linkspeed handle in each station's namespace
// (its socket stays bound there). On error the handles opened are closed.
func openLinkSpeeds(cfg Config) ([]*linkspeed.Handle, error) {
	hs := make([]*linkspeed.Handle, 0, len(cfg.Stations))
	for _, st := range cfg.Stations {
		var h *linkspeed.Handle
		err := nsenter.Do(st.Netns, func() (err error) {
			h, err = linkspeed.Open()
			return err
		})
		if err != nil {
			closeLinkSpeeds(hs)
			return nil, fmt.Errorf("station %s: link speed handle: %w", st.Name, err)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// closeLinkSpeeds closes the handles.
func closeLinkSpeeds(hs []*linkspeed.Handle) {
	for _, h := range hs {
		_ = h.Close()
	}
}
