package wifirate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"golang.org/x/sys/unix"
)

// The nl80211 numbers this package uses, from include/uapi/linux/nl80211.h.
// golang.org/x/sys/unix carries them, generated from that header; the
// values are kernel ABI (the comments give them, parse_test.go checks them).
const (
	// NL80211_CMD_GET_STATION = 17 (enum nl80211_commands): with NLM_F_DUMP
	// and NL80211_ATTR_IFINDEX, one reply (NL80211_CMD_NEW_STATION) per
	// station the interface knows.
	cmdGetStation = unix.NL80211_CMD_GET_STATION
	// NL80211_ATTR_IFINDEX = 3 (enum nl80211_attrs), u32.
	attrIfindex = unix.NL80211_ATTR_IFINDEX
	// NL80211_ATTR_STA_INFO = 21 (enum nl80211_attrs), nested enum
	// nl80211_sta_info.
	attrStaInfo = unix.NL80211_ATTR_STA_INFO
	// NL80211_STA_INFO_TX_BYTES = 3 (enum nl80211_sta_info), u32: bytes
	// sent to the station, truncated to 32 bits.
	staInfoTxBytes = unix.NL80211_STA_INFO_TX_BYTES
	// NL80211_STA_INFO_TX_BITRATE = 8 (enum nl80211_sta_info), nested enum
	// nl80211_rate_info: the rate of the last frames sent to the station.
	staInfoTxBitrate = unix.NL80211_STA_INFO_TX_BITRATE
	// NL80211_STA_INFO_TX_BYTES64 = 24 (enum nl80211_sta_info), u64.
	staInfoTxBytes64 = unix.NL80211_STA_INFO_TX_BYTES64
	// NL80211_RATE_INFO_BITRATE = 1 (enum nl80211_rate_info), u16, units of
	// 100 kbit/s; left out by the kernel for rates of 6553.6 Mbit/s and up.
	rateInfoBitrate = unix.NL80211_RATE_INFO_BITRATE
	// NL80211_RATE_INFO_BITRATE32 = 5 (enum nl80211_rate_info), u32, units
	// of 100 kbit/s (Linux ≥ 3.7 sends it beside the 16-bit one).
	rateInfoBitrate32 = unix.NL80211_RATE_INFO_BITRATE32
	// NL80211_STA_INFO_RX_DURATION = 32 (enum nl80211_sta_info), u64,
	// microseconds: the air the frames received from the station took.
	staInfoRxDuration = unix.NL80211_STA_INFO_RX_DURATION
	// NL80211_STA_INFO_TX_DURATION = 39 (enum nl80211_sta_info), u64,
	// microseconds: the air the frames sent to the station took.
	staInfoTxDuration = unix.NL80211_STA_INFO_TX_DURATION

	// NL80211_CMD_GET_SURVEY = 50 (enum nl80211_commands): with NLM_F_DUMP
	// and NL80211_ATTR_IFINDEX, one reply (NL80211_CMD_NEW_SURVEY_RESULTS)
	// per channel of the interface's radio.
	cmdGetSurvey = unix.NL80211_CMD_GET_SURVEY
	// NL80211_ATTR_SURVEY_INFO = 84 (enum nl80211_attrs), nested enum
	// nl80211_survey_info.
	attrSurveyInfo = unix.NL80211_ATTR_SURVEY_INFO
	// NL80211_SURVEY_INFO_FREQUENCY = 1 (enum nl80211_survey_info), u32,
	// MHz: the channel's center frequency.
	surveyInfoFrequency = unix.NL80211_SURVEY_INFO_FREQUENCY
	// NL80211_SURVEY_INFO_IN_USE = 3 (enum nl80211_survey_info), flag: the
	// channel the radio is on.
	surveyInfoInUse = unix.NL80211_SURVEY_INFO_IN_USE
	// NL80211_SURVEY_INFO_TIME = 4 (enum nl80211_survey_info), u64,
	// milliseconds: the time the radio was on (on the channel).
	surveyInfoTime = unix.NL80211_SURVEY_INFO_TIME
	// NL80211_SURVEY_INFO_TIME_BUSY = 5 (enum nl80211_survey_info), u64,
	// milliseconds: of it, the primary channel sensed busy.
	surveyInfoTimeBusy = unix.NL80211_SURVEY_INFO_TIME_BUSY
	// NL80211_SURVEY_INFO_TIME_BSS_RX = 11 (enum nl80211_survey_info), u64,
	// milliseconds: of it, the time spent receiving the local BSS's frames
	// (Linux 5.4; mt76 reports it, many drivers do not).
	surveyInfoTimeBSSRx = unix.NL80211_SURVEY_INFO_TIME_BSS_RX
)

// genlHdrLen is the size of struct genlmsghdr (u8 cmd, u8 version, u16
// reserved), which precedes a generic netlink message's attributes.
const genlHdrLen = unix.GENL_HDRLEN

// attrTypeMask strips the flags a netlink attribute's type may carry
// (NLA_F_NESTED, NLA_F_NET_BYTEORDER; the kernel's NLA_TYPE_MASK).
const attrTypeMask = ^uint16(unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)

// errMalformed marks a reply this package cannot take apart.
var errMalformed = errors.New("malformed nl80211 reply")

// attr is one netlink attribute: its type without flags and its payload.
type attr struct {
	typ uint16
	val []byte
}

// parseAttrs splits b into netlink attributes (struct nlattr: u16 length
// including the 4-byte header, u16 type, in host byte order, the payload
// padded to 4 bytes). The last attribute may lack its padding, as the
// kernel's nla_for_each_attr allows. It never reads outside b: a length
// that does not fit is an error.
//
// (nl.ParseRouteAttr of github.com/vishvananda/netlink panics on an
// unpadded last attribute whose padding would run past the buffer, which
// the kernel never sends but a fuzzer does; hence this walker.)
func parseAttrs(b []byte) ([]attr, error) {
	var out []attr
	for len(b) > 0 {
		if len(b) < unix.NLA_HDRLEN {
			return nil, fmt.Errorf("%w: %d trailing bytes, shorter than an attribute header", errMalformed, len(b))
		}
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4]) & attrTypeMask
		if n < unix.NLA_HDRLEN || n > len(b) {
			return nil, fmt.Errorf("%w: attribute %d claims %d bytes, %d left", errMalformed, typ, n, len(b))
		}
		out = append(out, attr{typ: typ, val: b[unix.NLA_HDRLEN:n]})
		b = b[min(align4(n), len(b)):]
	}
	return out, nil
}

func align4(n int) int { return (n + unix.NLA_ALIGNTO - 1) &^ (unix.NLA_ALIGNTO - 1) }

// find returns the first attribute of type typ.
func find(as []attr, typ uint16) (attr, bool) {
	for _, a := range as {
		if a.typ == typ {
			return a, true
		}
	}
	return attr{}, false
}

// station is what one NL80211_CMD_NEW_STATION reply says about one peer of
// the interface (for a managed-mode interface: its AP).
type station struct {
	rate    float64 // transmit bitrate, Mbit/s (0 = not reported)
	txBytes uint64  // bytes sent to it (TX_BYTES64, else TX_BYTES)

	txDur, rxDur       time.Duration // TX_DURATION, RX_DURATION
	hasTxDur, hasRxDur bool          // whether the driver reported them
}

// parseStation parses one station reply: the generic netlink payload, i.e.
// struct genlmsghdr followed by the nl80211 attributes. A reply without
// NL80211_ATTR_STA_INFO or without a transmit bitrate gives a station with
// rate 0; a reply that cannot be taken apart gives an error.
func parseStation(msg []byte) (station, error) {
	sub, ok, err := nestedAttrs(msg, attrStaInfo, "station info")
	if err != nil || !ok {
		return station{}, err
	}
	return parseStaInfo(sub)
}

// nestedAttrs takes one reply apart — the generic netlink payload, struct
// genlmsghdr followed by the nl80211 attributes — and returns the attributes
// nested in its top-level attribute typ (what names it in errors); ok is
// false when the reply has none.
func nestedAttrs(msg []byte, typ uint16, what string) (sub []attr, ok bool, err error) {
	if len(msg) < genlHdrLen {
		return nil, false, fmt.Errorf("%w: %d bytes, shorter than a genlmsghdr", errMalformed, len(msg))
	}
	top, err := parseAttrs(msg[genlHdrLen:])
	if err != nil {
		return nil, false, err
	}
	info, ok := find(top, typ)
	if !ok {
		return nil, false, nil
	}
	sub, err = parseAttrs(info.val)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	return sub, true, nil
}

// parseStaInfo reads the attributes of enum nl80211_sta_info this package
// uses.
func parseStaInfo(sub []attr) (station, error) {
	var st station
	var bytes32 uint32
	var has64 bool
	for _, a := range sub {
		var err error
		switch a.typ {
		case staInfoTxBitrate:
			st.rate, err = parseRateInfo(a.val)
		case staInfoTxBytes64:
			st.txBytes, err = u64(a)
			has64 = true
		case staInfoTxBytes:
			bytes32, err = u32(a)
		case staInfoTxDuration:
			st.txDur, err = duration(a, time.Microsecond)
			st.hasTxDur = true
		case staInfoRxDuration:
			st.rxDur, err = duration(a, time.Microsecond)
			st.hasRxDur = true
		}
		if err != nil {
			return station{}, fmt.Errorf("station info: %w", err)
		}
	}
	if !has64 {
		st.txBytes = uint64(bytes32)
	}
	return st, nil
}

// parseRateInfo reads a nested enum nl80211_rate_info and returns its total
// bitrate in Mbit/s: BITRATE32 when present, else the 16-bit BITRATE, else
// 0 (the driver reported a rate without its bitrate, e.g. only an MCS).
func parseRateInfo(b []byte) (float64, error) {
	as, err := parseAttrs(b)
	if err != nil {
		return 0, fmt.Errorf("tx bitrate: %w", err)
	}
	if a, ok := find(as, rateInfoBitrate32); ok {
		v, err := u32(a)
		if err != nil {
			return 0, fmt.Errorf("tx bitrate: %w", err)
		}
		return float64(v) / 10, nil
	}
	if a, ok := find(as, rateInfoBitrate); ok {
		v, err := u16(a)
		if err != nil {
			return 0, fmt.Errorf("tx bitrate: %w", err)
		}
		return float64(v) / 10, nil
	}
	return 0, nil
}

func u16(a attr) (uint16, error) {
	if len(a.val) != 2 {
		return 0, fmt.Errorf("%w: attribute %d: %d bytes, want a u16", errMalformed, a.typ, len(a.val))
	}
	return binary.NativeEndian.Uint16(a.val), nil
}

func u32(a attr) (uint32, error) {
	if len(a.val) != 4 {
		return 0, fmt.Errorf("%w: attribute %d: %d bytes, want a u32", errMalformed, a.typ, len(a.val))
	}
	return binary.NativeEndian.Uint32(a.val), nil
}

func u64(a attr) (uint64, error) {
	if len(a.val) != 8 {
		return 0, fmt.Errorf("%w: attribute %d: %d bytes, want a u64", errMalformed, a.typ, len(a.val))
	}
	return binary.NativeEndian.Uint64(a.val), nil
}

// duration reads a u64 count of unit. A count that does not fit a
// time.Duration (292 years) is malformed: no driver has counted that long.
func duration(a attr, unit time.Duration) (time.Duration, error) {
	v, err := u64(a)
	if err != nil {
		return 0, err
	}
	if v > uint64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("%w: attribute %d: %d × %v is out of range", errMalformed, a.typ, v, unit)
	}
	return time.Duration(v) * unit, nil
}

// txBitrate parses the replies of one station dump and returns the
// transmit bitrate of the station this interface has sent the most bytes
// to, among those that report one.
//
// A managed-mode (client) interface has one station, its AP, and that is
// the rate returned. An AP, mesh or IBSS interface has one per peer; the
// one that has received the most of this interface's traffic is the one
// whose rate its uploads mostly go at (the most recently active one —
// NL80211_STA_INFO_INACTIVE_TIME — would follow a peer that only sent a
// beacon or an ARP reply). Ties keep the first in the dump.
//
// No station with a bitrate (an empty dump: not associated) is
// ErrNotWireless; a reply that cannot be taken apart is an error.
func txBitrate(msgs [][]byte) (float64, error) {
	best, found := station{}, false
	for i, m := range msgs {
		st, err := parseStation(m)
		if err != nil {
			return 0, fmt.Errorf("station %d of %d: %w", i+1, len(msgs), err)
		}
		if st.rate > 0 && (!found || st.txBytes > best.txBytes) {
			best, found = st, true
		}
	}
	if !found {
		return 0, fmt.Errorf("%w: no station with a transmit bitrate among %d (not associated?)", ErrNotWireless, len(msgs))
	}
	return best.rate, nil
}

// mostSent returns the station of a station dump this interface has sent
// the most bytes to (ties: the first in the dump), and false for an empty
// dump. For a managed-mode (client) interface that is its one station, its
// AP; see txBitrate.
func mostSent(msgs [][]byte) (station, bool, error) {
	best, found := station{}, false
	for i, m := range msgs {
		st, err := parseStation(m)
		if err != nil {
			return station{}, false, fmt.Errorf("station %d of %d: %w", i+1, len(msgs), err)
		}
		if !found || st.txBytes > best.txBytes {
			best, found = st, true
		}
	}
	return best, found, nil
}

// stationAirtime parses the replies of one station dump and returns the
// transmit and receive durations of the station sent the most bytes
// (mostSent). An empty dump (not associated) is ErrNotWireless; a station
// without TX_DURATION or RX_DURATION is ErrNoDurations, and both are then
// 0 (one without the other would make the interface's own airtime half of
// it); a reply that cannot be taken apart is an error.
func stationAirtime(msgs [][]byte) (tx, rx time.Duration, err error) {
	st, found, err := mostSent(msgs)
	if err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, fmt.Errorf("%w: no station (not associated?)", ErrNotWireless)
	}
	switch {
	case !st.hasTxDur && !st.hasRxDur:
		return 0, 0, fmt.Errorf("%w: the station reports neither NL80211_STA_INFO_TX_DURATION nor NL80211_STA_INFO_RX_DURATION", ErrNoDurations)
	case !st.hasTxDur:
		return 0, 0, fmt.Errorf("%w: the station reports no NL80211_STA_INFO_TX_DURATION", ErrNoDurations)
	case !st.hasRxDur:
		return 0, 0, fmt.Errorf("%w: the station reports no NL80211_STA_INFO_RX_DURATION", ErrNoDurations)
	}
	return st.txDur, st.rxDur, nil
}

// withStation completes the in-use channel's counters c (inUseSurvey) with
// the station durations of a station dump (stationAirtime). Without them
// (ErrNoDurations) it returns c as it is, Tx and Rx 0, and the error; on
// any other error, zero counters.
func withStation(c airtime.Counters, msgs [][]byte) (airtime.Counters, error) {
	tx, rx, err := stationAirtime(msgs)
	switch {
	case errors.Is(err, ErrNoDurations):
		// Without the station's own transmissions the busy air that is not
		// the network's cannot be told apart from them either.
		c.Tx, c.Rx, c.BSSRx, c.HasBSSRx = 0, 0, 0, false
		return c, err
	case err != nil:
		return airtime.Counters{}, err
	}
	c.Tx, c.Rx = tx, rx
	return c, nil
}

// survey is what one NL80211_CMD_NEW_SURVEY_RESULTS reply says about one
// channel of the interface's radio.
type survey struct {
	freq                       uint32 // center frequency, MHz (0 = not reported)
	inUse                      bool   // the channel the radio is on
	time, busy, bssRx          time.Duration
	hasTime, hasBusy, hasBSSRx bool // whether the driver reported them
}

// parseSurvey parses one survey reply: the generic netlink payload, i.e.
// struct genlmsghdr followed by the nl80211 attributes. A reply without
// NL80211_ATTR_SURVEY_INFO gives the zero survey (not in use); a reply that
// cannot be taken apart gives an error.
func parseSurvey(msg []byte) (survey, error) {
	sub, ok, err := nestedAttrs(msg, attrSurveyInfo, "survey info")
	if err != nil || !ok {
		return survey{}, err
	}
	var s survey
	for _, a := range sub {
		var err error
		switch a.typ {
		case surveyInfoFrequency:
			s.freq, err = u32(a)
		case surveyInfoInUse:
			if len(a.val) != 0 {
				err = fmt.Errorf("%w: attribute %d: %d bytes, want a flag", errMalformed, a.typ, len(a.val))
			}
			s.inUse = true
		case surveyInfoTime:
			s.time, err = duration(a, time.Millisecond)
			s.hasTime = true
		case surveyInfoTimeBusy:
			s.busy, err = duration(a, time.Millisecond)
			s.hasBusy = true
		case surveyInfoTimeBSSRx:
			s.bssRx, err = duration(a, time.Millisecond)
			s.hasBSSRx = true
		}
		if err != nil {
			return survey{}, fmt.Errorf("survey info: %w", err)
		}
	}
	return s, nil
}

// inUseSurvey parses the replies of one survey dump and returns the
// channel and busy time of the channel in use (Channel and Busy of the
// result, and BSSRx where the driver reports it; Tx and Rx are 0). Should several be marked in use (a radio on
// several channels at once), the first in the dump.
//
// No channel in use (an empty dump; an interface that is down or not on a
// channel) is ErrNotWireless; the channel in use without
// NL80211_SURVEY_INFO_TIME or NL80211_SURVEY_INFO_TIME_BUSY is
// ErrNoChannelTime; a reply that cannot be taken apart is an error, even
// one of a channel not in use.
func inUseSurvey(msgs [][]byte) (airtime.Counters, error) {
	var use survey
	found := false
	for i, m := range msgs {
		s, err := parseSurvey(m)
		if err != nil {
			return airtime.Counters{}, fmt.Errorf("survey %d of %d: %w", i+1, len(msgs), err)
		}
		if s.inUse && !found {
			use, found = s, true
		}
	}
	if !found {
		return airtime.Counters{}, fmt.Errorf("%w: no channel in use among the %d of the survey", ErrNotWireless, len(msgs))
	}
	var missing string
	switch {
	case !use.hasTime && !use.hasBusy:
		missing = "neither NL80211_SURVEY_INFO_TIME nor NL80211_SURVEY_INFO_TIME_BUSY"
	case !use.hasTime:
		missing = "no NL80211_SURVEY_INFO_TIME"
	case !use.hasBusy:
		missing = "no NL80211_SURVEY_INFO_TIME_BUSY"
	default:
		return airtime.Counters{Channel: use.time, Busy: use.busy, BSSRx: use.bssRx, HasBSSRx: use.hasBSSRx}, nil
	}
	return airtime.Counters{}, fmt.Errorf("%w: the channel in use (%d MHz) reports %s", ErrNoChannelTime, use.freq, missing)
}
