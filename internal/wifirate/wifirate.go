// Package wifirate reads the transmit bitrate of a Wi-Fi interface from
// nl80211 (generic netlink): what `iw dev DEV station dump` prints as "tx
// bitrate"; and its airtime counters (Airtime): the in-use channel's time
// and busy time of `iw dev DEV survey dump`, the station's "tx duration"
// and "rx duration".
//
// It exists because a cfg80211 Wi-Fi interface reports no ethtool link
// speed (internal/linkspeed gets EOPNOTSUPP there): its driver keeps the
// rate its rate control sends at in nl80211's station info. The agent reads
// ethtool first — the lab's emulator sets a station TAP's link speed to its
// PHY rate — and this package when ethtool has none, so that the medium's
// rate reaches the policy on real hardware too.
//
// A Reader resolves the "nl80211" family once (CTRL_CMD_GETFAMILY), then
// asks for NL80211_CMD_GET_STATION with NLM_F_DUMP for the interface and
// takes NL80211_STA_INFO_TX_BITRATE from the reply: for a client
// (managed-mode) interface the one station, its AP; with several (an AP-mode
// interface), the station sent the most bytes. ErrNotWireless covers every
// "no rate to read": cfg80211 not loaded, an interface that is not a
// wireless one, a station interface that is not associated.
//
// A Reader's netlink sockets act on the interfaces of the network namespace
// they were created in (Open), whichever thread uses them later: the
// interface name is looked up there, and nl80211 finds the interface in the
// socket's namespace.
package wifirate

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrNotWireless: there is no nl80211 transmit bitrate to read for the
// interface — the nl80211 family is absent (cfg80211 not loaded), the
// interface is not a wireless one (or its driver lists no stations), or it
// has no station with a bitrate (a client interface that is not
// associated). For Airtime likewise, and a radio with no survey (its driver
// keeps none) or no channel marked in use in it. Errors that say so wrap it
// (errors.Is).
var ErrNotWireless = errors.New("nothing to read from nl80211")

// ErrNoChannelTime: the driver reports a survey of the channel in use but
// not its NL80211_SURVEY_INFO_TIME or NL80211_SURVEY_INFO_TIME_BUSY (many
// drivers report only the noise level). Airtime's errors that say so wrap
// it, naming what is missing.
var ErrNoChannelTime = errors.New("no channel time in the nl80211 survey")

// ErrNoDurations: the driver reports the channel's times but the station
// lacks NL80211_STA_INFO_TX_DURATION or NL80211_STA_INFO_RX_DURATION.
// Airtime then returns the channel's Channel and Busy, Tx and Rx 0, with an
// error that wraps it, naming what is missing: the channel's busy share is
// there to use, the interface's own is not.
var ErrNoDurations = errors.New("no tx/rx duration in the nl80211 station info")

// familyName is the generic netlink family of cfg80211 (NL80211_GENL_NAME).
const familyName = "nl80211"

// timeout bounds each send and receive on the sockets: a reading must not
// hold up the agent's tick.
const timeout = 2 * time.Second

// Reader holds the netlink sockets and nl80211's family id. It is safe for
// concurrent use (calls are serialised).
type Reader struct {
	mu     sync.Mutex
	links  *netlink.Handle  // NETLINK_ROUTE (name → index), NETLINK_GENERIC (family lookup)
	genl   *nl.SocketHandle // NETLINK_GENERIC: the station dumps
	family uint16           // nl80211's id; 0 = not resolved yet
}

// Open creates a reader bound to the calling thread's network namespace.
// It succeeds without cfg80211 (the family is resolved at the first
// TxBitrate or Airtime, and again after it was found absent, so a Wi-Fi
// module loaded later is seen).
func Open() (*Reader, error) {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE, unix.NETLINK_GENERIC)
	if err != nil {
		return nil, fmt.Errorf("wifirate: netlink handle: %w", err)
	}
	if err := h.SetSocketTimeout(timeout); err != nil {
		h.Close()
		return nil, fmt.Errorf("wifirate: netlink timeout: %w", err)
	}
	s, err := nl.GetNetlinkSocketAt(netns.None(), netns.None(), unix.NETLINK_GENERIC)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("wifirate: generic netlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	_ = s.SetSendTimeout(&tv)    // never fails: stores the value
	_ = s.SetReceiveTimeout(&tv) // likewise
	return &Reader{links: h, genl: &nl.SocketHandle{Socket: s}}, nil
}

// Close releases the sockets. Calling it again does nothing.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.genl != nil {
		r.genl.Close()
		r.genl = nil
	}
	if r.links != nil {
		r.links.Close()
		r.links = nil
	}
	return nil
}

// TxBitrate returns the rate, in Mbit/s, at which the Wi-Fi interface
// ifname last transmitted to its station (for a client interface: its AP),
// as its driver reports it in nl80211's station info. It returns an error
// wrapping ErrNotWireless when there is none to read (see there), and other
// errors for a missing interface or a failed netlink exchange.
func (r *Reader) TxBitrate(ifname string) (float64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.genl == nil {
		return 0, errors.New("wifirate: reader is closed")
	}
	idx, err := r.ifindex(ifname)
	if err != nil {
		return 0, err
	}
	fam, err := r.familyID()
	if err != nil {
		return 0, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	msgs, err := r.dump(fam, cmdGetStation, idx)
	if err != nil {
		return 0, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	rate, err := txBitrate(msgs)
	if err != nil {
		return 0, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	return rate, nil
}

// Airtime reads ifname's cumulative airtime counters: Channel and Busy from
// the survey of the channel the radio is on (NL80211_CMD_GET_SURVEY, the
// entry with NL80211_SURVEY_INFO_IN_USE: NL80211_SURVEY_INFO_TIME and
// NL80211_SURVEY_INFO_TIME_BUSY, in milliseconds; BSSRx from
// NL80211_SURVEY_INFO_TIME_BSS_RX where the driver reports it), Tx and Rx from the
// station entry TxBitrate reads — for a client interface its AP; with
// several, the one sent the most bytes (NL80211_CMD_GET_STATION:
// NL80211_STA_INFO_TX_DURATION and NL80211_STA_INFO_RX_DURATION, in
// microseconds).
//
// The counters are cumulative since the driver started counting (a channel
// switch or a reassociation may restart them: airtime.Counters.Sub says so).
// A driver may report a duration it does not account, which stays 0.
//
// Errors: ErrNotWireless when there is nothing to read (not an nl80211
// interface, no survey or no channel in use in it, no station); one
// wrapping ErrNoChannelTime when the channel in use lacks its times; one
// wrapping ErrNoDurations, with Channel and Busy read and Tx and Rx 0, when
// the station lacks its durations; others for a missing interface, a
// failed netlink exchange or a reply that cannot be taken apart.
func (r *Reader) Airtime(ifname string) (airtime.Counters, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.genl == nil {
		return airtime.Counters{}, errors.New("wifirate: reader is closed")
	}
	idx, err := r.ifindex(ifname)
	if err != nil {
		return airtime.Counters{}, err
	}
	fam, err := r.familyID()
	if err != nil {
		return airtime.Counters{}, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	msgs, err := r.dump(fam, cmdGetSurvey, idx)
	if err != nil {
		return airtime.Counters{}, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	c, err := inUseSurvey(msgs)
	if err != nil {
		return airtime.Counters{}, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	if msgs, err = r.dump(fam, cmdGetStation, idx); err != nil {
		return airtime.Counters{}, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	if c, err = withStation(c, msgs); err != nil {
		return c, fmt.Errorf("wifirate: %s: %w", ifname, err)
	}
	return c, nil
}

// ifindex looks ifname up in the reader's namespace.
func (r *Reader) ifindex(ifname string) (int, error) {
	if ifname == "" {
		return 0, errors.New("wifirate: empty interface name")
	}
	l, err := r.links.LinkByName(ifname)
	if err != nil {
		return 0, fmt.Errorf("wifirate: interface %s: %w", ifname, err)
	}
	return l.Attrs().Index, nil
}

// familyID returns nl80211's generic netlink id, resolving it on the
// reader's own socket (netlink.GenlFamilyGet, the package-level function,
// would open a socket of its own in the calling thread's namespace).
func (r *Reader) familyID() (uint16, error) {
	if r.family != 0 {
		return r.family, nil
	}
	f, err := r.links.GenlFamilyGet(familyName)
	if errors.Is(err, unix.ENOENT) {
		return 0, fmt.Errorf("%w: no %s generic netlink family (cfg80211 not loaded)", ErrNotWireless, familyName)
	}
	if err != nil {
		return 0, fmt.Errorf("resolve the %s family: %w", familyName, err)
	}
	r.family = f.ID
	return r.family, nil
}

// dump sends cmd (NL80211_CMD_GET_STATION or NL80211_CMD_GET_SURVEY) with
// NLM_F_DUMP for the interface ifindex and returns the replies' generic
// netlink payloads.
func (r *Reader) dump(fam uint16, cmd uint8, ifindex int) ([][]byte, error) {
	what := "station"
	if cmd == cmdGetSurvey {
		what = "survey"
	}
	req := nl.NewNetlinkRequest(int(fam), unix.NLM_F_DUMP)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_GENERIC: r.genl}
	// struct genlmsghdr: cmd, version (nl80211 uses 0), reserved. Written
	// by hand: nl.Genlmsg is 2 bytes but serialises 4, reading past itself.
	req.AddRawData([]byte{cmd, 0, 0, 0})
	req.AddData(nl.NewRtAttr(attrIfindex, nl.Uint32Attr(uint32(ifindex))))
	msgs, err := req.Execute(unix.NETLINK_GENERIC, fam)
	switch {
	case err == nil, errors.Is(err, nl.ErrDumpInterrupted):
		// An interrupted dump may miss or repeat a station; each reply
		// is still whole.
		return msgs, nil
	case errors.Is(err, unix.ENODEV):
		// nl80211 finds no wireless device with this index.
		return nil, fmt.Errorf("%w: not a wireless interface (%w)", ErrNotWireless, err)
	case errors.Is(err, unix.EOPNOTSUPP):
		// Its driver does not list stations, or keeps no survey.
		return nil, fmt.Errorf("%w: the driver gives no %s dump (%w)", ErrNotWireless, what, err)
	case errors.Is(err, unix.ENOENT):
		// The family went away (cfg80211 unloaded); resolve it again
		// next time, its id may change.
		r.family = 0
		return nil, fmt.Errorf("%w: the %s family is gone (%w)", ErrNotWireless, familyName, err)
	}
	return nil, fmt.Errorf("%s dump: %w", what, err)
}
