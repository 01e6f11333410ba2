package wifirate

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// surveyReply is a NL80211_CMD_NEW_SURVEY_RESULTS (51) payload as the
// kernel's nl80211_send_survey builds it: genlmsghdr, the interface index,
// the survey info nested without NLA_F_NESTED (nla_nest_start_noflag).
// With no info at all, a reply without NL80211_ATTR_SURVEY_INFO.
func surveyReply(info ...[]byte) []byte {
	b := []byte{51, 1, 0, 0}
	b = append(b, nla(attrIfindex, le32(3)...)...)
	if info != nil {
		b = append(b, nested(attrSurveyInfo, false, info...)...)
	}
	return b
}

// surveyPad is NL80211_SURVEY_INFO_PAD (10), the empty attribute
// nla_put_u64_64bit puts before a u64 where alignment needs it.
var surveyPad = nla(10)

// channel is a survey entry's info: frequency (MHz), noise, in use or not,
// and the times (ms) given as non-negative values (-1: left out).
func channel(freq uint32, inUse bool, timeMs, busyMs int64) [][]byte {
	info := [][]byte{nla(surveyInfoFrequency, le32(freq)...), nla(2, 0xa1)} // NL80211_SURVEY_INFO_NOISE, u8
	if inUse {
		info = append(info, nla(surveyInfoInUse))
	}
	if timeMs >= 0 {
		info = append(info, surveyPad, nla(surveyInfoTime, le64(uint64(timeMs))...))
	}
	if busyMs >= 0 {
		info = append(info, surveyPad, nla(surveyInfoTimeBusy, le64(uint64(busyMs))...))
	}
	return append(info, nla(8, le64(7)...)) // NL80211_SURVEY_INFO_TIME_TX, u64
}

// maxMs and maxUs are the largest counts of ms and µs a time.Duration holds.
const (
	maxMs = math.MaxInt64 / int64(time.Millisecond)
	maxUs = math.MaxInt64 / int64(time.Microsecond)
)

// ms is n milliseconds.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func TestInUseSurvey(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs [][]byte
		want airtime.Counters
	}{
		{"one channel", [][]byte{surveyReply(channel(2412, true, 5000, 1200)...)}, airtime.Counters{Channel: ms(5000), Busy: ms(1200)}},
		{"in use among several", [][]byte{
			surveyReply(channel(2412, false, 10, 9)...),
			surveyReply(channel(2437, false, -1, -1)...), // a channel not in use may lack the times
			surveyReply(channel(5180, true, 123456789, 98765)...),
			surveyReply(channel(5200, false, 1, 1)...),
		}, airtime.Counters{Channel: ms(123456789), Busy: ms(98765)}},
		{"first of two in use", [][]byte{
			surveyReply(channel(2412, false, 10, 9)...),
			surveyReply(channel(2437, true, 300, 30)...),
			surveyReply(channel(5180, true, 400, 40)...),
		}, airtime.Counters{Channel: ms(300), Busy: ms(30)}},
		{"replies without survey info", [][]byte{surveyReply(), surveyReply(channel(2462, true, 0, 0)...), surveyReply()}, airtime.Counters{}},
		{"nested flag set", [][]byte{append(surveyReply(), nested(attrSurveyInfo, true, channel(2412, true, 8, 4)...)...)}, airtime.Counters{Channel: ms(8), Busy: ms(4)}},
		{"largest time", [][]byte{surveyReply(channel(2412, true, maxMs, 0)...)}, airtime.Counters{Channel: ms(maxMs)}},
		{"local BSS rx time", [][]byte{
			surveyReply(append(channel(2412, false, 10, 9), surveyPad, nla(surveyInfoTimeBSSRx, le64(8)...))...),
			surveyReply(append(channel(2437, true, 5000, 1200), surveyPad, nla(surveyInfoTimeBSSRx, le64(700)...))...),
		}, airtime.Counters{Channel: ms(5000), Busy: ms(1200), BSSRx: ms(700), HasBSSRx: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := inUseSurvey(tc.msgs)
			if err != nil || c != tc.want {
				t.Fatalf("inUseSurvey = %+v, %v; want %+v", c, err, tc.want)
			}
		})
	}
}

// TestInUseSurveyNotInUse: no channel in use (an empty dump, none marked)
// is ErrNotWireless.
func TestInUseSurveyNotInUse(t *testing.T) {
	for name, msgs := range map[string][][]byte{
		"empty dump":      nil,
		"none in use":     {surveyReply(channel(2412, false, 10, 9)...), surveyReply(channel(2437, false, 10, 9)...)},
		"no survey info":  {surveyReply()},
		"only frequency":  {surveyReply(nla(surveyInfoFrequency, le32(2412)...))},
		"empty info nest": {append(surveyReply(), nla(attrSurveyInfo)...)},
	} {
		c, err := inUseSurvey(msgs)
		if !errors.Is(err, ErrNotWireless) || errors.Is(err, ErrNoChannelTime) || c != (airtime.Counters{}) {
			t.Errorf("%s: %+v, %v; want zero counters, ErrNotWireless", name, c, err)
		}
	}
}

// TestInUseSurveyNoTimes: the channel in use without TIME or TIME_BUSY is
// ErrNoChannelTime (not ErrNotWireless), naming what is missing, even when
// a channel not in use has them.
func TestInUseSurveyNoTimes(t *testing.T) {
	other := surveyReply(channel(2412, false, 10, 9)...)
	for _, tc := range []struct {
		name    string
		in      []byte
		missing string
	}{
		{"no TIME_BUSY", surveyReply(channel(5180, true, 5000, -1)...), "no NL80211_SURVEY_INFO_TIME_BUSY"},
		{"no TIME", surveyReply(channel(5180, true, -1, 1200)...), "no NL80211_SURVEY_INFO_TIME\n"},
		{"neither", surveyReply(channel(5180, true, -1, -1)...), "neither NL80211_SURVEY_INFO_TIME nor NL80211_SURVEY_INFO_TIME_BUSY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := inUseSurvey([][]byte{other, tc.in})
			if !errors.Is(err, ErrNoChannelTime) || errors.Is(err, ErrNotWireless) || c != (airtime.Counters{}) {
				t.Fatalf("inUseSurvey = %+v, %v; want zero counters, ErrNoChannelTime", c, err)
			}
			if msg := err.Error() + "\n"; !strings.Contains(msg, tc.missing) || !strings.Contains(msg, "5180 MHz") {
				t.Errorf("error %q does not name %q and the channel", err, strings.TrimSpace(tc.missing))
			}
		})
	}
}

// TestParseSurveyMalformed: truncated and garbled survey replies are
// errors, never ErrNotWireless or ErrNoChannelTime, and never a panic —
// a garbled entry of a channel not in use too.
func TestParseSurveyMalformed(t *testing.T) {
	good := surveyReply(channel(2412, true, 5000, 1200)...)
	infoOff := 4 + 8 // genlmsghdr, ifindex: the survey info's header
	cases := map[string][]byte{
		"shorter than genlmsghdr":       good[:3],
		"cut inside an attribute":       good[:4+6],
		"cut inside the survey info":    good[:len(good)-5],
		"attribute length 3":            lenAt(good, 4, 3),
		"attribute past the end":        lenAt(good, 4, 300),
		"survey info past the end":      lenAt(good, infoOff, uint16(len(good)-infoOff+1)),
		"in use with a payload":         surveyReply(nla(surveyInfoInUse, 1), nla(surveyInfoTime, le64(1)...), nla(surveyInfoTimeBusy, le64(1)...)),
		"time of 4 bytes":               surveyReply(nla(surveyInfoInUse), nla(surveyInfoTime, le32(1)...), nla(surveyInfoTimeBusy, le64(1)...)),
		"busy of 0 bytes":               surveyReply(nla(surveyInfoInUse), nla(surveyInfoTime, le64(1)...), nla(surveyInfoTimeBusy)),
		"frequency of 2 bytes":          surveyReply(nla(surveyInfoFrequency, le16(2412)...), nla(surveyInfoInUse)),
		"time out of range":             surveyReply(channel(2412, true, maxMs+1, 0)...),
		"busy out of range":             surveyReply(channel(2412, true, 1, math.MaxInt64-1)...),
		"garbled, not in use":           surveyReply(nla(surveyInfoFrequency, le16(2412)...)),
		"3 trailing bytes in the nest":  surveyReply(append(channel(2412, true, 1, 1), []byte{1, 2, 3})...),
		"info nest of 2 bytes":          append(surveyReply(), nla(attrSurveyInfo, 1, 2)...),
		"3 trailing bytes after a nest": append(append([]byte(nil), good...), 1, 2, 3),
	}
	for name, msg := range cases {
		if _, err := parseSurvey(msg); !errors.Is(err, errMalformed) {
			t.Errorf("parseSurvey(%s) = %v; want a malformed-reply error", name, err)
		}
		for _, msgs := range [][][]byte{{good, msg}, {msg, good}} {
			if _, err := inUseSurvey(msgs); !errors.Is(err, errMalformed) || errors.Is(err, ErrNotWireless) || errors.Is(err, ErrNoChannelTime) {
				t.Errorf("inUseSurvey with %s = %v; want a malformed-reply error", name, err)
			}
		}
	}
}

// staDur is a station info with tx bytes and the given durations (µs;
// -1: left out), padded as nla_put_u64_64bit may (NL80211_STA_INFO_PAD, 33).
func staDur(txBytes uint64, txUs, rxUs int64) [][]byte {
	info := sta(txBytes, nla(rateInfoBitrate32, le32(1440)...))
	if rxUs >= 0 {
		info = append(info, nla(33), nla(staInfoRxDuration, le64(uint64(rxUs))...))
	}
	if txUs >= 0 {
		info = append(info, nla(33), nla(staInfoTxDuration, le64(uint64(txUs))...))
	}
	return info
}

func TestStationAirtime(t *testing.T) {
	us := func(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
	// One station, its AP.
	tx, rx, err := stationAirtime([][]byte{reply(staDur(1000, 700000, 250000)...)})
	if err != nil || tx != us(700000) || rx != us(250000) {
		t.Fatalf("one station: %v, %v, %v; want 700ms, 250ms", tx, rx, err)
	}
	// Several: the one sent the most bytes, whatever the others report.
	msgs := [][]byte{
		reply(staDur(500, 1, 2)...),
		reply(staDur(9000, 3e9, 4e9)...),
		reply(staDur(800, 5, 6)...),
	}
	if tx, rx, err := stationAirtime(msgs); err != nil || tx != us(3e9) || rx != us(4e9) {
		t.Fatalf("several stations: %v, %v, %v; want 3000s, 4000s", tx, rx, err)
	}
	// The station sent the most bytes lacking durations is ErrNoDurations,
	// though another has them.
	msgs = append(msgs, reply(staDur(99999, -1, -1)...))
	if tx, rx, err := stationAirtime(msgs); !errors.Is(err, ErrNoDurations) || tx != 0 || rx != 0 {
		t.Fatalf("busiest without durations: %v, %v, %v; want 0, 0, ErrNoDurations", tx, rx, err)
	}
	// Zero durations (a driver that does not account them) are values.
	if tx, rx, err := stationAirtime([][]byte{reply(staDur(1, 0, 0)...)}); err != nil || tx != 0 || rx != 0 {
		t.Fatalf("zero durations: %v, %v, %v; want 0, 0, nil", tx, rx, err)
	}
}

// TestStationAirtimeMissing: no station is ErrNotWireless; a station
// without one duration or both is ErrNoDurations naming what is missing,
// and both durations 0.
func TestStationAirtimeMissing(t *testing.T) {
	for name, msgs := range map[string][][]byte{"empty dump": nil} {
		if _, _, err := stationAirtime(msgs); !errors.Is(err, ErrNotWireless) || errors.Is(err, ErrNoDurations) {
			t.Errorf("%s: %v; want ErrNotWireless", name, err)
		}
	}
	for _, tc := range []struct {
		name    string
		msg     []byte
		missing string
	}{
		{"no tx duration", reply(staDur(10, -1, 5)...), "no NL80211_STA_INFO_TX_DURATION"},
		{"no rx duration", reply(staDur(10, 5, -1)...), "no NL80211_STA_INFO_RX_DURATION"},
		{"neither", reply(staDur(10, -1, -1)...), "neither NL80211_STA_INFO_TX_DURATION nor NL80211_STA_INFO_RX_DURATION"},
		{"no station info", reply(), "neither"},
	} {
		tx, rx, err := stationAirtime([][]byte{tc.msg})
		if !errors.Is(err, ErrNoDurations) || errors.Is(err, ErrNotWireless) || tx != 0 || rx != 0 {
			t.Errorf("%s: %v, %v, %v; want 0, 0, ErrNoDurations", tc.name, tx, rx, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.missing) {
			t.Errorf("%s: error %q does not name %q", tc.name, err, tc.missing)
		}
	}
}

// TestStationAirtimeMalformed: garbled durations are malformed replies.
func TestStationAirtimeMalformed(t *testing.T) {
	good := reply(staDur(10, 1, 2)...)
	for name, msg := range map[string][]byte{
		"tx duration of 4 bytes":   reply(nla(staInfoTxDuration, le32(1)...), nla(staInfoRxDuration, le64(1)...)),
		"rx duration of 9 bytes":   reply(nla(staInfoTxDuration, le64(1)...), nla(staInfoRxDuration, 1, 2, 3, 4, 5, 6, 7, 8, 9)),
		"tx duration out of range": reply(staDur(10, maxUs+1, 0)...),
		"rx duration out of range": reply(nla(staInfoTxDuration, le64(1)...), nla(staInfoRxDuration, le64(math.MaxUint64)...)),
		"cut inside the durations": good[:len(good)-3],
	} {
		for _, msgs := range [][][]byte{{msg}, {good, msg}, {msg, good}} {
			if _, _, err := stationAirtime(msgs); !errors.Is(err, errMalformed) || errors.Is(err, ErrNoDurations) || errors.Is(err, ErrNotWireless) {
				t.Errorf("%s: %v; want a malformed-reply error", name, err)
			}
		}
	}
	// The largest duration that fits is read.
	tx, _, err := stationAirtime([][]byte{reply(staDur(10, maxUs, 0)...)})
	if err != nil || tx != time.Duration(maxUs)*time.Microsecond {
		t.Errorf("largest tx duration: %v, %v", tx, err)
	}
}

// TestWithStation: what Airtime returns once the survey was read —
// Channel and Busy with the station's durations; Channel and Busy, Tx and
// Rx 0 and ErrNoDurations without them; zero counters on other errors.
func TestWithStation(t *testing.T) {
	c := airtime.Counters{Channel: ms(5000), Busy: ms(1200)}
	got, err := withStation(c, [][]byte{reply(staDur(10, 300000, 100000)...)})
	if want := (airtime.Counters{Channel: ms(5000), Busy: ms(1200), Tx: ms(300), Rx: ms(100)}); err != nil || got != want {
		t.Errorf("with durations: %+v, %v; want %+v", got, err, want)
	}
	got, err = withStation(c, [][]byte{reply(staDur(10, 300000, -1)...)})
	if !errors.Is(err, ErrNoDurations) || got != c {
		t.Errorf("without rx duration: %+v, %v; want %+v, ErrNoDurations", got, err, c)
	}
	local := c
	local.BSSRx, local.HasBSSRx = ms(600), true
	got, err = withStation(local, [][]byte{reply(staDur(10, 300000, 100000)...)})
	if want := (airtime.Counters{Channel: ms(5000), Busy: ms(1200), Tx: ms(300), Rx: ms(100), BSSRx: ms(600), HasBSSRx: true}); err != nil || got != want {
		t.Errorf("with durations and BSS rx: %+v, %v; want %+v", got, err, want)
	}
	// Without its own transmissions the network's share cannot be told.
	got, err = withStation(local, [][]byte{reply(staDur(10, -1, -1)...)})
	if !errors.Is(err, ErrNoDurations) || got != c {
		t.Errorf("BSS rx without durations: %+v, %v; want %+v (no BSS rx), ErrNoDurations", got, err, c)
	}
	got, err = withStation(c, nil)
	if !errors.Is(err, ErrNotWireless) || got != (airtime.Counters{}) {
		t.Errorf("no station: %+v, %v; want zero counters, ErrNotWireless", got, err)
	}
	got, err = withStation(c, [][]byte{{19, 1}})
	if !errors.Is(err, errMalformed) || got != (airtime.Counters{}) {
		t.Errorf("malformed: %+v, %v; want zero counters, a malformed-reply error", got, err)
	}
}

// FuzzParseSurvey: no input makes the survey parser panic; what it reads
// is never negative, and inUseSurvey's counters are either whole (Channel
// and Busy of a channel in use, Tx and Rx 0) or zero with an error.
func FuzzParseSurvey(f *testing.F) {
	f.Add(surveyReply(channel(2412, true, 5000, 1200)...))
	f.Add(surveyReply(channel(5180, false, 10, 9)...))
	f.Add(surveyReply(channel(5180, true, -1, 9)...))
	f.Add(surveyReply(channel(5180, true, maxMs+1, 9)...))
	f.Add(surveyReply(nla(surveyInfoInUse)))
	f.Add(surveyReply())
	f.Add([]byte{51, 1, 0, 0, 5, 0, 84, 0, 9})
	f.Fuzz(func(t *testing.T, msg []byte) {
		s, err := parseSurvey(msg)
		if err == nil && (s.time < 0 || s.busy < 0) {
			t.Fatalf("negative times: %+v", s)
		}
		c, err := inUseSurvey([][]byte{msg, msg})
		if err != nil && c != (airtime.Counters{}) {
			t.Fatalf("counters %+v with error %v", c, err)
		}
		if err == nil && (c.Channel < 0 || c.Busy < 0 || c.Tx != 0 || c.Rx != 0 || !s.inUse || c.Channel != s.time || c.Busy != s.busy) {
			t.Fatalf("counters %+v from %+v", c, s)
		}
	})
}
