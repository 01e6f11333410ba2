package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/coopcc/coopcc/policy"
)

// The loop is tested here against in-memory stand-ins that record what the
// agent asked for; the integration test runs it against the real kernel.

type memFlows struct {
	flows []Flow
	err   error
}

func (m *memFlows) Snapshot() ([]Flow, error) { return m.flows, m.err }

type memDatapath struct {
	mu         sync.Mutex
	bounds     map[netip.Addr]DPBounds
	heartbeats int
	failSet    bool
	closed     bool
}

func (d *memDatapath) Set(dst netip.Addr, b DPBounds) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failSet && b != (DPBounds{}) {
		return errors.New("map full")
	}
	if d.bounds == nil {
		d.bounds = map[netip.Addr]DPBounds{}
	}
	d.bounds[dst] = b
	return nil
}
func (d *memDatapath) Delete(dst netip.Addr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.bounds, dst)
	return nil
}
func (d *memDatapath) Heartbeat() error { d.mu.Lock(); d.heartbeats++; d.mu.Unlock(); return nil }
func (d *memDatapath) Counters() (map[netip.Addr]DPCounters, error) {
	return map[netip.Addr]DPCounters{netip.MustParseAddr("10.77.9.254"): {HiApplied: 42}}, nil
}
func (d *memDatapath) Backend() string { return "test" }
func (d *memDatapath) Close() error    { d.closed = true; return nil }

type memPeers struct {
	live []PeerStatus
}

func (p *memPeers) ID() uint64                  { return 0x5e1f }
func (p *memPeers) Live(time.Time) []PeerStatus { return p.live }
func (p *memPeers) N(time.Time) int {
	n := 1
	for _, s := range p.live {
		if s.ActiveFlows > 0 {
			n++
		}
	}
	return n
}
func (p *memPeers) Counters() map[string]uint64 { return map[string]uint64{"ok": 7, "bad_mac": 1} }

// nPolicy bounds hi = 30/N for every flow and, when perDst is set, one
// destination separately; it panics when told to.
type nPolicy struct {
	perDst netip.Addr
	panics bool
	queue  uint32 // Decision.QueueSegments
	plan   policy.ProbePlan
	access bool   // Decision.Access
	probe  string // Decision.Probe
	mode   policy.Mode
	rev    bool // Decision.Reversed
	last   View
}

func (p *nPolicy) Name() string { return "ntest" }
func (p *nPolicy) Decide(v View) Decision {
	if p.panics {
		panic("boom")
	}
	p.last = v
	n := 1 + len(v.Peers)
	d := Decision{Active: len(v.Flows) > 0, Default: PBounds{Hi: uint32(30 / n)}, Reason: "30/N", QueueSegments: p.queue, Mode: p.mode, Reversed: p.rev,
		Plan: p.plan, Access: p.access, Probe: p.probe}
	if p.mode == policy.ModeCompeting {
		d.Default = PBounds{Lo: 20}
	}
	if p.perDst.IsValid() {
		d.PerDst = map[netip.Addr]PBounds{p.perDst: {Lo: 2, Hi: 5}}
	}
	return d
}

// dst1 is the destination of the test flows.
var dst1 = netip.MustParseAddr("10.77.9.254")

func flow(src, dst string, cwnd uint32) Flow {
	return Flow{Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst), State: 1, Cwnd: cwnd, MSS: 1448,
		SRTT: 20 * time.Millisecond, MinRTT: 10 * time.Millisecond, Unacked: 10, DeliveryRate: 1e6}
}

type harness struct {
	a      *Agent
	flows  *memFlows
	dp     *memDatapath
	peers  *memPeers
	pol    *nPolicy
	events string
}

func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	cfg := Defaults()
	cfg.Iface, cfg.Group.KeyFile = "wlan0", "key"
	if mod != nil {
		mod(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := &harness{flows: &memFlows{}, dp: &memDatapath{}, peers: &memPeers{}, pol: &nPolicy{}}
	h.events = filepath.Join(t.TempDir(), "events.jsonl")
	ev, err := OpenEventLog(h.events)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	a, err := New(cfg, Deps{Flows: h.flows, Datapath: h.dp, Peers: h.peers, Events: ev,
		NewPolicy:  func(string, map[string]any) (Policy, error) { return h.pol, nil },
		IfaceAddrs: func(string) ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("10.77.9.1")}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.a = a
	return h
}

func (h *harness) readEvents(t *testing.T) []Event {
	t.Helper()
	b, err := os.ReadFile(h.events)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event line %q: %v", sc.Text(), err)
		}
		evs = append(evs, e)
	}
	return evs
}

func TestTickWritesBoundsEventsAndHeartbeat(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.peers.live = []PeerStatus{{ActiveFlows: 1}, {ActiveFlows: 2}}
	now := time.Unix(1_700_000_000, 0)
	h.a.Tick(now)
	// Not every flow is managed (iface filter): the default applies per
	// managed destination and the host-wide entry stays unbounded.
	if got := h.dp.bounds[dst1]; got != (DPBounds{Hi: 10}) {
		t.Fatalf("bounds of %v: %+v, want hi 10 (30/N, N=3)", dst1, got)
	}
	if got := h.dp.bounds[netip.Addr{}]; got != (DPBounds{}) {
		t.Fatalf("host-wide default %+v, want unbounded", got)
	}
	h.a.Tick(now.Add(time.Second)) // unchanged: no new event, still a heartbeat
	if h.dp.heartbeats != 2 {
		t.Fatalf("heartbeats %d, want one per tick", h.dp.heartbeats)
	}
	evs := h.readEvents(t)
	if len(evs) != 1 || evs[0].Hi != 10 || evs[0].N != 3 || evs[0].Policy != "ntest" || evs[0].Dst != "10.77.9.254" || evs[0].Reason != "30/N" {
		t.Fatalf("events %+v", evs)
	}
	raw, _ := os.ReadFile(h.events)
	if !strings.Contains(string(raw), `"t":"2023-11-14T22:13:20Z"`) {
		t.Fatalf("event time not RFC3339Nano UTC: %s", raw)
	}

	// The policy's own per-destination bound wins over its default.
	h.pol.perDst = dst1
	h.a.Tick(now.Add(2 * time.Second))
	if got := h.dp.bounds[dst1]; got != (DPBounds{Lo: 2, Hi: 5}) {
		t.Fatalf("per-dst bounds %+v", got)
	}
	// The flow moves to another destination: the old entry is deleted.
	h.pol.perDst = netip.Addr{}
	h.flows.flows = []Flow{flow("10.77.9.1:40001", "10.77.9.253:5201", 40)}
	h.a.Tick(now.Add(3 * time.Second))
	if _, ok := h.dp.bounds[dst1]; ok {
		t.Fatal("stale destination was not deleted")
	}
	if got := h.dp.bounds[netip.MustParseAddr("10.77.9.253")]; got != (DPBounds{Hi: 10}) {
		t.Fatalf("new destination %+v", got)
	}
	evs = h.readEvents(t)
	if len(evs) != 4 || evs[2].Dst != "10.77.9.253" || evs[3].Dst != "10.77.9.254" || evs[3].Hi != 0 || evs[3].Reason != "no managed flow to this destination" {
		t.Fatalf("events %+v", evs)
	}

	// Own status for the peer protocol.
	own := h.a.OwnStatus()
	if own.ActiveFlows != 1 || own.Cwnd != 40 || own.Hi != 10 || own.Policy != "ntest" || own.MinRTT != 10*time.Millisecond {
		t.Fatalf("own status %+v", own)
	}
}

func TestHostWideDefaultWhenEveryFlowIsManaged(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Managed.Iface = "-" })
	h.flows.flows = []Flow{flow("10.88.0.1:40000", "10.77.9.254:5201", 40)}
	h.a.Tick(time.Now())
	if got := h.dp.bounds[netip.Addr{}]; got != (DPBounds{Hi: 30}) {
		t.Fatalf("host-wide default %+v, want hi 30", got)
	}
	if _, ok := h.dp.bounds[dst1]; ok {
		t.Fatal("per-destination entry written although the default covers it")
	}
	if evs := h.readEvents(t); len(evs) != 1 || evs[0].Dst != "" {
		t.Fatalf("events %+v", evs)
	}
}

func TestFilterManagedFlows(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Managed.Ports = []uint16{5201}; c.Managed.Dst = []string{"10.77.0.0/16"} })
	h.flows.flows = []Flow{
		flow("10.77.9.1:40000", "10.77.9.254:5201", 40), // managed
		flow("10.77.9.1:40001", "10.77.9.254:22", 40),   // wrong port
		flow("10.88.0.1:40002", "10.77.9.254:5201", 40), // other interface
		flow("10.77.9.1:40003", "10.99.0.1:5201", 40),   // destination not managed
	}
	closed := flow("10.77.9.1:40004", "10.77.9.254:5201", 40)
	closed.State = 8
	h.flows.flows = append(h.flows.flows, closed)
	h.a.Tick(time.Now())
	st := h.a.Status()
	if len(st.Flows) != 1 || st.Flows[0].Src != "10.77.9.1:40000" {
		t.Fatalf("managed flows %+v", st.Flows)
	}
}

func TestMonitorErrorFailsOpen(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.a.Tick(time.Now())
	if h.dp.bounds[dst1].Hi == 0 {
		t.Fatal("no bound set")
	}
	hb := h.dp.heartbeats
	h.flows.err = errors.New("netlink: permission denied")
	h.a.Tick(time.Now())
	if b := h.dp.bounds[dst1]; b != (DPBounds{}) {
		t.Fatalf("monitor error left bounds %+v", b)
	}
	if h.dp.heartbeats != hb {
		t.Fatal("heartbeat refreshed although the monitor failed")
	}
	st := h.a.Status()
	if st.Counts.MonitorErrors != 1 || !strings.Contains(st.LastError, "permission denied") {
		t.Fatalf("status %+v", st)
	}
	// Recovery.
	h.flows.err = nil
	h.a.Tick(time.Now())
	if h.dp.bounds[dst1].Hi == 0 {
		t.Fatal("bounds not restored after the monitor recovered")
	}
}

func TestDatapathErrorFailsOpen(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.dp.failSet = true
	h.a.Tick(time.Now())
	if h.dp.heartbeats != 0 {
		t.Fatal("heartbeat refreshed after a failed write")
	}
	if h.a.Status().Counts.DatapathErrors != 1 {
		t.Fatal("datapath error not counted")
	}
	h.dp.failSet = false
	h.a.Tick(time.Now())
	if h.dp.bounds[dst1].Hi != 30 || h.dp.heartbeats != 1 {
		t.Fatalf("not recovered: %+v hb %d", h.dp.bounds, h.dp.heartbeats)
	}
}

func TestPolicyPanicFailsOpen(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.a.Tick(time.Now())
	h.pol.panics = true
	h.a.Tick(time.Now())
	if b := h.dp.bounds[dst1]; b != (DPBounds{}) {
		t.Fatalf("policy panic left bounds %+v", b)
	}
	if h.a.Status().Counts.PolicyPanics != 1 {
		t.Fatal("panic not counted")
	}
}

func TestGuardOverridesPolicy(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Guard.Enabled = true
		c.Guard.OnWindow.Duration, c.Guard.OffWindow.Duration, c.Guard.Settle.Duration = 2*time.Second, 2*time.Second, 0
	})
	f := flow("10.77.9.1:40000", "10.77.9.254:5201", 40)
	h.flows.flows = []Flow{f}
	t0 := time.Unix(1000, 0)
	for i := range 12 { // 6 s: on window, then probe
		// Control on gives 1 MB/s, off gives 2 MB/s: bounds cost 50 %.
		// The agent measures an upload's rate by the bytes acknowledged
		// since the previous tick (0.5 s).
		rate := 1e6
		if h.dp.bounds[dst1].Hi == 0 && i > 0 {
			rate = 2e6
		}
		h.flows.flows[0].DeliveryRate = uint64(rate)
		h.flows.flows[0].BytesAcked += uint64(rate / 2)
		h.a.Tick(t0.Add(time.Duration(i) * 500 * time.Millisecond))
	}
	st := h.a.Status()
	if st.Guard == nil || st.Guard.State != policy.GuardDisabled || st.PolicyOn {
		t.Fatalf("guard: %+v policy on %v", st.Guard, st.PolicyOn)
	}
	if b := h.dp.bounds[dst1]; b != (DPBounds{}) {
		t.Fatalf("guard disabled control but bounds %+v remain", b)
	}
	if !strings.HasPrefix(st.Reason, "guard: ") {
		t.Fatalf("reason %q", st.Reason)
	}
}

// TestPolicyModeIsReported: the policy's mode reaches the status, the
// metrics (a gauge per mode and a counter of entries into competitive
// mode) and every bounds event; fail-open events carry none.
func TestPolicyModeIsReported(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	now := time.Unix(1_700_000_000, 0)
	for i, m := range []policy.Mode{policy.ModeCooperative, policy.ModeCompeting, policy.ModeCompeting, policy.ModeCooperative, policy.ModeCompeting} {
		h.pol.mode, h.pol.rev = m, i == 3 // tick 3 ends competitive mode for not paying
		h.a.Tick(now.Add(time.Duration(i) * time.Second))
		if st := h.a.Status(); st.Mode != string(m) {
			t.Fatalf("tick %d: status mode %q, want %q", i, st.Mode, m)
		}
	}
	if c := h.a.Status().Counts.CompetingEntries; c != 2 {
		t.Errorf("competing entries %d, want 2 (ticks 1 and 4)", c)
	}
	if c := h.a.Status().Counts.CompetingReversals; c != 1 {
		t.Errorf("competing reversals %d, want 1 (tick 3)", c)
	}
	var modes []string
	for _, e := range h.readEvents(t) {
		modes = append(modes, e.Mode)
	}
	if want := []string{"cooperative", "competing", "cooperative", "competing"}; !slices.Equal(modes, want) {
		t.Errorf("events' modes %q, want %q (one event per change of bounds)", modes, want)
	}
	var buf bytes.Buffer
	PrintStatus(&buf, h.a.Status())
	if !strings.Contains(buf.String(), "ntest (bounding, competing, competed 2 times (1 ended for not paying))") {
		t.Errorf("status text lacks the mode and the count:\n%s", buf.String())
	}
	h.a.clearAll("shutdown")
	if evs := h.readEvents(t); evs[len(evs)-1].Mode != "" || evs[len(evs)-1].Reason != "shutdown" {
		t.Errorf("the shutdown's event %+v: want no mode", evs[len(evs)-1])
	}

	fams := scrape(t, h.a)
	got := map[string]float64{}
	for _, m := range fams["coopcc_policy_mode"].GetMetric() {
		got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if got["competing"] != 1 || got["cooperative"] != 0 {
		t.Errorf("coopcc_policy_mode %v, want competing 1, cooperative 0", got)
	}
	if v := fams["coopcc_policy_competing_entries_total"].GetMetric()[0].GetCounter().GetValue(); v != 2 {
		t.Errorf("coopcc_policy_competing_entries_total %v, want 2", v)
	}
	if v := fams["coopcc_policy_competing_reversals_total"].GetMetric()[0].GetCounter().GetValue(); v != 1 {
		t.Errorf("coopcc_policy_competing_reversals_total %v, want 1", v)
	}
}

// scrape serves a's metrics on a loopback port, fetches them once and
// parses them as Prometheus text.
func scrape(t *testing.T, a *Agent) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, addr, err := a.serveMetrics(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	body := httpGet(t, "http://"+addr+"/metrics")
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("metrics are not valid Prometheus text: %v\n%s", err, body)
	}
	return fams
}

func TestMetricsParseAsPrometheusText(t *testing.T) {
	h := newHarness(t, nil)
	h.a.deps.LinkRate = func(string) (float64, error) { return 54, nil }
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.peers.live = []PeerStatus{{ActiveFlows: 1}}
	h.a.Tick(time.Now())
	fams := scrape(t, h.a)
	want := map[string]float64{"coopcc_peers_n": 2, "coopcc_flow_cwnd_segments": 40, "coopcc_flow_bound_hi_segments": 15, "coopcc_link_rate_bits_per_second": 54e6}
	for name, v := range want {
		f, ok := fams[name]
		if !ok {
			t.Fatalf("missing %s", name)
		}
		if got := f.GetMetric()[0].GetGauge().GetValue(); got != v {
			t.Fatalf("%s = %v, want %v", name, got, v)
		}
	}
	for _, name := range []string{"coopcc_bound_hits_total", "coopcc_protocol_messages_total", "coopcc_policy_active", "coopcc_guard_state", "process_resident_memory_bytes"} {
		if _, ok := fams[name]; !ok {
			t.Fatalf("missing %s", name)
		}
	}
}

// The learned queue per contender and the group's split are exported
// where the policy advertises a learned queue, and absent where it does not.
func TestMetricsQueueAndSplit(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.a.Tick(time.Now())
	fams := scrape(t, h.a)
	for _, name := range []string{"coopcc_policy_queue_segments", "coopcc_policy_shares"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s exported with no learned queue", name)
		}
	}
	h.pol.queue, h.pol.access = 32, true
	h.a.Tick(time.Now())
	fams = scrape(t, h.a)
	if f, ok := fams["coopcc_policy_queue_segments"]; !ok || f.GetMetric()[0].GetGauge().GetValue() != 32 {
		t.Fatalf("coopcc_policy_queue_segments %v, want 32", f)
	}
	got := map[string]float64{}
	for _, m := range fams["coopcc_policy_shares"].GetMetric() {
		got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if got["per_access"] != 1 || got["equal_rates"] != 0 {
		t.Errorf("coopcc_policy_shares %v, want per_access 1, equal_rates 0", got)
	}
}

func TestStatusSocket(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.a.Tick(time.Now())
	sock := filepath.Join(t.TempDir(), "a.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := h.a.serveStatus(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	r, err := QueryStatus(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.a.serveStatus(ctx, sock); err == nil || !strings.Contains(err.Error(), "in use by another agent") {
		t.Fatalf("second server on a live socket: %v", err)
	}
	if r.Backend != "test" || r.N != 1 || len(r.Flows) != 1 || len(r.Bounds) != 2 || len(r.Hits) != 1 || r.Hits[0].HiHits != 42 || r.Messages["bad_mac"] != 1 {
		t.Fatalf("status %+v", r)
	}
	var buf bytes.Buffer
	PrintStatus(&buf, r)
	for _, s := range []string{"policy", "ntest", "backend", "test", "N", "default"} {
		if !strings.Contains(buf.String(), s) {
			t.Fatalf("status text lacks %q:\n%s", s, buf.String())
		}
	}
	stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatal("socket file left behind")
	}
	if _, err := QueryStatus(ctx, sock); err == nil || !strings.Contains(err.Error(), "no agent answers") {
		t.Fatalf("query without agent: %v", err)
	}
}

func TestSecondInstanceRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second lock: %v", err)
	}
	l.Release()
	l2, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
}

func TestRunClearsBoundsOnShutdown(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Monitor.Interval.Duration = 20 * time.Millisecond
		c.Datapath.Lease.Duration = time.Second
	})
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.a.Run(ctx) }()
	time.Sleep(100 * time.Millisecond)
	h.dp.mu.Lock()
	hi := h.dp.bounds[dst1].Hi
	h.dp.mu.Unlock()
	if hi != 30 {
		t.Fatalf("bounds while running: %d", hi)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b := h.dp.bounds[dst1]; b != (DPBounds{}) {
		t.Fatalf("bounds after shutdown %+v", b)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestReloadKeepsUnchangedPolicy(t *testing.T) {
	builds := 0
	cfg := Defaults()
	cfg.Iface, cfg.Group.KeyFile, cfg.Policy.Name = "wlan0", "k", "static"
	cfg.Policy.Params = map[string]any{"static_hi": int64(7)}
	a, err := New(cfg, Deps{Flows: &memFlows{}, Datapath: &memDatapath{}, Peers: &memPeers{},
		NewPolicy: func(string, map[string]any) (Policy, error) { builds++; return &nPolicy{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Monitor.Interval.Duration = time.Second
	if _, err := a.Reload(cfg); err != nil || builds != 1 {
		t.Fatalf("reload with the same policy rebuilt it: builds %d, %v", builds, err)
	}
	cfg.Policy.Params = map[string]any{"static_hi": int64(8)}
	if _, err := a.Reload(cfg); err != nil || builds != 2 {
		t.Fatalf("changed params not applied: builds %d, %v", builds, err)
	}
}

// TestIdleFlowHasNoRate: an idle flow (nothing unacked or queued, e.g.
// iperf3's control connection) keeps a stale delivery-rate sample in
// TCP_INFO; the policy must see it as app-limited with rate 0, or it reserves
// part of the terminal's share for a flow that sends nothing.
func TestIdleFlowHasNoRate(t *testing.T) {
	h := newHarness(t, nil)
	idle := flow("10.77.9.1:40001", "10.77.9.254:5201", 10)
	idle.Unacked, idle.DeliveryRate = 0, 1.2e6
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40), idle}
	h.a.Tick(time.Unix(1_700_000_000, 0))
	fs := h.pol.last.Flows
	if len(fs) != 2 || fs[0].DeliveryRate != 1e6 || fs[0].AppLimited || fs[1].DeliveryRate != 0 || !fs[1].AppLimited {
		t.Fatalf("flows seen by the policy %+v, want the bulk one at 1e6 B/s and the idle one app-limited at 0", fs)
	}
	// The status's min RTT is the path's: the idle connection to the same
	// destination saw a smaller one; one to another destination does not count.
	idle.MinRTT = 4 * time.Millisecond
	other := flow("10.77.9.1:40002", "10.77.9.253:5201", 10)
	other.Unacked, other.MinRTT = 0, time.Millisecond
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40), idle, other}
	h.a.Tick(time.Unix(1_700_000_001, 0))
	if own := h.a.OwnStatus(); own.MinRTT != 4*time.Millisecond || own.ActiveFlows != 1 || own.SRTT != 20*time.Millisecond {
		t.Fatalf("own status %+v, want min RTT 4ms (the idle flow on the same path), 1 active flow, srtt 20ms", own)
	}
}

// TestLinkRateReachesPolicyAndPeers: the WLAN interface's PHY rate is read
// every tick, given to the policy, sent to the peers (kbit/s) and shown in
// the status; the peers' rates reach the policy in Mbit/s; an interface that
// reports none is 0, not an error of the tick.
func TestLinkRateReachesPolicyAndPeers(t *testing.T) {
	h := newHarness(t, nil)
	var asked string
	h.a.deps.LinkRate = func(iface string) (float64, error) { asked = iface; return 54, nil }
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.peers.live = []PeerStatus{{ActiveFlows: 1, LinkRate: 12000}}
	now := time.Unix(1_700_000_000, 0)
	h.a.Tick(now)
	if asked != "wlan0" || h.pol.last.LinkRate != 54 || h.pol.last.Peers[0].LinkRate != 12 {
		t.Fatalf("asked %q; policy saw own %v, peer %v Mbit/s; want wlan0, 54, 12", asked, h.pol.last.LinkRate, h.pol.last.Peers[0].LinkRate)
	}
	if got := h.a.OwnStatus().LinkRate; got != 54000 {
		t.Errorf("own status link rate %d kbit/s, want 54000", got)
	}
	if got := h.a.Status().Own.LinkRateKbps; got != 54000 {
		t.Errorf("status JSON link_rate_kbps %d, want 54000", got)
	}
	h.a.deps.LinkRate = func(string) (float64, error) { return 0, errors.New("no such device") }
	h.a.Tick(now.Add(time.Second))
	if h.pol.last.LinkRate != 0 || h.a.OwnStatus().LinkRate != 0 || h.a.Status().Counts.MonitorErrors != 0 {
		t.Errorf("unreadable link: policy %v, own %d, monitor errors %d; want 0, 0, 0", h.pol.last.LinkRate, h.a.OwnStatus().LinkRate, h.a.Status().Counts.MonitorErrors)
	}
}

func TestLinkSmoother(t *testing.T) {
	var l linkSmoother
	if got := l.observe(54); got != 54 {
		t.Fatalf("first reading %v, want 54", got)
	}
	if got := l.observe(24); math.Abs(got-45) > 1e-9 {
		t.Errorf("54 then 24: %v, want 54 + 0.3 × (24 − 54) = 45", got)
	}
	for range 20 {
		l.observe(24)
	}
	if got := l.observe(24); math.Abs(got-24) > 0.1 {
		t.Errorf("after 20 readings of 24: %v", got)
	}
	if got := l.observe(0); got != 0 {
		t.Errorf("no reading: %v, want 0 (unknown)", got)
	}
}

// At debug level every tick's decision is logged with its reason, also
// when no bound changes (the bounds events are written only on a change);
// at the default level none is.
func TestDebugLogsEveryDecision(t *testing.T) {
	for _, level := range []string{"debug", "info"} {
		var buf bytes.Buffer
		lg, _ := NewLogger(LogConfig{Format: "json", Level: level}, &buf)
		h := newHarness(t, nil)
		h.a.log = lg
		h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
		now := time.Unix(1_700_000_000, 0)
		for i := range 3 {
			h.a.Tick(now.Add(time.Duration(i) * time.Second))
		}
		n := strings.Count(buf.String(), `"msg":"decision"`)
		if want := map[string]int{"debug": 3, "info": 0}[level]; n != want || (want > 0 && !strings.Contains(buf.String(), `"reason":"30/N"`)) {
			t.Errorf("level %s: %d decision records, want %d with the reason:\n%s", level, n, want, buf.String())
		}
	}
}

// The policy's view carries the flows' recent peak rate (View.PeakRate), and
// a lower bound sized for it gets through the cap on lower bounds although
// the flow delivers nothing this tick (a competitive floor after a stall).
func TestViewCarriesTheRecentPeakRate(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	now := time.Unix(1_700_000_000, 0)
	h.a.Tick(now) // the first tick takes the kernel's delivery rate, 1 MB/s
	if got := h.pol.last.PeakRate; got != 1e6 {
		t.Fatalf("peak after the first tick: %v, want 1e6", got)
	}
	h.pol.mode = policy.ModeCompeting // lo 20
	h.a.Tick(now.Add(time.Second))    // nothing acknowledged since: rate 0
	if got := h.pol.last.PeakRate; got < 0.98e6 || got >= 1e6 {
		t.Fatalf("peak a second later: %v, want 1e6 decayed by a second of its half-life", got)
	}
	if got := h.dp.bounds[dst1].Lo; got != 20 {
		t.Fatalf("lower bound %d, want the policy's 20 (without the peak the cap on today's delivery is %d)", got, policy.MinLoCap)
	}
}
