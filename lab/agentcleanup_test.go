package lab

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/lab/scenario"
)

// killedAgentScenario is one terminal whose agent is SIGKILLed 2 s into a
// 5 s upload and not started again.
const killedAgentScenario = `
name = "killed-agent"
description = "one terminal, static hi=4: its agent killed at 2 s, not restarted"
modes = ["static"]

[wlan]
phy = "802.11g"

[wired]
delay = "4ms"

[terminals]
count = 1

[traffic]
duration = "5s"

[agent]
lease = "1s"
monitor_interval = "200ms"

[policy.static]
static_hi = 4

[[faults]]
kind = "kill"
terminals = [1]
at = "2s"
`

// An agent killed and not restarted leaves its state file and its
// receive-window program attached to the cgroup v2 root (fail open, by
// design); deleting its namespace does not detach the program. The lab
// cleans up after it before the namespace goes: the cleanup's log names
// the programs the state file listed, and none of them is loaded after
// the run.
func TestLabCleansUpAfterAKilledAgent(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	if testing.Short() {
		t.Skip("lab run with a killed agent (about 15 s)")
	}
	s, err := scenario.Parse([]byte(killedAgentScenario))
	if err != nil {
		t.Fatal(err)
	}
	out := runOnEmulator(t, s, 1)
	logs, err := filepath.Glob(filepath.Join(out, "runs", "*", "logs", "agent-sta1.cleanup.log"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("cleanup logs %v (%v); want sta1's", logs, err)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	ids := listedPrograms(t, text)
	if len(ids) == 0 || !strings.Contains(text, "sockops programs detached") {
		t.Fatalf("cleanup log:\n%s\nwant the killed agent's sockops programs listed and detached", text)
	}
	for _, id := range ids {
		if p, err := ebpf.NewProgramFromID(id); err == nil {
			info, _ := p.Info()
			p.Close()
			if info != nil && strings.HasPrefix(info.Name, "coopcc_") {
				t.Errorf("program %d (%s) still loaded after the run", id, info.Name)
			}
		}
	}
}

// listedPrograms reads the program ids of the cleanup log's first line
// ("...; sockops programs: 12 34").
func listedPrograms(t *testing.T, text string) []ebpf.ProgramID {
	t.Helper()
	first, _, _ := strings.Cut(text, "\n")
	_, list, ok := strings.Cut(first, "sockops programs:")
	if !ok {
		t.Fatalf("cleanup log's first line %q names no programs", first)
	}
	var ids []ebpf.ProgramID
	for _, f := range strings.Fields(list) {
		if n, err := strconv.ParseUint(f, 10, 32); err == nil {
			ids = append(ids, ebpf.ProgramID(n))
		}
	}
	return ids
}
