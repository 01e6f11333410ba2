package agent

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/coopcc/coopcc/policy"
)

// download is a receiving flow: nothing in flight of its own, bytes received
// growing, a receive-side RTT and an advertised window.
func download(src, dst string, rcvd uint64) Flow {
	f := flow(src, dst, 10)
	f.Unacked, f.DeliveryRate, f.Cookie = 0, 0, 7
	f.BytesReceived, f.RcvRTT, f.RcvWnd, f.RcvMSS = rcvd, 30*time.Millisecond, 29_000, 1448
	return f
}

// A download is seen by the policy as a flow of this terminal: the remote
// sender as destination, the receive rate measured between ticks, the
// receive-side RTT as SRTT, what the sender has in flight (rate × RTT) as
// cwnd; the own status
// carries it in the download fields.
func TestDownloadSeenByPolicyAndStatus(t *testing.T) {
	h := newHarness(t, nil)
	t0 := time.Unix(1_700_000_000, 0)
	h.flows.flows = []Flow{download("10.77.9.1:40000", "10.77.9.254:5201", 1_000_000)}
	h.a.Tick(t0)
	if fs := h.pol.last.Flows; len(fs) != 1 || fs[0].DeliveryRate != 0 {
		t.Fatalf("first tick %+v: no rate before two samples", fs)
	}
	// iperf3's control connection to the same server, idle, measured the
	// empty path at setup: its min RTT is the download's base RTT too.
	ctl := flow("10.77.9.1:39999", "10.77.9.254:5201", 10)
	ctl.Unacked, ctl.MinRTT, ctl.Cookie = 0, 4*time.Millisecond, 8
	h.flows.flows = []Flow{download("10.77.9.1:40000", "10.77.9.254:5201", 1_500_000), ctl}
	h.a.Tick(t0.Add(500 * time.Millisecond))
	fs := h.pol.last.Flows
	if len(fs) != 2 {
		t.Fatalf("flows %+v", fs)
	}
	f := fs[0]
	if f.Dst != dst1 || f.DeliveryRate != 1e6 || f.SRTT != 30*time.Millisecond || f.MinRTT != 4*time.Millisecond || f.Cwnd != 21 || f.AppLimited {
		t.Fatalf("download seen as %+v, want dst %v, 1e6 B/s, srtt 30ms, base 4ms (the path's), cwnd 21 (1e6 B/s × 30 ms / 1448 B, not the advertised window), not app-limited", f, dst1)
	}
	own := h.a.OwnStatus()
	if own.DownFlows != 1 || own.DownRate != 1_000_000 || own.DownSRTT != 30*time.Millisecond || own.MinRTT != 4*time.Millisecond || own.ActiveFlows != 0 {
		t.Fatalf("own status %+v, want 1 download at 1e6 B/s, srtt 30ms, no upload", own)
	}
	if own.RcvHi != 30 { // nPolicy: hi 30/N on the host-wide default
		t.Errorf("own receive bound %d, want 30", own.RcvHi)
	}
}

// A peer that only downloads counts in the policy's view like an uploader:
// its download flows, receive rate and receive-side RTT.
func TestPeerViewMergesDownloads(t *testing.T) {
	p := PeerStatus{DownFlows: 2, DownRate: 3e6, DownSRTT: 80 * time.Millisecond, MinRTT: 20 * time.Millisecond, AppLimited: true}
	v := peerView(p)
	if v.ActiveFlows != 2 || v.DeliveryRate != 3e6 || v.SRTT != 80*time.Millisecond || v.MinRTT != 20*time.Millisecond || v.AppLimited {
		t.Fatalf("peer view %+v", v)
	}
	p.ActiveFlows, p.DeliveryRate, p.SRTT = 1, 1e6, 100*time.Millisecond
	if v := peerView(p); v.ActiveFlows != 3 || v.DeliveryRate != 4e6 || v.SRTT != 100*time.Millisecond {
		t.Fatalf("both directions %+v, want 3 flows, 4e6 B/s, the larger srtt", v)
	}
}

// bothSides writes every bound to both datapaths, Hi only on the receive side.
func TestBothSidesAppliesHiToReceive(t *testing.T) {
	send, recv := &memDatapath{}, &memDatapath{}
	b := bothSides{send: send, recv: recv}
	if err := b.Set(dst1, DPBounds{Lo: 3, Hi: 12}); err != nil {
		t.Fatal(err)
	}
	if send.bounds[dst1] != (DPBounds{Lo: 3, Hi: 12}) || recv.bounds[dst1] != (DPBounds{Hi: 12}) {
		t.Fatalf("send %+v recv %+v", send.bounds, recv.bounds)
	}
	if err := b.Heartbeat(); err != nil || send.heartbeats != 1 || recv.heartbeats != 1 {
		t.Fatalf("heartbeat %v: %d %d", err, send.heartbeats, recv.heartbeats)
	}
	c, err := b.Counters()
	if err != nil || c[dst1].HiApplied != 84 {
		t.Fatalf("counters %+v %v, want the two sides' hi hits summed (84)", c, err)
	}
	if b.Backend() != "test+test" {
		t.Errorf("backend %q", b.Backend())
	}
	recv.failSet = true
	if err := b.Set(netip.Addr{}, DPBounds{Hi: 4}); err == nil {
		t.Error("a receive-side failure was not reported")
	}
	if err := b.Close(); err != nil || !send.closed || !recv.closed {
		t.Fatalf("close %v", err)
	}
}

// An upload's rate, for the policy and in the status sent to peers, is its
// goodput between ticks (bytes acknowledged), not TCP_INFO's delivery-rate
// sample, which block acks inflate; a flow's first tick has only the sample,
// and the view says so (RateSampled).
func TestUploadRateIsGoodputBetweenTicks(t *testing.T) {
	h := newHarness(t, nil)
	t0 := time.Unix(1_700_000_000, 0)
	up := flow("10.77.9.1:40000", "10.77.9.254:5201", 40)
	up.Cookie, up.DeliveryRate, up.BytesAcked = 9, 33e6, 10_000_000
	h.flows.flows = []Flow{up}
	h.a.Tick(t0)
	if fs := h.pol.last.Flows; len(fs) != 1 || fs[0].DeliveryRate != 33e6 || !fs[0].RateSampled {
		t.Fatalf("first tick %+v: want the delivery-rate sample (33e6), marked sampled", fs)
	}
	up.BytesAcked += 2_500_000 // 5 MB/s over 0.5 s; the sample still says 33 MB/s
	h.flows.flows = []Flow{up}
	h.a.Tick(t0.Add(500 * time.Millisecond))
	if fs := h.pol.last.Flows; len(fs) != 1 || fs[0].DeliveryRate != 5e6 || fs[0].RateSampled {
		t.Fatalf("second tick %+v: want the goodput 5e6, not marked sampled", fs)
	}
	if own := h.a.OwnStatus(); own.DeliveryRate != 5e6 {
		t.Fatalf("own status delivery rate %d, want the goodput 5e6", own.DeliveryRate)
	}
}

// The queue per contender a policy advertises goes into the own status (TLV
// 15), so does the probe it announces (TLVs 18 and 19) and the group's
// split, the plan's too (TLV 20), and the peers' reach the policy with
// their sender ids, as does this terminal's own id; the status report
// shows the splits.
func TestQueueSegmentsAdvertisedAndHeard(t *testing.T) {
	h := newHarness(t, nil)
	h.pol.queue, h.pol.plan, h.pol.access = 32, policy.ProbePlan{Epoch: 7, Segments: 128, From: 5, Access: true}, true
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.peers.live = []PeerStatus{
		{Sender: 0xbeef, ActiveFlows: 1, QueueSegments: 8, PlanEpoch: 6, PlanSegments: 2, PlanFrom: 5, PlanAccessShares: true},
		{Sender: 0xcafe, ActiveFlows: 1, QueueSegments: 8, AccessShares: true},
	}
	h.a.Tick(time.Unix(1_700_000_000, 0))
	if own := h.a.OwnStatus(); own.QueueSegments != 32 || own.PlanEpoch != 7 || own.PlanSegments != 128 || own.PlanFrom != 5 {
		t.Fatalf("own status queue segments %d, plan %d in epoch %d from %d, want the policy's 32, 128 in 7 from 5", own.QueueSegments, own.PlanSegments, own.PlanEpoch, own.PlanFrom)
	} else if !own.AccessShares || !own.PlanAccessShares {
		t.Fatalf("own status shares per access %v, plan's %v, want the policy's true, true", own.AccessShares, own.PlanAccessShares)
	}
	ps := h.pol.last.Peers
	if len(ps) != 2 || ps[0].QueueSegments != 8 || ps[0].ID != 0xbeef || ps[0].Plan != (policy.ProbePlan{Epoch: 6, Segments: 2, From: 5, Access: true}) || ps[0].Access {
		t.Fatalf("peers as the policy saw them: %+v, want queue segments 8, id 0xbeef, plan 2 in epoch 6 from 5 per access, equal rates learned", ps)
	}
	if ps[1].ID != 0xcafe || !ps[1].Access || ps[1].Plan != (policy.ProbePlan{}) {
		t.Fatalf("second peer as the policy saw it: %+v, want id 0xcafe, per access learned, no plan", ps[1])
	}
	if h.pol.last.ID != h.peers.ID() {
		t.Fatalf("own id in the view %#x, want the node's %#x", h.pol.last.ID, h.peers.ID())
	}
	b, err := json.Marshal(h.a.Status())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Self  map[string]any   `json:"self"`
		Peers []map[string]any `json:"peers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Self["access_shares"] != true || doc.Self["plan_access_shares"] != true || doc.Self["plan_from"] != 5.0 {
		t.Errorf("self in the status report: %v, want access_shares, plan_access_shares and plan_from 5", doc.Self)
	}
	if len(doc.Peers) != 2 {
		t.Fatalf("peers in the status report: %v", doc.Peers)
	}
	want := map[any][2]any{"000000000000beef": {nil, true}, "000000000000cafe": {true, nil}} // false: absent
	for _, p := range doc.Peers {
		if w, ok := want[p["sender"]]; !ok || p["access_shares"] != w[0] || p["plan_access_shares"] != w[1] {
			t.Errorf("peer %v in the status report: access_shares %v, plan_access_shares %v, want %v", p["sender"], p["access_shares"], p["plan_access_shares"], w)
		}
	}
}

// What the queue probe did at a tick (Decision.Probe) is logged at info
// level with the learned value; a tick where it did nothing logs nothing.
func TestQueueProbeNoteLogged(t *testing.T) {
	h := newHarness(t, nil)
	var buf bytes.Buffer
	h.a.log = slog.New(slog.NewJSONHandler(&buf, nil))
	h.pol.queue = 8
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	h.a.Tick(time.Unix(1_700_000_000, 0))
	h.pol.probe = "queue probe 2 → 8 segments per contender: delivery ×1.120 (±0.030), adopted"
	h.a.Tick(time.Unix(1_700_000_001, 0))
	var got []map[string]any
	for _, l := range logLines(t, &buf) {
		if l["msg"] == MsgQueueProbe {
			got = append(got, l)
		}
	}
	if len(got) != 1 || got[0]["note"] != h.pol.probe || got[0]["queue_segments"] != 8.0 || got[0]["access_shares"] != false || got[0]["level"] != "INFO" {
		t.Fatalf("queue probe lines %v, want one at info with the note, 8 segments and equal rates", got)
	}
}
