// Package phy holds 802.11 PHY/MAC timing presets (802.11b, g, n, ac) and
// computes the airtime of data frames, aggregates (A-MPDU), ACKs and block
// ACKs from them. Every constant names its source in a comment; see
// docs/emulator.md for the table.
package phy

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/coopcc/coopcc/emu/des"
)

// Kind is the PHY family, which decides how a PPDU's duration is computed.
type Kind int

const (
	// DSSS is 802.11b (clause 16/17 HR/DSSS): PLCP preamble+header, then bits at the rate.
	DSSS Kind = iota
	// OFDM covers ERP-OFDM (802.11g), HT (802.11n) and VHT (802.11ac): preamble,
	// then 16 service bits + payload + 6 tail bits in whole symbols.
	OFDM
)

// Frame sizes in bytes (IEEE 802.11-2016 frame formats).
const (
	LLCSNAP       = 8  // RFC 1042 encapsulation of an Ethernet payload
	FCS           = 4  // frame check sequence
	ACKBytes      = 14 // ACK frame
	BlockAckBytes = 32 // compressed BlockAck (BA control + SSN + 8-byte bitmap)
	delimiter     = 4  // A-MPDU subframe delimiter
)

// Preset is one PHY's timing and channel-access parameters.
type Preset struct {
	Name        string
	Description string
	Kind        Kind

	Slot, SIFS   des.Time // aSlotTime, aSIFSTime
	CWMin, CWMax int      // contention window bounds (slots, 2^k-1)
	RetryLimit   int      // transmission attempts per frame before it is dropped (dot11ShortRetryLimit)

	DataRateMbps      float64   // default station/AP data rate
	Rates             []float64 // the PHY's data rates, ascending (rate control chooses among them)
	ControlRateMbps   float64   // ACK and BlockAck rate
	BroadcastRateMbps float64   // rate of group-addressed frames sent by the AP

	Preamble       des.Time // PLCP preamble + header of a data PPDU
	LegacyPreamble des.Time // preamble + header of a control (ACK/BA) or broadcast PPDU
	Symbol         des.Time // data symbol duration (OFDM)
	ShortGI        bool     // data symbols are 3.6 µs; TXTIME rounds their total up to whole 4 µs
	SignalExt      des.Time // ERP/HT at 2.4 GHz: 6 µs signal extension after every OFDM PPDU
	RxStartDelay   des.Time // aPHY-RX-START-Delay, for the ACK timeout
	MACHeader      int      // data MPDU header bytes (24; 26 with QoS control)

	AMPDU          bool     // aggregate MPDUs (A-MPDU) and acknowledge with a BlockAck
	AMPDUMaxFrames int      // MPDUs per A-MPDU (block-ack window)
	AMPDUMaxBytes  int      // bytes per A-MPDU
	MaxPPDU        des.Time // aPPDUMaxTime
}

const us = des.Microsecond

// Presets returns the built-in presets by name: b, g, n, ac.
func Presets() map[string]Preset {
	return map[string]Preset{
		// 802.11b HR/DSSS, long preamble: slot 20, SIFS 10, CW 31..1023 (802.11-2016 clause 16);
		// PLCP 144 µs preamble + 48 µs header at 1 Mbps; ACK at 2 Mbps, broadcast at 1 Mbps.
		"b": {Name: "b", Description: "802.11b 11 Mbps, long preamble", Kind: DSSS,
			Slot: 20 * us, SIFS: 10 * us, CWMin: 31, CWMax: 1023, RetryLimit: 7,
			DataRateMbps: 11, ControlRateMbps: 2, BroadcastRateMbps: 1,
			Rates:    []float64{1, 2, 5.5, 11}, // clauses 15/16: DSSS 1, 2; HR/DSSS CCK 5.5, 11
			Preamble: 192 * us, LegacyPreamble: 192 * us, RxStartDelay: 192 * us, MACHeader: 24},
		// 802.11g ERP-OFDM (DESIGN §4): slot 9 (short slot), SIFS 10, DIFS 28, CW 15..1023,
		// 20 µs preamble+SIGNAL, 4 µs symbols, 6 µs signal extension, 54 data / 24 control.
		// aPHY-RX-START-Delay 25 µs (OFDM PHY characteristics, clause 17) for the ACK timeout.
		"g": {Name: "g", Description: "802.11g ERP-OFDM 54 Mbps, short slot", Kind: OFDM,
			Slot: 9 * us, SIFS: 10 * us, CWMin: 15, CWMax: 1023, RetryLimit: 7,
			DataRateMbps: 54, ControlRateMbps: 24, BroadcastRateMbps: 6,
			Rates:    []float64{6, 9, 12, 18, 24, 36, 48, 54}, // clause 18 ERP-OFDM (clause 17 rates); no DSSS rates
			Preamble: 20 * us, LegacyPreamble: 20 * us, Symbol: 4 * us, SignalExt: 6 * us,
			RxStartDelay: 25 * us, MACHeader: 24},
		// 802.11n HT-mixed, 2.4 GHz, 20 MHz, 1 spatial stream, MCS 7, short GI = 72.2 Mbps.
		// Preamble L-STF 8 + L-LTF 8 + L-SIG 4 + HT-SIG 8 + HT-STF 4 + HT-LTF 4 = 36 µs;
		// QoS data header 26 B; A-MPDU up to 64 MPDUs / 65535 B with compressed BlockAck.
		"n": {Name: "n", Description: "802.11n 2.4 GHz 20 MHz 1SS MCS7 SGI (72.2 Mbps), A-MPDU", Kind: OFDM,
			Slot: 9 * us, SIFS: 10 * us, CWMin: 15, CWMax: 1023, RetryLimit: 7,
			DataRateMbps: 72.2, ControlRateMbps: 24, BroadcastRateMbps: 6,
			Rates:    []float64{7.2, 14.4, 21.7, 28.9, 43.3, 57.8, 65, 72.2}, // HT MCS 0-7, 20 MHz, 1 SS, short GI (clause 19 MCS table)
			Preamble: 36 * us, LegacyPreamble: 20 * us, Symbol: 3600, ShortGI: true, SignalExt: 6 * us,
			RxStartDelay: 25 * us, MACHeader: 26,
			AMPDU: true, AMPDUMaxFrames: 64, AMPDUMaxBytes: 65535, MaxPPDU: 5484 * us},
		// 802.11ac VHT, 5 GHz, 80 MHz, 2 spatial streams, MCS 9, short GI = 866.7 Mbps.
		// Preamble L-STF 8 + L-LTF 8 + L-SIG 4 + VHT-SIG-A 8 + VHT-STF 4 + 2×VHT-LTF 4 + VHT-SIG-B 4 = 44 µs;
		// SIFS 16 (5 GHz OFDM), no signal extension; A-MPDU up to 64 MPDUs / 1048575 B.
		"ac": {Name: "ac", Description: "802.11ac 5 GHz 80 MHz 2SS MCS9 SGI (866.7 Mbps), A-MPDU", Kind: OFDM,
			Slot: 9 * us, SIFS: 16 * us, CWMin: 15, CWMax: 1023, RetryLimit: 7,
			DataRateMbps: 866.7, ControlRateMbps: 24, BroadcastRateMbps: 6,
			Rates:    []float64{65, 130, 195, 260, 390, 520, 585, 650, 780, 866.7}, // VHT MCS 0-9, 80 MHz, 2 SS, short GI (clause 21 MCS tables)
			Preamble: 44 * us, LegacyPreamble: 20 * us, Symbol: 3600, ShortGI: true,
			RxStartDelay: 25 * us, MACHeader: 26,
			AMPDU: true, AMPDUMaxFrames: 64, AMPDUMaxBytes: 1048575, MaxPPDU: 5484 * us},
	}
}

// Lookup returns the preset with the given name ("g", "11g" or "802.11g")
// or a clear error.
func Lookup(name string) (Preset, error) {
	ps := Presets()
	key := strings.ToLower(strings.TrimSpace(name))
	key = strings.TrimPrefix(strings.TrimPrefix(key, "802."), "11")
	p, ok := ps[key]
	if !ok {
		names := make([]string, 0, len(ps))
		for n := range ps {
			names = append(names, n)
		}
		sort.Strings(names)
		return Preset{}, fmt.Errorf("unknown PHY preset %q: use one of %s", name, strings.Join(names, ", "))
	}
	return p, nil
}

// DIFS is SIFS + 2 slots.
func (p Preset) DIFS() des.Time { return p.AIFS(2) }

// AIFS is SIFS + aifsn slots (802.11e); AIFS(2) = DIFS.
func (p Preset) AIFS(aifsn int) des.Time { return p.SIFS + des.Time(aifsn)*p.Slot }

// ACKTimeout is SIFS + slot + aPHY-RX-START-Delay (802.11-2016, ACK procedure).
func (p Preset) ACKTimeout() des.Time { return p.SIFS + p.Slot + p.RxStartDelay }

// MPDUBytes is the over-the-air size of a data MPDU carrying an MSDU (an IP
// packet) of msdu bytes: MAC header + LLC/SNAP + FCS.
func (p Preset) MPDUBytes(msdu int) int { return msdu + p.MACHeader + LLCSNAP + FCS }

// ofdmTime is the duration of an OFDM PPDU of n bytes at rate (Mbps) after
// the given preamble: 16 service + 8n + 6 tail bits in whole symbols.
func (p Preset) ofdmTime(preamble des.Time, symbol des.Time, shortGI bool, rateMbps float64, n int) des.Time {
	ndbps := math.Round(rateMbps * float64(symbol) / 1000)
	if ndbps < 1 {
		ndbps = 1
	}
	nsym := math.Ceil(float64(16+8*n+6) / ndbps)
	var body des.Time
	if shortGI {
		// TXTIME rounds the short-GI symbols up to whole 4 µs (long-GI) symbols.
		body = des.Time(math.Ceil(nsym*3.6/4)) * 4 * us
	} else {
		body = des.Time(nsym) * symbol
	}
	return preamble + body + p.SignalExt
}

func (p Preset) dsssTime(rateMbps float64, n int) des.Time {
	return p.LegacyPreamble + des.Time(math.Ceil(float64(8*n)/rateMbps*1000))
}

// legacyTime is a control or broadcast PPDU (non-HT format) of n bytes.
func (p Preset) legacyTime(rateMbps float64, n int) des.Time {
	if p.Kind == DSSS {
		return p.dsssTime(rateMbps, n)
	}
	return p.ofdmTime(p.LegacyPreamble, 4*us, false, rateMbps, n)
}

// DataTime is the duration of the PPDU carrying the given MPDUs (bytes each,
// from MPDUBytes) at rateMbps. With A-MPDU every MPDU gets a 4-byte delimiter
// and is padded to 4 bytes; without, exactly one MPDU is expected.
func (p Preset) DataTime(rateMbps float64, mpdus ...int) des.Time {
	if rateMbps <= 0 {
		rateMbps = p.DataRateMbps
	}
	n := 0
	if p.AMPDU {
		n = AMPDUBytes(mpdus...)
	} else {
		for _, m := range mpdus {
			n += m
		}
	}
	if p.Kind == DSSS {
		return p.dsssTime(rateMbps, n)
	}
	return p.ofdmTime(p.Preamble, p.Symbol, p.ShortGI, rateMbps, n)
}

// AMPDUBytes is the PSDU length of an A-MPDU of the given MPDUs.
func AMPDUBytes(mpdus ...int) int {
	n := 0
	for _, m := range mpdus {
		n += (delimiter + m + 3) &^ 3
	}
	return n
}

// MaxAMPDUBytes bounds an A-MPDU at rateMbps by the byte limit and by
// aPPDUMaxTime (whichever is smaller).
func (p Preset) MaxAMPDUBytes(rateMbps float64) int {
	if rateMbps <= 0 {
		rateMbps = p.DataRateMbps
	}
	b := p.AMPDUMaxBytes
	if p.MaxPPDU > 0 {
		if byTime := int(float64(p.MaxPPDU-p.Preamble) / 1000 * rateMbps / 8); byTime < b {
			b = byTime
		}
	}
	return b
}

// AckTime is the duration of the acknowledgement: an ACK, or a compressed
// BlockAck when the preset aggregates.
func (p Preset) AckTime() des.Time {
	if p.AMPDU {
		return p.legacyTime(p.ControlRateMbps, BlockAckBytes)
	}
	return p.legacyTime(p.ControlRateMbps, ACKBytes)
}

// BroadcastTime is the duration of a group-addressed frame (one MPDU, no ACK)
// at the broadcast rate.
func (p Preset) BroadcastTime(mpdu int) des.Time { return p.legacyTime(p.BroadcastRateMbps, mpdu) }

// SuccessTime is the medium busy time of an acknowledged transmission whose
// data PPDU lasts data: data + SIFS + ACK (the DIFS/AIFS that follows is
// counted by the medium as idle time before the next access).
func (p Preset) SuccessTime(data des.Time) des.Time { return data + p.SIFS + p.AckTime() }

// FailTime is the medium busy time of an unacknowledged attempt (collision or
// frame error): data + ACK timeout.
func (p Preset) FailTime(data des.Time) des.Time { return data + p.ACKTimeout() }

// Validate checks that a (possibly edited) preset is usable.
func (p Preset) Validate() error {
	switch {
	case p.Slot <= 0 || p.SIFS <= 0:
		return fmt.Errorf("phy %s: slot and SIFS must be positive", p.Name)
	case p.CWMin < 1 || p.CWMax < p.CWMin:
		return fmt.Errorf("phy %s: need 1 <= cwmin <= cwmax (got %d, %d)", p.Name, p.CWMin, p.CWMax)
	case p.RetryLimit < 1:
		return fmt.Errorf("phy %s: retry limit must be >= 1 (got %d)", p.Name, p.RetryLimit)
	case p.DataRateMbps <= 0 || p.ControlRateMbps <= 0 || p.BroadcastRateMbps <= 0:
		return fmt.Errorf("phy %s: rates must be positive", p.Name)
	case len(p.Rates) == 0 || !sort.Float64sAreSorted(p.Rates) || p.Rates[0] <= 0:
		return fmt.Errorf("phy %s: need a positive, ascending rate set", p.Name)
	case p.Kind == OFDM && p.Symbol <= 0:
		return fmt.Errorf("phy %s: OFDM needs a symbol time", p.Name)
	case p.AMPDU && (p.AMPDUMaxFrames < 1 || p.AMPDUMaxBytes < 1):
		return fmt.Errorf("phy %s: A-MPDU needs max frames and max bytes >= 1", p.Name)
	}
	return nil
}
