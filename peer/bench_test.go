package peer

import (
	"math"
	"testing"
	"time"
)

func benchStatus() Status {
	s := sampleStatus()
	s.Policy = "hayakawa2016"
	return s
}

func BenchmarkEncode(b *testing.B) {
	c := NewCodec(testKey, GroupID("bench"))
	s := benchStatus()
	buf := make([]byte, 0, MaxMessageSize)
	b.ReportAllocs()
	for b.Loop() {
		s.Seq++
		if _, err := c.AppendEncode(buf[:0], s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeVerify(b *testing.B) {
	c := NewCodec(testKey, GroupID("bench"))
	msg, _ := c.Encode(benchStatus())
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := c.Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeVerify is one message's full cost: the sender's encode
// plus one receiver's decode and verify.
func BenchmarkEncodeVerify(b *testing.B) {
	c := NewCodec(testKey, GroupID("bench"))
	s := benchStatus()
	buf := make([]byte, 0, MaxMessageSize)
	b.ReportAllocs()
	for b.Loop() {
		s.Seq++
		msg, err := c.AppendEncode(buf[:0], s)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRejectBadMAC is what a flood of forged messages costs a receiver.
func BenchmarkRejectBadMAC(b *testing.B) {
	c := NewCodec(testKey, GroupID("bench"))
	msg, _ := NewCodec(Key{1}, GroupID("bench")).Encode(benchStatus())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(msg); ReasonOf(err) != BadMAC {
			b.Fatal(err)
		}
	}
}

// BenchmarkTableReceive is decode + verify + the table's replay, window and
// rate checks for a receiver hearing 10 peers.
func BenchmarkTableReceive(b *testing.B) {
	c := NewCodec(testKey, GroupID("bench"))
	tb := NewTable(c, TableConfig{Rate: math.MaxFloat64 / 4, Burst: 1 << 30})
	now := time.Now()
	msgs := make([][]byte, 0, 1000)
	for i := range 1000 {
		s := benchStatus()
		s.Sender, s.Seq, s.SentAt = uint64(i%10+1), uint64(i/10+1), now
		m, _ := c.Encode(s)
		msgs = append(msgs, m)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(msgs) { // start over with fresh sequence numbers
			b.StopTimer()
			tb = NewTable(c, TableConfig{Rate: math.MaxFloat64 / 4, Burst: 1 << 30})
			i = 0
			b.StartTimer()
		}
		if _, r := tb.Receive(now, msgs[i]); r != OK {
			b.Fatal(r)
		}
		i++
	}
}

// Per-frame overhead on 802.11 for one UDP datagram: MAC header 24 + LLC/SNAP
// 8 + FCS 4 + UDP 8 + IP (20 for IPv4, 40 for IPv6).
const (
	wlanFrameOverhead4 = 24 + 8 + 4 + 20 + 8
	wlanFrameOverhead6 = 24 + 8 + 4 + 40 + 8
)

// airBytesPerSecond is what one terminal puts on the air: every message is
// sent station → AP and again AP → all stations (the AP re-broadcasts it).
func airBytesPerSecond(msgLen, overhead int, interval time.Duration) float64 {
	return 2 * float64(msgLen+overhead) / interval.Seconds()
}

// ofdmAirtime is the airtime in µs of one frame of n bytes at an 802.11g
// OFDM rate (Mbit/s) including preamble, signal extension, and, for a
// unicast frame, DIFS + mean backoff (CWmin 15) + SIFS + ACK at 24 Mbit/s.
func ofdmAirtime(n int, mbps float64, unicast bool) float64 {
	symbols := func(bytes int, rate float64) float64 {
		return math.Ceil((16 + 6 + 8*float64(bytes)) / (4 * rate))
	}
	t := 28 + 7.5*9 + 20 + 4*symbols(n, mbps) + 6 // DIFS + backoff + preamble + data + signal ext.
	if unicast {
		t += 10 + 20 + 4*symbols(14, 24) + 6 // SIFS + ACK
	}
	return t
}

// BenchmarkAirOverhead reports (as custom metrics, not timings) the bytes
// and airtime one terminal's status messages cost per second at the default
// interval, for a typical v1 message (policy name "hayakawa2016").
func BenchmarkAirOverhead(b *testing.B) {
	c := NewCodec(testKey, GroupID("bench"))
	msg, _ := c.Encode(benchStatus())
	for b.Loop() {
	}
	perSec := 1 / DefaultInterval.Seconds()
	frame := len(msg) + wlanFrameOverhead4
	// Station → AP at 54 Mbit/s (unicast, ACKed); AP → all at the 6 Mbit/s basic rate (broadcast, no ACK).
	airtime := perSec * (ofdmAirtime(frame, 54, true) + ofdmAirtime(frame, 6, false))
	b.ReportMetric(float64(len(msg)), "msg_B")
	b.ReportMetric(airBytesPerSecond(len(msg), wlanFrameOverhead4, DefaultInterval), "air_B/s_ipv4")
	b.ReportMetric(airBytesPerSecond(len(msg), wlanFrameOverhead6, DefaultInterval), "air_B/s_ipv6")
	b.ReportMetric(airtime, "airtime_us/s")
}
