package schema

import (
	"encoding/json"
	"fmt"
	"time"
)

// RunVersion is the version of the run record this code writes (run.json's
// "schema"). Records without the field (0) were written before it existed;
// they hold the same fields under the same names and are read as version 1.
// A record of a later version is refused: its fields may mean something this
// code does not know.
const RunVersion = 1

// ServerName is the server node's name in a results directory: the suffix
// of its namespace, its key in Sysctls, and its agent's bound events
// (bounds/srv.jsonl) where Run.ServerAgent is set.
const ServerName = "srv"

// Run is run.json: one run of a scenario as the lab runner recorded it
// (OUT/runs/<run-id>/run.json). The runner writes it last, so a run directory
// without it is still running or was interrupted.
type Run struct {
	Schema   int     `json:"schema"` // RunVersion of the writer (0 = before versioning)
	ID       string  `json:"id"`     // e.g. "mode=coop,n=10,delay=256ms,rep=1"
	Mode     string  `json:"mode"`
	ModeKind string  `json:"mode_kind"` // kernel | policy | static
	Policy   string  `json:"policy,omitempty"`
	N        int     `json:"n"`
	DelayMS  float64 `json:"delay_ms"` // the swept wired delay (added round trip)
	Rep      int     `json:"rep"`      // 1-based repetition
	// Params holds the value of every sweep axis by axis name, formatted as
	// in the run id.
	Params        map[string]string `json:"params"`
	Stations      []Station         `json:"stations"`
	Server        string            `json:"server_addr"`
	Valid         bool              `json:"valid"`
	InvalidReason string            `json:"invalid_reason"`
	DurationS     float64           `json:"duration_s"` // wall time of the traffic phase
	LengthS       float64           `json:"length_s"`   // scheduled traffic length
	// Start is when the run began (before the testbed was built).
	Start time.Time `json:"start"`
	// TrafficStart is the zero of the traffic schedule (start_s, stop_s,
	// launched_s): after the testbed is up and the agents have settled.
	// Zero in records written before the lab recorded it.
	TrafficStart time.Time `json:"traffic_start"`
	End          time.Time `json:"end"`
	Backend      string    `json:"backend"`   // emu | veth
	Direction    string    `json:"direction"` // up | down | mixed (stations differ)
	WLAN         WLAN      `json:"wlan"`
	Wired        Wired     `json:"wired"`
	// PolicyParams are the scenario's [policy.NAME] values for the run's
	// policy, as TOML decoded them.
	PolicyParams map[string]any `json:"policy_params,omitempty"`
	// ServerAgent: an agent ran in the server's namespace and bounded what
	// it sent to the managed stations (scenario agent.on = "server").
	ServerAgent bool `json:"server_agent,omitempty"`
	// Sysctls holds the recorded sysctls per namespace (by node name) as
	// read after the agents started.
	Sysctls map[string]map[string]string `json:"sysctls,omitempty"`
	// Emu is the emulator's emu.json, verbatim.
	Emu        json.RawMessage    `json:"emu,omitempty"`
	SampleHz   float64            `json:"sample_hz"`
	Errors     []string           `json:"errors,omitempty"`
	Warnings   []string           `json:"warnings,omitempty"`
	GoodputBps map[string]float64 `json:"goodput_bps,omitempty"` // iperf3's receiver-side figure, per station
	// Faults are the scenario's [[faults]] of this run and what the runner
	// did for each, when (docs/scenarios.md, Faults); absent without faults.
	Faults []Fault `json:"faults,omitempty"`
}

// Fault is one fault of a run as asked ([[faults]], times scaled like the
// traffic) and as injected (Events).
type Fault struct {
	Index    int      `json:"index"` // position in the scenario's [[faults]]
	Kind     string   `json:"kind"`  // kill | drop | clock_skew | insider
	Set      string   `json:"set,omitempty"`
	Stations []string `json:"stations"`
	// AtS, UntilS and RestartS are scheduled times, seconds after
	// Run.TrafficStart: a drop's or an insider's start and end, a kill's
	// kill and restart (0 = none).
	AtS      float64 `json:"at_s"`
	UntilS   float64 `json:"until_s,omitempty"`
	RestartS float64 `json:"restart_s,omitempty"`
	// Direction ("in", "out", "both") and Fraction of a drop.
	Direction string  `json:"direction,omitempty"`
	Fraction  float64 `json:"fraction,omitempty"`
	// SkewS is a clock_skew's offset (negative: behind).
	SkewS float64 `json:"skew_s,omitempty"`
	// Insider is the status an insider broadcasts.
	Insider *InsiderStatus `json:"insider,omitempty"`
	// Skipped says why the fault was not injected (a mode without agents);
	// "" = it was.
	Skipped string       `json:"skipped,omitempty"`
	Events  []FaultEvent `json:"events"`
}

// InsiderStatus is what an insider fault reports (coopcc peer send).
type InsiderStatus struct {
	RateBps    float64 `json:"rate_bps"` // delivery rate and capability, bit/s
	SRTTMS     float64 `json:"srtt_ms"`
	MinRTTMS   float64 `json:"min_rtt_ms"`
	Flows      int     `json:"flows"`
	Cwnd       int     `json:"cwnd"`
	IntervalMS float64 `json:"interval_ms"`
}

// FaultEvent is one action of a fault as it fired.
type FaultEvent struct {
	// Action: kill, restart (kill), drop_start, drop_stop (drop), skew (an
	// agent started with a skewed clock), insider_start, insider_stop.
	Action  string    `json:"action"`
	Station string    `json:"station,omitempty"`
	T       time.Time `json:"t"`
	// TS is T in seconds after Run.TrafficStart (negative before it: a
	// skewed agent starts before the traffic).
	TS  float64 `json:"t_s"`
	Pid int     `json:"pid,omitempty"` // the process killed or started
	// Seen and Dropped count the status datagrams a drop's filter matched
	// and dropped (drop_stop).
	Seen    uint64 `json:"seen,omitempty"`
	Dropped uint64 `json:"dropped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// AgentSample is one line of a run's agents.jsonl: a managed station's
// agent as the lab read its status socket (runs of scenarios with
// [[faults]]). Up false = no answer (killed, not restarted yet).
type AgentSample struct {
	T            time.Time `json:"t"`
	Station      string    `json:"station"`
	Up           bool      `json:"up"`
	N            int       `json:"n"`
	Peers        int       `json:"peers"` // live peers heard
	PolicyActive bool      `json:"policy_active"`
	// Lo and Hi are the bounds the datapath holds for the server (its
	// destination entry, else the default entry); 0 = none.
	Lo uint32 `json:"lo"`
	Hi uint32 `json:"hi"`
	// Flows and BoundedFlows count the managed flows and those a bound
	// really applies to (agent status: lo or hi non-zero).
	Flows        int    `json:"flows"`
	BoundedFlows int    `json:"bounded_flows"`
	Error        string `json:"error,omitempty"`
}

// Station is one terminal in run.json.
type Station struct {
	Name    string `json:"name"` // sta1..staN, also its namespace
	Addr    string `json:"addr,omitempty"`
	Group   string `json:"group,omitempty"` // the scenario's terminal group ("managed", "phone-ac", ...)
	Managed bool   `json:"managed"`         // runs the mode: the coopcc agent's bounds (policy modes), the mode's CC (kernel modes); false for the hosts outside it
	Agent   bool   `json:"agent"`           // an agent actually ran in this station's namespace (policy modes, agent on the terminals)
	CC      string `json:"cc,omitempty"`
	// CCVia says how the CC was applied: "iperf3 -C" (per socket; the
	// namespace default may differ, see sysctls) or "agent" (the agent's
	// datapath installs its bounded CUBIC as the namespace default).
	CCVia string `json:"cc_via,omitempty"`
	// StartS and StopS are the station's scheduled traffic window, seconds
	// after Run.TrafficStart.
	StartS       float64 `json:"start_s"`
	StopS        float64 `json:"stop_s"`
	PHYMbps      float64 `json:"phy_mbps"`
	FER          float64 `json:"fer"`
	Mobility     string  `json:"mobility,omitempty"` // "" = static
	ExtraDelayMS float64 `json:"extra_delay_ms"`
	Port         int     `json:"port,omitempty"`
	// MaxMbps is the station's throughput when alone (Maxᵢ of the weighted
	// fairness index, papers/003), from the scenario's terminal group;
	// 0 = unknown (the analysis then looks for reference runs).
	MaxMbps float64 `json:"max_mbps,omitempty"`
	// Direction is the station's traffic: "up" (it sends) or "down" (the
	// server sends to it); "" in records written before mixed runs.
	Direction string `json:"direction,omitempty"`
	// RateControl, PER and Sysctl are the scenario's per-terminal settings
	// (the sysctls as asked; the values read back are in Run.Sysctls).
	RateControl string             `json:"rate_control,omitempty"`
	PER         map[string]float64 `json:"per,omitempty"`
	Sysctl      map[string]string  `json:"sysctl,omitempty"`
	// PolicyParams are the --param values the station's agent got (the
	// run's policy_params with its group's and a swept bound multiplier's
	// applied); absent for stations without an agent.
	PolicyParams map[string]any `json:"policy_params,omitempty"`
	// LaunchedS and ExitedS are when the lab started the station's iperf3
	// client and when it exited, seconds after TrafficStart (0 = not
	// recorded). iperf3 counts its -t from its own test start, so a client
	// whose connection setup was slow runs later than scheduled.
	LaunchedS float64 `json:"launched_s"`
	ExitedS   float64 `json:"exited_s"`
}

// WLAN is the emulated medium of a run.
type WLAN struct {
	PHY          string  `json:"phy"`            // 802.11b | 802.11g | 802.11n | 802.11ac
	DataMbps     float64 `json:"data_mbps"`      // default PHY data rate (0 = the preset's)
	APQueue      string  `json:"ap_queue"`       // fifo | rr | priority
	APQueueSize  int     `json:"ap_queue_size"`  // frames
	StaQueueSize int     `json:"sta_queue_size"` // frames (station transmit queue)
	FER          float64 `json:"fer"`            // frame error rate, all stations
	RetryLimit   int     `json:"retry_limit"`    // 0 = the preset's
	AMPDUMax     int     `json:"ampdu_max"`      // frames per A-MPDU, 802.11n/ac (0 = the preset's)
	// NeighbourMbps is another network's offered load on the channel (0 = none).
	NeighbourMbps float64 `json:"neighbour_mbps,omitempty"`
	// AirtimeBSSRx: the terminals' airtime counters told their own network's frames apart.
	AirtimeBSSRx bool `json:"airtime_bss_rx,omitempty"`
}

// Wired is the wired pipe of a run in plain units.
type Wired struct {
	RateBps   float64 `json:"rate_bps"` // 0 = unlimited
	DelayMS   float64 `json:"delay_ms"`
	QueueSize int     `json:"queue_size"`
	Loss      float64 `json:"loss"`
}

// DecodeRun decodes a run.json. It accepts records of RunVersion and the
// unversioned ones written before, and refuses later versions with an error
// saying so.
func DecodeRun(b []byte) (Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return Run{}, fmt.Errorf("malformed JSON: %w", err)
	}
	if r.Schema > RunVersion {
		return Run{}, fmt.Errorf("run record schema %d is newer than this coopcc reads (%d): report it with the coopcc that wrote it", r.Schema, RunVersion)
	}
	return r, nil
}
