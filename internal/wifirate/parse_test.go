package wifirate

import (
	"encoding/binary"
	"errors"
	"testing"
)

// nla builds one netlink attribute byte by byte: u16 length (header
// included, padding not), u16 type, the payload, zero padding to 4 bytes.
func nla(typ uint16, payload ...byte) []byte {
	n := 4 + len(payload)
	b := make([]byte, 4, align4(n))
	binary.NativeEndian.PutUint16(b[0:2], uint16(n))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	b = append(b, payload...)
	return append(b, make([]byte, align4(n)-n)...)
}

// nested builds a nested attribute (NLA_F_NESTED set, as nla_nest_start
// does; the kernel's station info omits it, and both must parse).
func nested(typ uint16, flag bool, attrs ...[]byte) []byte {
	var p []byte
	for _, a := range attrs {
		p = append(p, a...)
	}
	if flag {
		typ |= 0x8000
	}
	return nla(typ, p...)
}

// lenAt is a copy of b with the attribute length at off set to n.
func lenAt(b []byte, off int, n uint16) []byte {
	c := append([]byte(nil), b...)
	binary.NativeEndian.PutUint16(c[off:], n)
	return c
}

func le16(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// reply is a NL80211_CMD_NEW_STATION (19) payload: genlmsghdr then the
// attributes, as the kernel sends them: interface index, MAC, station info.
func reply(staInfo ...[]byte) []byte {
	b := []byte{19, 1, 0, 0}
	b = append(b, nla(attrIfindex, le32(3)...)...)
	b = append(b, nla(6, 0x02, 0, 0, 0, 0, 1)...) // NL80211_ATTR_MAC
	if staInfo != nil {
		b = append(b, nested(attrStaInfo, false, staInfo...)...)
	}
	return b
}

// sta is a station info with the given tx bytes and tx bitrate attributes.
func sta(txBytes uint64, rate ...[]byte) [][]byte {
	info := [][]byte{
		nla(1, le32(40)...), // NL80211_STA_INFO_INACTIVE_TIME
		nla(staInfoTxBytes, le32(uint32(txBytes))...),
		nla(7, 0xc4), // NL80211_STA_INFO_SIGNAL, s8
	}
	if rate != nil {
		info = append(info, nested(staInfoTxBitrate, true, rate...))
	}
	return append(info, nla(staInfoTxBytes64, le64(txBytes)...))
}

// TestConstants: the numbers of include/uapi/linux/nl80211.h the comments
// cite.
func TestConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"NL80211_CMD_GET_STATION", cmdGetStation, 17},
		{"NL80211_ATTR_IFINDEX", attrIfindex, 3},
		{"NL80211_ATTR_STA_INFO", attrStaInfo, 21},
		{"NL80211_STA_INFO_TX_BYTES", staInfoTxBytes, 3},
		{"NL80211_STA_INFO_TX_BITRATE", staInfoTxBitrate, 8},
		{"NL80211_STA_INFO_TX_BYTES64", staInfoTxBytes64, 24},
		{"NL80211_RATE_INFO_BITRATE", rateInfoBitrate, 1},
		{"NL80211_RATE_INFO_BITRATE32", rateInfoBitrate32, 5},
		{"NL80211_STA_INFO_RX_DURATION", staInfoRxDuration, 32},
		{"NL80211_STA_INFO_TX_DURATION", staInfoTxDuration, 39},
		{"NL80211_CMD_GET_SURVEY", cmdGetSurvey, 50},
		{"NL80211_ATTR_SURVEY_INFO", attrSurveyInfo, 84},
		{"NL80211_SURVEY_INFO_FREQUENCY", surveyInfoFrequency, 1},
		{"NL80211_SURVEY_INFO_IN_USE", surveyInfoInUse, 3},
		{"NL80211_SURVEY_INFO_TIME", surveyInfoTime, 4},
		{"NL80211_SURVEY_INFO_TIME_BUSY", surveyInfoTimeBusy, 5},
		{"GENL_HDRLEN", genlHdrLen, 4},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestParseStationRates(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		want float64
	}{
		// 866.7 Mbit/s (VHT80 2SS): BITRATE32 8667, and the 16-bit one beside it.
		{"bitrate32 and bitrate", reply(sta(1000, nla(rateInfoBitrate, le16(8667)...), nla(2, 9), nla(rateInfoBitrate32, le32(8667)...))...), 866.7},
		// BITRATE32 wins when the two differ (the 16-bit one saturates).
		{"bitrate32 preferred", reply(sta(1000, nla(rateInfoBitrate32, le32(96075)...), nla(rateInfoBitrate, le16(65535)...))...), 9607.5},
		{"only 16-bit bitrate", reply(sta(1000, nla(rateInfoBitrate, le16(540)...))...), 54},
		{"tx bitrate without a bitrate", reply(sta(1000, nla(2, 7))...), 0},
		{"no tx bitrate", reply(sta(1000)...), 0},
		{"no station info", reply(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parseStation(tc.msg)
			if err != nil || st.rate != tc.want || st.txBytes != 1000 && tc.want != 0 {
				t.Fatalf("parseStation = %+v, %v; want rate %v, 1000 tx bytes", st, err, tc.want)
			}
		})
	}
}

// TestTxBytesFallback: TX_BYTES64 when present (TX_BYTES is truncated to 32
// bits), else TX_BYTES.
func TestTxBytesFallback(t *testing.T) {
	big := uint64(5) << 32
	st, err := parseStation(reply(sta(big+7, nla(rateInfoBitrate32, le32(10)...))...))
	if err != nil || st.txBytes != big+7 {
		t.Fatalf("with TX_BYTES64: %+v, %v; want %d tx bytes", st, err, big+7)
	}
	st, err = parseStation(reply(nla(staInfoTxBytes, le32(77)...), nested(staInfoTxBitrate, false, nla(rateInfoBitrate32, le32(10)...))))
	if err != nil || st.txBytes != 77 || st.rate != 1 {
		t.Fatalf("TX_BYTES only: %+v, %v; want 77 tx bytes at 1 Mbit/s", st, err)
	}
}

// TestTxBitrateNoStation: an empty dump (a client interface that is not
// associated) and stations without a bitrate are ErrNotWireless.
func TestTxBitrateNoStation(t *testing.T) {
	for name, msgs := range map[string][][]byte{
		"empty dump":        nil,
		"no tx bitrate":     {reply(sta(10)...)},
		"no station info":   {reply()},
		"bitrate 0":         {reply(sta(10, nla(rateInfoBitrate32, le32(0)...))...)},
		"only MCS, no rate": {reply(sta(10, nla(2, 7))...)},
	} {
		if r, err := txBitrate(msgs); !errors.Is(err, ErrNotWireless) || r != 0 {
			t.Errorf("%s: %v, %v; want 0, ErrNotWireless", name, r, err)
		}
	}
}

// TestTxBitratePicksMostTxBytes: with several stations (an AP-mode
// interface), the one sent the most bytes; stations without a rate do not
// count however much was sent to them.
func TestTxBitratePicksMostTxBytes(t *testing.T) {
	msgs := [][]byte{
		reply(sta(500, nla(rateInfoBitrate32, le32(60)...))...),
		reply(sta(9000, nla(rateInfoBitrate32, le32(1440)...))...),
		reply(sta(99999)...), // no rate
		reply(sta(800, nla(rateInfoBitrate, le16(240)...))...),
	}
	if r, err := txBitrate(msgs); err != nil || r != 144 {
		t.Fatalf("txBitrate = %v, %v; want 144 (the station with 9000 tx bytes)", r, err)
	}
	if r, err := txBitrate(msgs[:1]); err != nil || r != 6 {
		t.Fatalf("one station: %v, %v; want 6", r, err)
	}
}

// TestParseMalformed: truncated and garbled replies are errors, never
// ErrNotWireless and never a panic.
func TestParseMalformed(t *testing.T) {
	good := reply(sta(1000, nla(rateInfoBitrate32, le32(8667)...))...)
	staOff := 4 + 8 + 12 // genlmsghdr, ifindex, MAC: the station info's header
	cases := map[string][]byte{
		"shorter than genlmsghdr":        good[:3],
		"cut inside an attribute header": good[:4+2],
		"cut inside the station info":    good[:len(good)-5],
		"attribute length 2":             lenAt(good, 4, 2),
		"attribute past the end":         lenAt(good, 4, 200),
		"station info past the end":      lenAt(good, staOff, uint16(len(good)-staOff+1)),
		"bitrate32 of 2 bytes":           reply(sta(1, nla(rateInfoBitrate32, le16(1)...))...),
		"bitrate of 4 bytes":             reply(sta(1, nla(rateInfoBitrate, le32(1)...))...),
		"tx bytes64 of 4 bytes":          reply(nla(staInfoTxBytes64, le32(1)...)),
		"tx bitrate not nested":          reply(nla(staInfoTxBitrate, 1, 2)),
		"3 trailing bytes":               append(append([]byte(nil), good...), 1, 2, 3),
	}
	for name, msg := range cases {
		if _, err := parseStation(msg); err == nil || errors.Is(err, ErrNotWireless) {
			t.Errorf("parseStation(%s) = %v; want a malformed-reply error", name, err)
		}
		if _, err := txBitrate([][]byte{good, msg}); err == nil || errors.Is(err, ErrNotWireless) {
			t.Errorf("txBitrate(good, %s) = %v; want a malformed-reply error", name, err)
		}
	}
	// An unpadded last attribute is accepted (the kernel's iterator is).
	unpadded := reply(nested(staInfoTxBitrate, false, nla(rateInfoBitrate, le16(65)...)))
	n := len(unpadded)                      // ... STA_INFO(16) { TX_BITRATE(12) { BITRATE(6 + 2 padding) } }
	unpadded = lenAt(unpadded, n-16, 4+4+6) // the station info
	unpadded = lenAt(unpadded, n-12, 4+6)   // the tx bitrate
	unpadded = unpadded[:n-2]
	if st, err := parseStation(unpadded); err != nil || st.rate != 6.5 {
		t.Errorf("unpadded last attribute: %+v, %v; want 6.5 Mbit/s", st, err)
	}
}

// FuzzParseStation: no input makes the parser panic, and a parsed rate or
// duration is never negative.
func FuzzParseStation(f *testing.F) {
	f.Add(reply(sta(1000, nla(rateInfoBitrate32, le32(8667)...), nla(rateInfoBitrate, le16(8667)...))...))
	f.Add(reply(sta(1000, nla(rateInfoBitrate, le16(540)...))...))
	f.Add(reply(sta(1000)...))
	f.Add(reply(nla(staInfoTxDuration, le64(300000)...), nla(staInfoRxDuration, le64(100000)...)))
	f.Add(reply())
	f.Add([]byte{19, 1, 0, 0, 5, 0, 21, 0, 9})
	f.Fuzz(func(t *testing.T, msg []byte) {
		st, err := parseStation(msg)
		if err == nil && (!(st.rate >= 0) || st.txDur < 0 || st.rxDur < 0) {
			t.Fatalf("station %+v", st)
		}
		_, _ = txBitrate([][]byte{msg, msg})
		if tx, rx, err := stationAirtime([][]byte{msg, msg}); tx < 0 || rx < 0 || err != nil && (tx != 0 || rx != 0) {
			t.Fatalf("stationAirtime = %v, %v, %v", tx, rx, err)
		}
	})
}
