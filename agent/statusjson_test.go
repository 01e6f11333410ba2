package agent

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `coopcc agent status --json` speaks the monitor's language: snake_case
// keys with units, sender ids as hex strings, [] rather than null, no zero
// value standing for "none" (issue: "SRTT": 44131000, a zero "SentAt" for
// self, sender ids too large for jq).
func TestStatusJSONConventions(t *testing.T) {
	h := newHarness(t, nil)
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	sent := time.Unix(1_700_000_000, 5)
	h.peers.live = []PeerStatus{{Sender: 0xfedcba9876543210, Seq: 7, SentAt: sent, ActiveFlows: 1, SRTT: 44131 * time.Microsecond, DeliveryRate: 1e6}}
	h.a.Tick(time.Now())
	b, err := json.Marshal(h.a.Status())
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*(_Bps)?$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if !key.MatchString(k) && !strings.HasSuffix(path, ".messages") {
					t.Errorf("key %s.%s is not snake_case", path, k)
				}
				walk(path+"."+k, c)
			}
		case []any:
			for _, c := range x {
				walk(path+"[]", c)
			}
		case nil:
			t.Errorf("%s is null", path)
		}
	}
	walk("status", doc)
	m := doc.(map[string]any)
	self := m["self"].(map[string]any)
	if self["sender"] != "self" || self["sent_at"] != nil {
		t.Errorf("self: sender %v, sent_at %v (want \"self\" and no send time)", self["sender"], self["sent_at"])
	}
	peer := m["peers"].([]any)[0].(map[string]any)
	if peer["sender"] != "fedcba9876543210" || peer["srtt_us"] != 44131.0 || peer["min_rtt_us"] != nil {
		t.Errorf("peer %v: want hex sender, srtt_us 44131 and no min_rtt_us (unknown)", peer)
	}
	for _, list := range []string{"peers", "bounds", "bound_hits", "flows"} {
		if _, ok := m[list].([]any); !ok {
			t.Errorf("%s is %T, want a list", list, m[list])
		}
	}
	flow := m["flows"].([]any)[0].(map[string]any)
	if flow["src"] != "10.77.9.1:40000" || flow["srtt_us"] != 20000.0 || flow["min_rtt_us"] != 10000.0 {
		t.Errorf("flow %v", flow)
	}
}
