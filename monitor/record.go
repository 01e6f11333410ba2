package monitor

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// column is one field of a recorded time series. Its name carries its unit.
type column struct {
	name   string
	str    bool // a string value (quoted in JSON)
	append func(b []byte, f *Flow) []byte
}

func appendU(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }
func appendUs(b []byte, d time.Duration) []byte {
	return strconv.AppendInt(b, int64(d/time.Microsecond), 10)
}

// columns after t_s and netns. The first ones are the contract's; the
// rest are extra. Keep names stable: readers select by name.
var columns = []column{
	{"src", true, func(b []byte, f *Flow) []byte { return f.Src.AppendTo(b) }},
	{"dst", true, func(b []byte, f *Flow) []byte { return f.Dst.AppendTo(b) }},
	{"cc", true, func(b []byte, f *Flow) []byte { return append(b, f.CC...) }},
	{"cwnd", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.Cwnd)) }},
	{"ssthresh", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.Ssthresh)) }},
	{"mss", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.MSS)) }},
	{"srtt_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.SRTT) }},
	{"rttvar_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.RTTVar) }},
	{"min_rtt_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.MinRTT) }},
	{"ca_state", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.CAState)) }},
	{"retrans", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.Retransmits)) }},
	{"total_retrans", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.TotalRetrans)) }},
	{"lost", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.Lost)) }},
	{"unacked", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.Unacked)) }},
	{"bytes_acked", false, func(b []byte, f *Flow) []byte { return appendU(b, f.BytesAcked) }},
	{"delivery_rate_Bps", false, func(b []byte, f *Flow) []byte { return appendU(b, f.DeliveryRate) }},
	{"app_limited", false, func(b []byte, f *Flow) []byte {
		if f.AppLimited {
			return append(b, '1')
		}
		return append(b, '0')
	}},
	{"state", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.State)) }},
	{"sacked", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.Sacked)) }},
	{"bytes_sent", false, func(b []byte, f *Flow) []byte { return appendU(b, f.BytesSent) }},
	{"bytes_received", false, func(b []byte, f *Flow) []byte { return appendU(b, f.BytesReceived) }},
	{"delivered_segs", false, func(b []byte, f *Flow) []byte { return appendU(b, f.Delivered) }},
	{"pacing_rate_Bps", false, func(b []byte, f *Flow) []byte { return appendU(b, f.PacingRate) }},
	{"notsent_bytes", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.NotSent)) }},
	{"busy_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.BusyTime) }},
	{"rwnd_limited_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.RwndLimited) }},
	{"sndbuf_limited_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.SndbufLimited) }},
	{"wmem_queued_bytes", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.WmemQueued)) }},
	{"rcv_rtt_us", false, func(b []byte, f *Flow) []byte { return appendUs(b, f.RcvRTT) }},
	{"rcv_space_bytes", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.RcvSpace)) }},
	{"rcv_wnd_bytes", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.RcvWnd)) }},
	{"snd_wnd_bytes", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.SndWnd)) }},
	{"cookie", false, func(b []byte, f *Flow) []byte { return appendU(b, f.Cookie) }},
	{"iface", true, func(b []byte, f *Flow) []byte { return append(b, f.Iface...) }},
	{"segs_in", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.SegsIn)) }},
	{"data_segs_in", false, func(b []byte, f *Flow) []byte { return appendU(b, uint64(f.DataSegsIn)) }},
}

// CSVHeader is the header line (without newline) of a recorded CSV: t_s is
// Unix time in seconds (microsecond resolution), the units of the other
// columns are in their names (_us microseconds, _Bps bytes per second,
// _bytes / bytes_ bytes, _segs and cwnd/ssthresh/lost/unacked/sacked/retrans
// segments, mss bytes; ca_state 0 Open 1 Disorder 2 CWR 3 Recovery 4 Loss;
// state is the TCP state number, 1 = ESTABLISHED).
func CSVHeader() string {
	names := []string{"t_s", "netns"}
	for _, c := range columns {
		names = append(names, c.name)
	}
	return strings.Join(names, ",")
}

// CSVWriter writes flows as CSV rows, one per flow and snapshot, under the
// header CSVHeader (written before the first rows). It is not safe for
// concurrent use.
type CSVWriter struct {
	w       io.Writer
	netns   string
	buf     []byte
	started bool
}

// NewCSVWriter returns a writer whose rows carry netns in the netns column.
func NewCSVWriter(w io.Writer, netns string) *CSVWriter {
	return &CSVWriter{w: w, netns: csvField(netns)}
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// Write appends one row per flow, all stamped t, in a single write call.
func (c *CSVWriter) Write(t time.Time, flows []Flow) error {
	b := c.buf[:0]
	if !c.started {
		b = append(b, CSVHeader()...)
		b = append(b, '\n')
		c.started = true
	}
	ts := appendTime(nil, t)
	for i := range flows {
		b = append(b, ts...)
		b = append(b, ',')
		b = append(b, c.netns...)
		for _, col := range columns {
			b = append(b, ',')
			b = col.append(b, &flows[i])
		}
		b = append(b, '\n')
	}
	c.buf = b
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("write CSV rows: %w", err)
	}
	return nil
}

func appendTime(b []byte, t time.Time) []byte {
	return strconv.AppendFloat(b, float64(t.UnixMicro())/1e6, 'f', 6, 64)
}

// JSONLWriter writes flows as JSON lines, one object per flow and
// snapshot, with the same keys (and units) as the CSV columns.
type JSONLWriter struct {
	w     io.Writer
	netns []byte
	buf   []byte
}

// NewJSONLWriter returns a JSON-lines writer whose objects carry netns.
func NewJSONLWriter(w io.Writer, netns string) *JSONLWriter {
	return &JSONLWriter{w: w, netns: appendJSONString(nil, netns)}
}

// Write appends one line per flow, all stamped t, in a single write call.
func (j *JSONLWriter) Write(t time.Time, flows []Flow) error {
	b := j.buf[:0]
	ts := appendTime(nil, t)
	for i := range flows {
		b = append(b, `{"t_s":`...)
		b = append(b, ts...)
		b = append(b, `,"netns":`...)
		b = append(b, j.netns...)
		b = appendJSONFields(b, &flows[i])
		b = append(b, "}\n"...)
	}
	j.buf = b
	if _, err := j.w.Write(b); err != nil {
		return fmt.Errorf("write JSON lines: %w", err)
	}
	return nil
}

// appendJSONFields appends `,"src":...` and every other column of f.
func appendJSONFields(b []byte, f *Flow) []byte {
	for _, col := range columns {
		b = append(b, `,"`...)
		b = append(b, col.name...)
		b = append(b, `":`...)
		if col.str {
			b = appendJSONString(b, string(col.append(nil, f)))
		} else {
			b = col.append(b, f)
		}
	}
	return b
}

// MarshalSnapshot returns one snapshot as a JSON document
// {"t_s":..,"netns":"..","flows":[{..},..]} whose flow objects have the
// CSV columns' keys and units.
func MarshalSnapshot(t time.Time, netns string, flows []Flow) []byte {
	b := append([]byte(`{"t_s":`), appendTime(nil, t)...)
	b = append(b, `,"netns":`...)
	b = appendJSONString(b, netns)
	b = append(b, `,"flows":[`...)
	for i := range flows {
		if i > 0 {
			b = append(b, ',')
		}
		fb := appendJSONFields(nil, &flows[i])
		b = append(b, '{')
		b = append(b, fb[1:]...) // drop the leading comma
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

// appendJSONString appends s as a JSON string (strconv.Quote's \x escapes
// are not JSON).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
