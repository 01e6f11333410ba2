package agent

import (
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// airMeter turns the WLAN interface's cumulative airtime counters into the
// last tick's interval (package airtime). A reading that failed, or counters
// that went backwards, leave the interval unknown until two good readings
// in a row.
type airMeter struct {
	prev airtime.Counters
	have bool             // prev is a good reading
	last airtime.Counters // the last interval (zero = unknown)
}

// observe records a reading (ok: it succeeded) and returns the interval
// since the one before (zero when unknown).
func (m *airMeter) observe(c airtime.Counters, ok bool) airtime.Counters {
	m.last = airtime.Counters{}
	if ok && m.have {
		if d, good := c.Sub(m.prev); good {
			m.last = d
		}
	}
	m.prev, m.have = c, ok
	return m.last
}

// readAirtime reads iface's airtime counters: from file when the
// configuration names one (monitor.airtime_file: the lab's emulator writes
// each station's there), else from Deps.Airtime (default: nl80211's survey
// and station durations, internal/wifirate). An interface with no counters
// (not Wi-Fi, a driver without survey times or durations) is an error: the
// tick's air is then unknown.
func (a *Agent) readAirtime(file, iface string) (airtime.Counters, error) {
	if file != "" {
		return airtime.ReadFile(file)
	}
	return a.deps.Airtime(iface)
}

// airStatus is an interval's counters as the peer status carries them
// (TLV 17): whole microseconds, the channel's at most maxChannel, the busy
// and own times at most the channel's.
func airStatus(c airtime.Counters, maxChannel uint32) (channel, busy, own uint32) {
	us := func(d time.Duration, limit uint32) uint32 {
		return uint32(min(max(d/time.Microsecond, 0), time.Duration(limit)))
	}
	channel = us(c.Channel, maxChannel)
	return channel, us(c.Busy, channel), us(c.Own(), channel)
}

// airShares is a peer's interval (TLV 17's microseconds) as shares of its
// channel time (zero when it reports none).
func airShares(channel, busy, own uint32) airtime.Shares {
	us := func(v uint32) time.Duration { return time.Duration(v) * time.Microsecond }
	return airtime.Counters{Channel: us(channel), Busy: us(busy), Tx: us(own)}.Shares()
}
