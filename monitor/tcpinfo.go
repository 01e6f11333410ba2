package monitor

import (
	"encoding/binary"
	"time"
)

// Offsets of the struct tcp_info fields we read (include/uapi/linux/tcp.h,
// Linux 6.x). Older kernels send a shorter struct: a field is read only when
// the reply is long enough to hold it and is zero otherwise.
const (
	tiState         = 0
	tiCAState       = 1
	tiRetransmits   = 2
	tiAppLimited    = 7 // bit 0: tcpi_delivery_rate_app_limited
	tiSndMSS        = 16
	tiRcvMSS        = 20
	tiUnacked       = 24
	tiSacked        = 28
	tiLost          = 32
	tiRcvSsthresh   = 64
	tiRtt           = 68
	tiRttvar        = 72
	tiSndSsthresh   = 76
	tiSndCwnd       = 80
	tiRcvRtt        = 92
	tiRcvSpace      = 96
	tiTotalRetrans  = 100
	tiPacingRate    = 104
	tiBytesAcked    = 120
	tiBytesReceived = 128
	tiSegsIn        = 140
	tiNotsentBytes  = 144
	tiMinRtt        = 148
	tiDataSegsIn    = 152
	tiDeliveryRate  = 160
	tiBusyTime      = 168
	tiRwndLimited   = 176
	tiSndbufLimited = 184
	tiDelivered     = 192
	tiBytesSent     = 200
	tiSndWnd        = 228 // Linux 5.19+ (tcpi_snd_wnd)
	tiRcvWnd        = 232 // Linux 6.7+ (tcpi_rcv_wnd)
)

func u32at(b []byte, off int) uint32 {
	if len(b) < off+4 {
		return 0
	}
	return binary.NativeEndian.Uint32(b[off:])
}

func u64at(b []byte, off int) uint64 {
	if len(b) < off+8 {
		return 0
	}
	return binary.NativeEndian.Uint64(b[off:])
}

func usAt(b []byte, off int) time.Duration { return time.Duration(u32at(b, off)) * time.Microsecond }

func us64At(b []byte, off int) time.Duration {
	return time.Duration(u64at(b, off)) * time.Microsecond
}

// parseTCPInfo fills f's tcp_info fields from the payload of an
// INET_DIAG_INFO attribute. It tolerates any length (shorter structs from
// older kernels, longer ones from newer kernels).
func parseTCPInfo(b []byte, f *Flow) {
	if len(b) > tiRetransmits {
		f.CAState = b[tiCAState]
		f.Retransmits = b[tiRetransmits]
	}
	if len(b) > tiAppLimited {
		f.AppLimited = b[tiAppLimited]&1 != 0
	}
	f.MSS = u32at(b, tiSndMSS)
	f.Unacked = u32at(b, tiUnacked)
	f.Sacked = u32at(b, tiSacked)
	f.Lost = u32at(b, tiLost)
	f.SRTT = usAt(b, tiRtt)
	f.RTTVar = usAt(b, tiRttvar)
	f.Ssthresh = u32at(b, tiSndSsthresh)
	f.Cwnd = u32at(b, tiSndCwnd)
	f.TotalRetrans = u32at(b, tiTotalRetrans)
	f.PacingRate = u64at(b, tiPacingRate)
	f.BytesAcked = u64at(b, tiBytesAcked)
	f.BytesReceived = u64at(b, tiBytesReceived)
	f.NotSent = u32at(b, tiNotsentBytes)
	f.MinRTT = usAt(b, tiMinRtt)
	f.DeliveryRate = u64at(b, tiDeliveryRate)
	f.BusyTime = us64At(b, tiBusyTime)
	f.RwndLimited = us64At(b, tiRwndLimited)
	f.SndbufLimited = us64At(b, tiSndbufLimited)
	f.Delivered = uint64(u32at(b, tiDelivered))
	f.SegsIn = u32at(b, tiSegsIn)
	f.DataSegsIn = u32at(b, tiDataSegsIn)
	f.BytesSent = u64at(b, tiBytesSent)
	f.RcvMSS = u32at(b, tiRcvMSS)
	f.RcvSsthresh = u32at(b, tiRcvSsthresh)
	f.RcvRTT = usAt(b, tiRcvRtt)
	f.RcvSpace = u32at(b, tiRcvSpace)
	f.SndWnd = u32at(b, tiSndWnd)
	f.RcvWnd = u32at(b, tiRcvWnd)
}
