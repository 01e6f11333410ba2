package lab

import (
	"path/filepath"
	"testing"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/lab/results"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/schema"
)

// serverAgentScenario is one download, 8 s, with the agent on the server:
// a static policy that pins the sender's cwnd at 6 segments, against cubic.
const serverAgentScenario = `
name = "server-agent"
modes = ["cubic", "static"]
[wlan]
phy = "802.11g"
[wired]
rate = "100Mbps"
delay = "4ms"
[terminals]
count = 1
[traffic]
direction = "down"
duration = "8s"
[agent]
on = "server"
[policy.static]
static_lo = 6
static_hi = 6
`

// TestServerAgentEndToEnd runs a download with agent.on = "server" on the
// emulator: the server's agent must bound the cwnd of what the server sends
// (pinned at 6 segments; cubic's grows past 12 on the same path), the
// terminal must run no agent, and the server's bound events must end with
// the flow unbounded.
func TestServerAgentEndToEnd(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	if testing.Short() {
		t.Skip("end-to-end lab run (about 40 s)")
	}
	s, err := scenario.Parse([]byte(serverAgentScenario))
	if err != nil {
		t.Fatal(err)
	}
	out := runOnEmulator(t, s, 2)
	// maxCwnd is the largest cwnd of sta1's data flow (the server's
	// socket) from 1 s after its first sample.
	maxCwnd := func(id string) (uint32, schema.Run, map[string][]schema.BoundEvent) {
		t.Helper()
		run, _, err := results.LoadRun(filepath.Join(out, "runs", id))
		if err != nil {
			t.Fatal(err)
		}
		if !run.Info.Valid {
			t.Logf("%s marked invalid: %s (allowed on a loaded machine)", id, run.Info.InvalidReason)
		}
		data := dataFlow(t, run, "sta1")
		var m uint32
		for _, sm := range data.Samples {
			if sm.T > data.Samples[0].T+1 {
				m = max(m, sm.Cwnd)
			}
		}
		return m, run.Info, run.Bounds
	}
	cubic, cubicInfo, _ := maxCwnd("mode=cubic,n=1,delay=4ms,rep=1")
	if cubic <= 12 {
		t.Errorf("cubic: the server's cwnd never passed 12 segments (max %d): the path cannot tell a bound from none", cubic)
	}
	if cubicInfo.ServerAgent {
		t.Errorf("cubic run recorded a server agent")
	}
	pinned, info, bounds := maxCwnd("mode=static,n=1,delay=4ms,rep=1")
	if pinned > 6 {
		t.Errorf("static on the server: cwnd reached %d segments, want <= 6", pinned)
	}
	if !info.ServerAgent || len(info.Stations) != 1 || info.Stations[0].Agent || !info.Stations[0].Managed {
		t.Errorf("run.json: server_agent %v, stations %+v; want a server agent and a managed station without one", info.ServerAgent, info.Stations)
	}
	evs := bounds[schema.ServerName]
	if len(evs) == 0 {
		t.Fatalf("no bound events of the server's agent (bounds/srv.jsonl); have %v", keys(bounds))
	}
	if len(bounds) != 1 {
		t.Errorf("bound events of %v; want the server's only", keys(bounds))
	}
	set := false
	for _, e := range evs {
		set = set || (e.Lo == 6 && e.Hi == 6)
	}
	if last := evs[len(evs)-1]; !set || last.Lo != 0 || last.Hi != 0 {
		t.Errorf("server's bound events %+v: want lo = hi = 6, then 0/0 at the end", evs)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
