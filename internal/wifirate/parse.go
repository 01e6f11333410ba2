package wifirate

import (
	"encoding/binary"
	"errors"
	"fmt"

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
}

// parseStation parses one station reply: the generic netlink payload, i.e.
// struct genlmsghdr followed by the nl80211 attributes. A reply without
// NL80211_ATTR_STA_INFO or without a transmit bitrate gives a station with
// rate 0; a reply that cannot be taken apart gives an error.
func parseStation(msg []byte) (station, error) {
	if len(msg) < genlHdrLen {
		return station{}, fmt.Errorf("%w: %d bytes, shorter than a genlmsghdr", errMalformed, len(msg))
	}
	top, err := parseAttrs(msg[genlHdrLen:])
	if err != nil {
		return station{}, err
	}
	info, ok := find(top, attrStaInfo)
	if !ok {
		return station{}, nil
	}
	sub, err := parseAttrs(info.val)
	if err != nil {
		return station{}, fmt.Errorf("station info: %w", err)
	}
	return parseStaInfo(sub)
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
