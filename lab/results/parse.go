package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coopcc/coopcc/lab/analysis"
)

// iperfJSON is the subset of iperf3 -J output we read.
type iperfJSON struct {
	Start struct {
		TestStart struct {
			Reverse int `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Sum struct {
			Start float64 `json:"start"`
			End   float64 `json:"end"`
			Bytes float64 `json:"bytes"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumSent *struct {
			Seconds     float64 `json:"seconds"`
			Bytes       float64 `json:"bytes"`
			Retransmits int     `json:"retransmits"`
		} `json:"sum_sent"`
		SumReceived *struct {
			Seconds float64 `json:"seconds"`
			Bytes   float64 `json:"bytes"`
		} `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

// ParseIperf reads one iperf3 -J report. A report that carries only an
// "error" (iperf3 failed) is returned with Error set, not as an error.
func ParseIperf(r io.Reader) (analysis.Iperf, error) {
	var j iperfJSON
	if err := json.NewDecoder(r).Decode(&j); err != nil {
		return analysis.Iperf{}, fmt.Errorf("not iperf3 -J output: %w", err)
	}
	ip := analysis.Iperf{Reverse: j.Start.TestStart.Reverse != 0, Error: j.Error}
	if s := j.End.SumReceived; s != nil {
		ip.ReceivedBytes, ip.ReceivedSeconds = s.Bytes, s.Seconds
	} else if j.Error == "" {
		return ip, errors.New("iperf3 report has no end.sum_received (was it a TCP test, run with -J to the end?)")
	}
	if s := j.End.SumSent; s != nil {
		ip.SentBytes, ip.Retransmits = s.Bytes, s.Retransmits
	}
	for _, iv := range j.Intervals {
		ip.Intervals = append(ip.Intervals, analysis.Interval{Start: iv.Sum.Start, End: iv.Sum.End, Bytes: iv.Sum.Bytes})
	}
	return ip, nil
}

// requiredFlowColumns must be in flows.csv's header; every other column of
// the contract is optional (zero when absent) and unknown columns are ignored.
var requiredFlowColumns = []string{"t_s", "netns", "src", "dst", "cwnd"}

// ParseFlowsCSV reads a monitor time series (flows.csv), selecting columns
// by header name, and returns one series per (netns, src, dst), each sorted
// by time, in order of first appearance. When t_s holds Unix times (the
// monitor's recorder writes those) they are rebased to the earliest one,
// which is returned as t0 (0 when the times were already relative).
func ParseFlowsCSV(r io.Reader) (flows []analysis.Series, t0 float64, err error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	col, err := readFlowHeader(cr)
	if err == io.EOF {
		return nil, 0, nil // empty: no flows
	}
	if err != nil {
		return nil, 0, err
	}
	flows, err = readFlowSeries(cr, col)
	if err != nil {
		return nil, 0, err
	}
	t0 = rebaseUnixTimes(flows)
	for fi := range flows {
		s := flows[fi].Samples
		sort.SliceStable(s, func(a, b int) bool { return s[a].T < s[b].T })
	}
	return flows, t0, nil
}

// readFlowHeader reads flows.csv's header as a column index by name and
// checks that it holds requiredFlowColumns. An empty file gives io.EOF
// itself.
func readFlowHeader(cr *csv.Reader) (map[string]int, error) {
	header, err := cr.Read()
	if err == io.EOF {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range requiredFlowColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("header lacks column %q (need at least %s)", c, strings.Join(requiredFlowColumns, ","))
		}
	}
	return col, nil
}

// readFlowSeries reads the rows of flows.csv after its header (columns by
// col) into one series per (netns, src, dst), in order of first
// appearance, the samples in the order of the rows.
func readFlowSeries(cr *csv.Reader, col map[string]int) ([]analysis.Series, error) {
	var flows []analysis.Series
	byKey := map[analysis.FlowKey]int{}
	line := 1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return flows, nil
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		key, s, err := parseFlowRow(rec, col, line)
		if err != nil {
			return nil, err
		}
		if s.Cwnd == 0 {
			// No TCP socket has a window of 0: the row is a time-wait mini
			// socket (a closed connection in FIN-WAIT-2 or TIME-WAIT, which
			// inet_diag lists without TCP info), whose zeroed counters
			// would end the series at bytes_acked 0. Recordings made before
			// the monitor skipped those hold such rows.
			continue
		}
		i, ok := byKey[key]
		if !ok {
			i = len(flows)
			byKey[key] = i
			flows = append(flows, analysis.Series{Key: key})
		}
		flows[i].Samples = append(flows[i].Samples, s)
	}
}

// parseFlowRow reads one row of flows.csv (columns by col; line is its
// line number, for errors): its flow's key and its sample.
func parseFlowRow(rec []string, col map[string]int, line int) (analysis.FlowKey, analysis.Sample, error) {
	p := rowParser{rec: rec, col: col, line: line}
	key := analysis.FlowKey{Station: p.str("netns"), Src: p.str("src"), Dst: p.str("dst")}
	s := analysis.Sample{
		T: p.float("t_s"), CC: p.str("cc"),
		Cwnd: p.u32("cwnd"), Ssthresh: p.u32("ssthresh"), MSS: p.u32("mss"),
		SRTT: p.us("srtt_us"), RTTVar: p.us("rttvar_us"), MinRTT: p.us("min_rtt_us"),
		CAState: uint8(p.u32("ca_state")), Retrans: p.u32("retrans"), TotalRetrans: p.u32("total_retrans"),
		Lost: p.u32("lost"), Sacked: p.u32("sacked"), Unacked: p.u32("unacked"), BytesAcked: p.u64("bytes_acked"),
		BytesReceived: p.u64("bytes_received"), DeliveryRate: p.float("delivery_rate_Bps"), AppLimited: p.bool("app_limited"),
	}
	return key, s, p.err
}

// rebaseUnixTimes makes the samples' times relative to the earliest one
// when they are Unix times, and returns that time; it returns 0 and leaves
// the times as they are when they are already relative (or there are none).
func rebaseUnixTimes(flows []analysis.Series) (t0 float64) {
	// Unix times: anything after 1973 is not "seconds since the run started".
	const unixThreshold = 1e8
	earliest := 0.0
	first := true
	for _, f := range flows {
		for _, s := range f.Samples {
			if first || s.T < earliest {
				earliest, first = s.T, false
			}
		}
	}
	if !first && earliest > unixThreshold {
		t0 = earliest
		for fi := range flows {
			for si := range flows[fi].Samples {
				flows[fi].Samples[si].T -= t0
			}
		}
	}
	return t0
}

// rowParser reads typed fields of one CSV record by column name; the first
// error sticks. Absent columns and empty fields read as zero.
type rowParser struct {
	rec  []string
	col  map[string]int
	line int
	err  error
}

func (p *rowParser) raw(name string) string {
	i, ok := p.col[name]
	if !ok || i >= len(p.rec) {
		return ""
	}
	return strings.TrimSpace(p.rec[i])
}

func (p *rowParser) str(name string) string { return p.raw(name) }

func (p *rowParser) fail(name, v, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("line %d, column %s: %q is not %s", p.line, name, v, want)
	}
}

func (p *rowParser) float(name string) float64 {
	v := p.raw(name)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.fail(name, v, "a number")
	}
	return f
}

func (p *rowParser) u64(name string) uint64 {
	v := p.raw(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		p.fail(name, v, "a non-negative integer")
	}
	return n
}

func (p *rowParser) u32(name string) uint32 {
	v := p.raw(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		p.fail(name, v, "a non-negative 32-bit integer")
	}
	return uint32(n)
}

func (p *rowParser) us(name string) time.Duration {
	return time.Duration(p.u64(name)) * time.Microsecond
}

func (p *rowParser) bool(name string) bool {
	switch v := p.raw(name); v {
	case "", "0", "false":
		return false
	case "1", "true":
		return true
	default:
		p.fail(name, v, "0/1 or true/false")
		return false
	}
}

// ParseBounds reads an agent's events file (JSON lines). Blank lines are skipped.
func ParseBounds(r io.Reader) ([]analysis.BoundEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []analysis.BoundEvent
	for line := 1; sc.Scan(); line++ {
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var ev analysis.BoundEvent
		if err := json.Unmarshal([]byte(b), &ev); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// csvTable reads a whole CSV with a header into a column index and records.
func csvTable(r io.Reader, required ...string) (map[string]int, [][]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 {
		return nil, nil, nil
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range required {
		if _, ok := col[c]; !ok {
			return nil, nil, fmt.Errorf("header lacks column %q", c)
		}
	}
	return col, recs[1:], nil
}

// ParseStationsCSV reads the emulator's stations.csv.
func ParseStationsCSV(r io.Reader) ([]analysis.EmuStation, error) {
	col, recs, err := csvTable(r, "station")
	if err != nil {
		return nil, err
	}
	out := make([]analysis.EmuStation, 0, len(recs))
	for i, rec := range recs {
		p := rowParser{rec: rec, col: col, line: i + 2}
		out = append(out, analysis.EmuStation{
			Station: p.str("station"), AirtimeS: p.float("airtime_s"), AirtimeShare: p.float("airtime_share"),
			Attempts: p.u64("attempts"), Collisions: p.u64("collisions"), Retries: p.u64("retries"), Drops: p.u64("drops"),
			TxFrames: p.u64("tx_frames"), TxBytes: p.u64("tx_bytes"), RxFrames: p.u64("rx_frames"), RxBytes: p.u64("rx_bytes"),
			QueueDrops: p.u64("queue_drops"), RetryDrops: p.u64("retry_drops"),
		})
		if p.err != nil {
			return nil, p.err
		}
	}
	return out, nil
}

// ParseRatesCSV reads the emulator's rates.csv (per-rate histogram).
func ParseRatesCSV(r io.Reader) ([]analysis.EmuRate, error) {
	col, recs, err := csvTable(r, "station", "rate_mbps")
	if err != nil {
		return nil, err
	}
	out := make([]analysis.EmuRate, 0, len(recs))
	for i, rec := range recs {
		p := rowParser{rec: rec, col: col, line: i + 2}
		out = append(out, analysis.EmuRate{Station: p.str("station"), RateControl: p.str("rate_control"), RateMbps: p.float("rate_mbps"),
			Attempts: p.u64("attempts"), Successes: p.u64("successes"), Frames: p.u64("frames"), AirtimeS: p.float("airtime_s")})
		if p.err != nil {
			return nil, p.err
		}
	}
	return out, nil
}

// ParseMediumCSV reads the emulator's medium.csv: t_s, busy_share and a
// <node>_share column per node.
func ParseMediumCSV(r io.Reader) ([]analysis.MediumSample, error) {
	col, recs, err := csvTable(r, "t_s", "busy_share")
	if err != nil {
		return nil, err
	}
	nodes := map[string]string{} // column → node
	for c := range col {
		if n, ok := strings.CutSuffix(c, "_share"); ok && c != "busy_share" {
			nodes[c] = n
		}
	}
	out := make([]analysis.MediumSample, 0, len(recs))
	for i, rec := range recs {
		p := rowParser{rec: rec, col: col, line: i + 2}
		m := analysis.MediumSample{T: p.float("t_s"), Busy: p.float("busy_share"), Share: make(map[string]float64, len(nodes))}
		for c, n := range nodes {
			m.Share[n] = p.float(c)
		}
		if p.err != nil {
			return nil, p.err
		}
		out = append(out, m)
	}
	return out, nil
}

// ParseAPQueueCSV reads the emulator's apqueue.csv.
func ParseAPQueueCSV(r io.Reader) ([]analysis.QueueSample, error) {
	col, recs, err := csvTable(r, "t_s", "frames")
	if err != nil {
		return nil, err
	}
	out := make([]analysis.QueueSample, 0, len(recs))
	for i, rec := range recs {
		p := rowParser{rec: rec, col: col, line: i + 2}
		out = append(out, analysis.QueueSample{T: p.float("t_s"), Frames: p.u64("frames"), Bytes: p.u64("bytes"), DropsTotal: p.u64("drops_total")})
		if p.err != nil {
			return nil, p.err
		}
	}
	return out, nil
}

// ParseEmuJSON reads the emulator's emu.json.
func ParseEmuJSON(r io.Reader) (*analysis.EmuStatus, error) {
	var st analysis.EmuStatus
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}
